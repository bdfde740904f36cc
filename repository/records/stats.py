"""Usage statistics following the COUNTER Code of Practice Release 5 and Make Data Count.

A record read (its landing page, its API representation in any format) is an investigation (`views`), a file
download a request (`downloads`, and the file's size in `volume`). The views tell what was asked (HEAD, and a Range
that does not start at byte 0, continue a download already counted: they are not passed here); this module leaves
out robots and crawlers (the COUNTER robots list, `counter-robots`), keeps each event in a buffer of this process
(the request path writes nothing, but one batch every few seconds) and writes them to `usage_events` without the
client's address: a keyed hash of the visitor (the user, else address and user agent, for one day) and of COUNTER's
session (the visitor and the hour). The worker's pass then aggregates them into `usage_totals`, per version and per
concept: a click of a visitor on an item within 30 s of their previous one on it counts once (double-click
filter), and the uniques count the sessions that touched an item.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import logging
import threading
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import counter_robots  # type: ignore[import-untyped]  # no type information shipped
from sqlalchemy import (
    BigInteger,
    Boolean,
    Connection,
    DateTime,
    Integer,
    String,
    Text,
    TextualSelect,
    bindparam,
    insert,
    select,
    text,
    update,
)

from repository.storage import Database
from repository.storage.locks import try_lock
from repository.storage.tables.usage import usage_events, usage_totals

log = logging.getLogger(__name__)

VIEW, DOWNLOAD = "view", "download"
DOUBLE_CLICK = timedelta(seconds=30)  # COUNTER R5 §7.2: clicks on one item by one user within 30 s are one
FLUSH_AGE = timedelta(seconds=5)  # a buffer older than this is written by the next event (the scaled shape's
FLUSH_SIZE = 500  # web processes run no worker pass), or when it holds this many events
BATCH = 2000  # events aggregated per transaction
COUNTS = ("views", "unique_views", "downloads", "unique_downloads", "volume")
NO_COUNTS = (0, 0, 0, 0, 0)
_TOTAL = {VIEW: 0, DOWNLOAD: 2}  # position in COUNTS of a kind's total; its unique count follows


@dataclass(frozen=True)
class Visit:
    """Who made a request and when: the signed-in user (a token or a browser session), else the client's address and
    user agent (never stored, only hashed)."""

    user_id: int | None
    address: str
    user_agent: str
    when: datetime


@functools.lru_cache(maxsize=1024)
def is_robot(user_agent: str) -> bool:
    """Whether the COUNTER robots list names this user agent (an empty one included)."""
    return bool(counter_robots.is_robot(user_agent))


class Usage:
    """Counts investigations and requests: `view()` and `download()` on the request path, `on_pass()` in the
    worker's pass (writes this process's buffer, then aggregates every process's events)."""

    def __init__(self, db: Database, secret: bytes) -> None:
        self.db = db
        self._secret = secret
        self._buffer: list[dict] = []
        self._lock = threading.Lock()

    def view(self, row: dict, visit: Visit) -> None:
        """Record `row` (a records row) investigated by `visit`."""
        self._add(VIEW, row, "", 0, visit)

    def download(self, row: dict, file_key: str, size: int, visit: Visit) -> None:
        """Record file `file_key` (of `size` bytes) of record `row` requested by `visit`."""
        self._add(DOWNLOAD, row, file_key, size, visit)

    def _add(self, kind: str, row: dict, file_key: str, size: int, visit: Visit) -> None:
        if is_robot(visit.user_agent):
            return
        visitor, session = self._keys(visit)
        event = {"kind": kind, "recid": row["id"], "conceptrecid": row["conceptrecid"], "file_key": file_key,
                 "visitor": visitor, "session": session, "created": visit.when, "size": size, "counted": None}
        with self._lock:
            self._buffer.append(event)
            due = len(self._buffer) >= FLUSH_SIZE or visit.when - self._buffer[0]["created"] >= FLUSH_AGE
        if due:
            try:
                self.flush()
            except Exception:  # noqa: BLE001 - kept in the buffer for the next flush; never a failed read
                log.exception("usage events not written (kept for the next attempt)")

    def _keys(self, visit: Visit) -> tuple[str, str]:
        """The visitor of this day and COUNTER's session (R5 §7.3: the visitor, the date and the hour), hashed with
        the instance's secret so that neither can be traced back to an address by trying them all."""
        who = f"user:{visit.user_id}" if visit.user_id is not None else f"client:{visit.address}|{visit.user_agent}"
        return _hashed_keys(self._secret, who, visit.when.strftime("%Y-%m-%d"), visit.when.strftime("%H"))

    def flush(self) -> int:
        """Write this process's buffered events; returns how many."""
        with self._lock:
            events, self._buffer = self._buffer, []
        if not events:
            return 0
        try:
            with self.db.write() as conn:
                conn.execute(insert(usage_events), events)
        except Exception:
            with self._lock:  # kept for the next flush rather than lost
                self._buffer[:0] = events
            raise
        return len(events)

    def on_pass(self) -> int:
        """The worker's pass: write the buffer, then aggregate what every process wrote; returns events aggregated."""
        self.flush()
        done = aggregated = self.aggregate()
        while aggregated == BATCH:
            aggregated = self.aggregate()
            done += aggregated
        return done

    def aggregate(self) -> int:
        """Add pending events (at most BATCH) to the totals of their version and concept; returns how many. One
        process at a time (the others skip): the double-click filter compares each event with its neighbours.
        The neighbours the batch can meet are read once (`_Neighbours`) and the batch is decided in memory, then
        written in two statements: a few queries a batch instead of seven an event (which cost as much CPU as
        serving the read that made the event)."""
        with self.db.write() as conn:
            if not try_lock(conn, "usage-aggregation"):
                return 0
            pending = [dict(event) for event in conn.execute(
                select(usage_events).where(usage_events.c.counted.is_(None))
                .order_by(usage_events.c.created, usage_events.c.id).limit(BATCH)
            ).mappings()]  # fmt: skip
            if not pending:
                return 0
            neighbours = _Neighbours.read(conn, pending)
            deltas: dict[int, list[int]] = defaultdict(lambda: [0] * len(COUNTS))
            for event in pending:
                _aggregate_event(neighbours, event, deltas)
            _write_counted(conn, neighbours.decided)
            _add_to_totals(conn, deltas)
        return len(pending)


