"""The zstd dictionaries packed columns are compressed with (storage.packing): one trained per kind of value on
the database's own values, kept in `pack_dictionaries`.

A kind gets its dictionary once it has MIN_VALUES values (`ensure`: the bulk loader after each batch, the
background worker, `repository-admin pack-dictionaries`); the values packed before are then packed again with it
(`repack`), a batch at a time, each value replaced only if nobody rewrote it meanwhile. Training again
(`train`, the command's `--retrain`) adds a newer dictionary of the kind, which later writes use; the older ones
stay, so every value stays readable whichever one packed it.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy import Connection, func, insert, select
from sqlalchemy.exc import IntegrityError

from repository.storage import packing
from repository.storage.engine import Database
from repository.storage.tables.derived import pack_dictionaries

try:
    from compression import zstd  # type: ignore[import-not-found,unused-ignore]  # Python 3.14+
except ImportError:
    from backports import zstd  # type: ignore[no-redef,unused-ignore]

log = logging.getLogger(__name__)

MIN_VALUES = 2000  # fewer, and a dictionary learns the few records there are rather than what they share
SAMPLES = 5000  # values trained on: the newest of the kind
DICTIONARY_BYTES = 64 * 1024
BATCH = 1000  # values packed again per transaction
CHECK_SECONDS = 600.0  # how often the worker looks for a kind that can have its dictionary
PASS_BATCHES = 2  # batches a worker pass packs again


@dataclass(frozen=True)
class Place:
    """A packed column: `kind` names the dictionary it is packed with (storage.tables declare it the same)."""

    kind: str
    table: str
    keys: tuple[str, ...]
    column: str

    def table_clause(self) -> sa.TableClause:
        return sa.table(self.table, *(sa.column(k) for k in self.keys), sa.column(self.column, sa.LargeBinary))


# The first place of each kind is what its dictionary is trained on.
PLACES = (
    Place("built_records.record", "built_records", ("record_id",), "record"),
    Place("built_records.document", "built_records", ("record_id",), "document"),
    Place("renditions.body", "renditions", ("record_id", "format"), "body"),
    Place("records.metadata", "records", ("id",), "metadata"),
    Place("records.metadata", "deposits", ("id",), "metadata"),  # the same deposit-form JSON
)
KINDS = tuple(dict.fromkeys(place.kind for place in PLACES))


def newest(conn: Connection) -> dict[str, int]:
    """kind -> id of its newest dictionary."""
    rows = conn.execute(select(pack_dictionaries.c.kind, pack_dictionaries.c.id)
                        .order_by(pack_dictionaries.c.created, pack_dictionaries.c.id)).all()
    return {kind: dict_id for kind, dict_id in rows}


def train(db: Database, kind: str, min_values: int = MIN_VALUES, size: int = DICTIONARY_BYTES) -> int | None:
    """Train a dictionary of `kind` (at most `size` bytes) on its newest values and keep it; its id, or None with
    too few values."""
    place = next(p for p in PLACES if p.kind == kind)
    t = place.table_clause()
    order = [t.c[k].desc() for k in place.keys]
    with db.read() as conn:
        values = [packing.unpack(value) for value in conn.execute(
            select(t.c[place.column]).where(t.c[place.column].is_not(None)).order_by(*order).limit(SAMPLES)
        ).scalars()]  # fmt: skip
    if len(values) < max(1, min_values):
        return None
    try:
        dictionary = zstd.train_dict(values, size)
    except zstd.ZstdError as exc:  # values too alike or too few for zstd's trainer
        log.info("no dictionary trained for %s: %s", kind, exc)
        return None
    row = {"id": dictionary.dict_id, "kind": kind, "body": dictionary.dict_content, "samples": len(values),
           "created": datetime.now(UTC).replace(tzinfo=None)}  # to the microsecond: the newest wins
    try:
        with db.write() as conn:
            if not conn.execute(select(func.count()).where(pack_dictionaries.c.id == row["id"])).scalar_one():
                conn.execute(insert(pack_dictionaries).values(row))
    except IntegrityError:  # the same dictionary, trained at the same time by another process
        pass
    packing.known(dictionary)
    packing.forget(db.engine)
    return int(dictionary.dict_id)


def repack(db: Database, kind: str) -> int:
    """Pack again with the newest dictionary of `kind` every value of that kind packed otherwise; how many."""
    done = 0
    for place in (p for p in PLACES if p.kind == kind):
        after: tuple | None = ()
        while after is not None:
            count, after = repack_batch(db, place, after)
            done += count
    return done


def repack_batch(db: Database, place: Place, after: tuple) -> tuple[int, tuple | None]:
    """Pack again with the newest dictionary of its kind the values of `place` packed otherwise, among the BATCH
    rows after key `after` (`()`: from the first); (how many, the last key read, or None past the last row)."""
    with db.read() as conn:
        dict_id = newest(conn).get(place.kind)
        t = place.table_clause()
        query = select(t).where(t.c[place.column].is_not(None)).order_by(*(t.c[k] for k in place.keys)).limit(BATCH)
        if after:
            key = sa.tuple_(*(t.c[k] for k in place.keys)) if len(place.keys) > 1 else t.c[place.keys[0]]
            query = query.where(key > (sa.tuple_(*(sa.literal(v) for v in after)) if len(after) > 1 else after[0]))
        rows = [dict(row) for row in conn.execute(query).mappings()]
    if dict_id is None or not rows:
        return 0, None
    dictionary = packing.dictionary(dict_id)
    changes = [{**{f"k_{k}": row[k] for k in place.keys}, "old": row[place.column],
                "new": packing.pack(packing.unpack(row[place.column]), dictionary)}
               for row in rows if _packed_with(row[place.column]) != dict_id]  # fmt: skip
    if changes:
        # Only a value nobody rewrote since it was read: one written meanwhile is packed with the newest already.
        update = t.update().where(*(t.c[k] == sa.bindparam(f"k_{k}") for k in place.keys),
                                  t.c[place.column] == sa.bindparam("old", type_=sa.LargeBinary)) \
            .values({place.column: sa.bindparam("new", type_=sa.LargeBinary)})
        with db.write() as conn:
            conn.execute(update, changes)
    return len(changes), tuple(rows[-1][k] for k in place.keys)


def _packed_with(value: bytes | str) -> int:
    data = bytes(value) if not isinstance(value, str) else value.encode()
    return packing.dictionary_id(data) if data[:4] == packing.MAGIC else 0


def ensure(db: Database, min_values: int = MIN_VALUES) -> dict[str, int]:
    """Train the dictionary of each kind that has none and has `min_values` values, then pack that kind's values
    again with it; kind -> values packed again."""
    return {kind: repack(db, kind) for kind in train_missing(db, min_values)}


def train_missing(db: Database, min_values: int = MIN_VALUES, size: int = DICTIONARY_BYTES) -> list[str]:
    """Train the dictionary of each kind that has none and has `min_values` values; the kinds trained."""
    with db.read() as conn:
        missing = [kind for kind in KINDS if kind not in newest(conn)]
    return [kind for kind in missing if train(db, kind, min_values, size) is not None]


class Tending:
    """The background worker's part (one of its `on_pass` tasks): every CHECK_SECONDS, a kind without a dictionary
    gets one once it has enough values; the values packed before are then packed again with it, PASS_BATCHES
    batches a pass, so that a pass stays short however large the database."""

    def __init__(self, db: Database, interval: float = CHECK_SECONDS, min_values: int = MIN_VALUES,
                 size: int = DICTIONARY_BYTES) -> None:
        self.db, self.interval, self.min_values, self.size = db, interval, min_values, size
        self.checked = -interval
        self.cursors: dict[Place, tuple] = {}  # place -> the last key packed again, while some are left

    def __call__(self) -> int:
        """One pass; how many values it packed again."""
        if not self.cursors:
            if time.monotonic() - self.checked < self.interval:
                return 0
            self.checked = time.monotonic()
            trained = train_missing(self.db, self.min_values, self.size)
            self.cursors = {place: () for place in PLACES if place.kind in trained}
        done = 0
        for place in list(self.cursors):
            for _ in range(PASS_BATCHES):
                count, after = repack_batch(self.db, place, self.cursors[place])
                done += count
                if after is None:
                    del self.cursors[place]
                    break
                self.cursors[place] = after
        return done
