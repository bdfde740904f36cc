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
from dataclasses import dataclass
from datetime import datetime, timedelta

import counter_robots  # type: ignore[import-untyped]  # no type information shipped
from sqlalchemy import Connection, exists, insert, select, update

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
        day = visit.when.strftime("%Y-%m-%d")
        visitor = hmac.new(self._secret, f"{who}|{day}".encode(), hashlib.sha256).hexdigest()[:32]
        session = hmac.new(self._secret, f"{visitor}|{visit.when:%H}".encode(), hashlib.sha256).hexdigest()[:32]
        return visitor, session

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
        process at a time (the others skip): the double-click filter compares each event with its neighbours."""
        with self.db.write() as conn:
            if not try_lock(conn, "usage-aggregation"):
                return 0
            pending = conn.execute(
                select(usage_events).where(usage_events.c.counted.is_(None))
                .order_by(usage_events.c.created, usage_events.c.id).limit(BATCH)
            ).mappings().all()  # fmt: skip
            deltas: dict[int, list[int]] = defaultdict(lambda: [0] * len(COUNTS))
            for event in pending:
                _aggregate_event(conn, dict(event), deltas)
            _add_to_totals(conn, deltas)
        return len(pending)


def _aggregate_event(conn: Connection, event: dict, deltas: dict[int, list[int]]) -> None:
    """Decide whether `event` counts and whether it is its session's first on its version and concept. Events
    reach the table out of order (each process writes its own buffer): a later click already counted within 30 s
    of this one becomes this one's double click."""
    e = usage_events.c
    total = _TOTAL[event["kind"]]
    clicks = (e.visitor == event["visitor"], e.recid == event["recid"], e.kind == event["kind"],
              e.file_key == event["file_key"], e.counted.is_not(None), e.id != event["id"])  # fmt: skip
    previous = conn.execute(select(e.created).where(*clicks, e.created <= event["created"])
                            .order_by(e.created.desc()).limit(1)).scalar()  # fmt: skip
    counted = previous is None or event["created"] - previous > DOUBLE_CLICK
    following = conn.execute(select(e.id, e.created, e.counted, e.size).where(*clicks, e.created > event["created"])
                             .order_by(e.created).limit(1)).first()  # fmt: skip
    if following is not None and following.counted and following.created - event["created"] <= DOUBLE_CLICK:
        conn.execute(update(usage_events).where(e.id == following.id).values(counted=False))
        for item in (event["recid"], event["conceptrecid"]):
            deltas[item][total] -= 1
            deltas[item][4] -= following.size if event["kind"] == DOWNLOAD else 0
    for item, column in ((event["recid"], e.recid), (event["conceptrecid"], e.conceptrecid)):
        seen = exists().where(e.session == event["session"], column == item, e.kind == event["kind"],
                              e.counted.is_not(None))  # fmt: skip
        if not conn.execute(select(seen)).scalar():
            deltas[item][total + 1] += 1
        if counted:
            deltas[item][total] += 1
            deltas[item][4] += event["size"] if event["kind"] == DOWNLOAD else 0
    conn.execute(update(usage_events).where(e.id == event["id"]).values(counted=counted))


def _add_to_totals(conn: Connection, deltas: dict[int, list[int]]) -> None:
    t = usage_totals.c
    for item, delta in sorted(deltas.items()):
        if not any(delta):
            continue
        added = conn.execute(update(usage_totals).where(t.id == item).values(
            {name: t[name] + change for name, change in zip(COUNTS, delta, strict=True)}))  # fmt: skip
        if added.rowcount == 0:
            conn.execute(insert(usage_totals).values(id=item, **dict(zip(COUNTS, delta, strict=True))))


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