_ClickKey = tuple[str, int, str, str]  # visitor, recid, kind, file_key: the clicks the double-click filter compares


@dataclass
class _Click:
    """An aggregated event (its `counted` decided) as the double-click filter sees it."""

    id: int
    created: datetime
    counted: bool
    size: int


class _Neighbours:
    """What the events of a batch are compared with, read in a few queries: for each click key of the batch (visitor,
    version, kind, file) the last aggregated click before the batch, the aggregated clicks from the batch's first
    instant to the key's last one, and the first after that; and which of the batch's sessions were seen already on
    its versions and concepts. Kept up to date as the batch's own events are decided, in the order the per-event
    queries saw them. Each key and session is one index search (joined with the batch's keys as a VALUES list), as in
    the per-event queries, never a scan of a busy visitor's or session's whole history or of a 30 s window."""

    def __init__(self) -> None:
        self.before: dict[_ClickKey, datetime] = {}  # the last aggregated click before the batch's first instant
        self.clicks: dict[_ClickKey, list[_Click]] = defaultdict(list)  # aggregated clicks from that instant on
        self.seen: set[tuple[str, str, int, str]] = set()
        self.decided: dict[int, bool] = {}  # event id -> counted, to write
        self._read: set[int] = set()  # ids of the clicks read (a padded VALUES list repeats its last key)

    @classmethod
    def read(cls, conn: Connection, pending: list[dict]) -> _Neighbours:
        found = cls()
        last: dict[_ClickKey, datetime] = {}
        for event in pending:  # in order of `created`
            last[_click_key(event)] = event["created"]
        as_time, time_type = _time_parameter(conn), _time_type(conn)
        low = {"low": pending[0]["created"]}  # every event before it is aggregated already
        later: set[int] = set()
        for keys in _chunks(sorted(last)):
            rows = [(*key, as_time(last[key])) for key in keys]
            size, parameters = _padded(len(rows)), {**_rows(rows), **low}
            for row in conn.execute(_clicks_query(size, "before", time_type), parameters):
                if row.created is not None:
                    found.before[(row.visitor, row.recid, row.kind, row.file_key)] = row.created
            for row in conn.execute(_clicks_query(size, "within", time_type), parameters):
                found._add((row.visitor, row.recid, row.kind, row.file_key), row)
            later.update(row.id for row in conn.execute(_clicks_query(size, "after", time_type), parameters)
                         if row.id is not None)  # fmt: skip
        e = usage_events.c
        for ids in _chunks(sorted(later)):
            for row in conn.execute(select(e.id, e.visitor, e.recid, e.kind, e.file_key, e.created, e.counted, e.size)
                                    .where(e.id.in_(ids))):  # fmt: skip
                found._add((row.visitor, row.recid, row.kind, row.file_key), row)
        for label, field in (("version", "recid"), ("concept", "conceptrecid")):
            for pairs in _chunks(sorted({(event["session"], event[field], event["kind"]) for event in pending})):
                for row in conn.execute(_sessions_query(_padded(len(pairs)), field), _rows(pairs)):
                    found.seen.add((label, row.session, row.item, row.kind))
        return found

    def _add(self, key: _ClickKey, row: Any) -> None:
        if row.id not in self._read:
            self._read.add(row.id)
            self.clicks[key].append(_Click(row.id, row.created, bool(row.counted), row.size))

    def previous(self, event: dict) -> datetime | None:
        """When the visitor last clicked the item at or before `event` (an aggregated click), if ever."""
        key = _click_key(event)
        return max((c.created for c in self.clicks.get(key, ()) if c.created <= event["created"]),
                   default=self.before.get(key))

    def following(self, event: dict) -> _Click | None:
        """The visitor's first aggregated click on the item after `event`."""
        later = [c for c in self.clicks.get(_click_key(event), ()) if c.created > event["created"]]
        return min(later, key=lambda c: (c.created, c.id), default=None)

    def seen_in_session(self, event: dict, label: str, item: int) -> bool:
        return (label, event["session"], item, event["kind"]) in self.seen

    def uncount(self, click: _Click) -> None:
        click.counted = False
        self.decided[click.id] = False

    def decide(self, event: dict, counted: bool) -> None:
        self.decided[event["id"]] = counted
        self.clicks[_click_key(event)].append(_Click(event["id"], event["created"], counted, event["size"]))
        self.seen.add(("version", event["session"], event["recid"], event["kind"]))
        self.seen.add(("concept", event["session"], event["conceptrecid"], event["kind"]))


def _click_key(event: dict) -> _ClickKey:
    return event["visitor"], event["recid"], event["kind"], event["file_key"]


def _time_type(conn: Connection) -> str:
    """How an instant is written in a VALUES list: SQLite keeps DateTime as text (a TIMESTAMP cast would make it a
    number there)."""
    return "TEXT" if conn.dialect.name == "sqlite" else "TIMESTAMP"


def _time_parameter(conn: Connection) -> Callable[[datetime], object]:
    """An instant as the column stores it (SQLAlchemy's DateTime text on SQLite), for the untyped parameters of a
    VALUES list."""
    process = DateTime().dialect_impl(conn.dialect).bind_processor(conn.dialect)
    return process if process is not None else (lambda when: when)


def _padded(count: int) -> int:
    """Statements are made for a few sizes of batch (powers of two, each compiled once), padded by repeating a row."""
    return 1 << max(0, count - 1).bit_length()


def _values_sql(name: str, columns: tuple[tuple[str, str], ...], count: int) -> str:
    """WITH name(...) AS (VALUES ...) of `count` rows of bound parameters (:c0_0, ...), typed for PostgreSQL."""
    rows = (", ".join(f"CAST(:c{i}_{n} AS {kind})" for i, (_, kind) in enumerate(columns)) for n in range(count))
    return f"WITH {name}({', '.join(label for label, _ in columns)}) AS (VALUES {', '.join(f'({r})' for r in rows)})"


_SAME_CLICK = ("e.visitor = b.visitor AND e.recid = b.recid AND e.kind = b.kind AND e.file_key = b.file_key"
               " AND e.counted IS NOT NULL")
_CLICK_SQL = {
    "before": f"""SELECT b.visitor, b.recid, b.kind, b.file_key, (SELECT e.created FROM usage_events e WHERE
        {_SAME_CLICK} AND e.created < :low ORDER BY e.created DESC LIMIT 1) AS created FROM b""",
    "within": f"""SELECT e.id, e.visitor, e.recid, e.kind, e.file_key, e.created, e.counted, e.size FROM b
        JOIN usage_events e ON {_SAME_CLICK} AND e.created >= :low AND e.created <= b.last""",
    "after": f"""SELECT (SELECT e.id FROM usage_events e WHERE {_SAME_CLICK} AND e.created > b.last
        ORDER BY e.created, e.id LIMIT 1) AS id FROM b""",
}


# Written as SQL text: SQLAlchemy builds the cache key of a VALUES construct of a thousand parameters anew at each
# execution, 40 times the query's own cost; a text statement's key is its text.
@functools.lru_cache(maxsize=64)
def _clicks_query(size: int, part: str, time_type: str) -> TextualSelect:
    columns = (("visitor", "VARCHAR"), ("recid", "INTEGER"), ("kind", "VARCHAR"), ("file_key", "TEXT"),
               ("last", time_type))  # fmt: skip
    statement = text(f"{_values_sql('b', columns, size)}\n{_CLICK_SQL[part]}")
    if part == "after":
        return statement.columns(id=Integer)
    statement = statement.bindparams(bindparam("low", type_=DateTime))
    return statement.columns(id=Integer, visitor=String, recid=Integer, kind=String, file_key=Text, created=DateTime,
                             counted=Boolean, size=BigInteger)  # fmt: skip


@functools.lru_cache(maxsize=32)
def _sessions_query(size: int, field: str) -> TextualSelect:
    columns = (("session", "VARCHAR"), ("item", "INTEGER"), ("kind", "VARCHAR"))
    return text(f"""{_values_sql("b", columns, size)}
        SELECT b.session, b.item, b.kind FROM b WHERE EXISTS (SELECT 1 FROM usage_events e WHERE
        e.session = b.session AND e.{field} = b.item AND e.kind = b.kind AND e.counted IS NOT NULL)""").columns(
        session=String, item=Integer, kind=String)  # fmt: skip


def _rows(rows: list[tuple]) -> dict[str, object]:
    """The parameters of a VALUES statement for `rows`, padded to its size by repeating the last row."""
    padded = rows + rows[-1:] * (_padded(len(rows)) - len(rows))
    return {f"c{i}_{n}": value for n, row in enumerate(padded) for i, value in enumerate(row)}


def _chunks(items: list, size: int = 512) -> list[list]:
    """`items` in lists of at most `size` (bound parameters per statement stay far below any driver's limit)."""
    return [items[i:i + size] for i in range(0, len(items), size)]


def _aggregate_event(neighbours: _Neighbours, event: dict, deltas: dict[int, list[int]]) -> None:
    """Decide whether `event` counts and whether it is its session's first on its version and concept. Events
    reach the table out of order (each process writes its own buffer): a later click already counted within 30 s
    of this one becomes this one's double click."""
    total = _TOTAL[event["kind"]]
    previous = neighbours.previous(event)
    counted = previous is None or event["created"] - previous > DOUBLE_CLICK
    following = neighbours.following(event)
    if following is not None and following.counted and following.created - event["created"] <= DOUBLE_CLICK:
        neighbours.uncount(following)
        for item in (event["recid"], event["conceptrecid"]):
            deltas[item][total] -= 1
            deltas[item][4] -= following.size if event["kind"] == DOWNLOAD else 0
    for item, label in ((event["recid"], "version"), (event["conceptrecid"], "concept")):
        if not neighbours.seen_in_session(event, label, item):
            deltas[item][total + 1] += 1
        if counted:
            deltas[item][total] += 1
            deltas[item][4] += event["size"] if event["kind"] == DOWNLOAD else 0
    neighbours.decide(event, counted)


def _write_counted(conn: Connection, decided: dict[int, bool]) -> None:
    e = usage_events.c
    conn.execute(update(usage_events).where(e.id == bindparam("event_id")).values(counted=bindparam("is_counted")),
                 [{"event_id": event_id, "is_counted": counted} for event_id, counted in sorted(decided.items())])


def _add_to_totals(conn: Connection, deltas: dict[int, list[int]]) -> None:
    """Add each item's changes to its totals (in id order, as every writer of them: no deadlock on PostgreSQL)."""
    t = usage_totals.c
    changed = {item: delta for item, delta in sorted(deltas.items()) if any(delta)}
    existing: set[int] = set()
    for ids in _chunks(list(changed)):
        existing.update(conn.execute(select(t.id).where(t.id.in_(ids))).scalars())
    if existing:
        conn.execute(update(usage_totals).where(t.id == bindparam("item")).values(
            {name: t[name] + bindparam(f"add_{name}") for name in COUNTS}),  # fmt: skip
            [{"item": item, **{f"add_{name}": n for name, n in zip(COUNTS, delta, strict=True)}}
             for item, delta in changed.items() if item in existing])  # fmt: skip
    new = [{"id": item, **dict(zip(COUNTS, delta, strict=True))} for item, delta in changed.items()
           if item not in existing]  # fmt: skip
    if new:
        conn.execute(insert(usage_totals), new)


def totals(conn: Connection, ids: set[int]) -> dict[int, tuple[int, ...]]:
    """The totals (in COUNTS order) of these record versions and concepts; absent ones have none yet."""
    if not ids:
        return {}
    query = select(usage_totals.c.id, *(usage_totals.c[name] for name in COUNTS)).where(usage_totals.c.id.in_(ids))
    return {row[0]: tuple(int(n) for n in row[1:]) for row in conn.execute(query)}


def record_stats(concept: tuple[int, ...], version: tuple[int, ...]) -> dict[str, int]:
    """A record's `stats`: its concept's totals (every version) and its version's (`version_*`)."""
    return {**dict(zip(COUNTS, concept, strict=True)),
            **{f"version_{name}": n for name, n in zip(COUNTS, version, strict=True)}}  # fmt: skip


@functools.lru_cache(maxsize=4096)
def _hashed_keys(secret: bytes, who: str, day: str, hour: str) -> tuple[str, str]:
    """`Usage._keys` of a visitor in an hour (kept: a visitor's reads come in runs, and each costs two HMACs)."""
    visitor = hmac.new(secret, f"{who}|{day}".encode(), hashlib.sha256).hexdigest()[:32]
    return visitor, hmac.new(secret, f"{visitor}|{hour}".encode(), hashlib.sha256).hexdigest()[:32]
