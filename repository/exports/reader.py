"""Every public record as an anonymous reader of the API gets it, a batch at a time, in flat memory: a keyset scan
over the records' ids that takes each record's stored copy (table `built_records`, written at indexing) when it is
current, builds the others as a record read does, and puts in the counts as of now (docs/operators/export.md)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import orjson
from sqlalchemy import LargeBinary, and_, select, type_coerce

from repository.config import Settings
from repository.records import stats
from repository.records.access import row_files_open
from repository.records.build import build_records, get_record_rows
from repository.records.lookups import DatabaseLookups
from repository.records.stored import readable_forms
from repository.search.backend import IndexBuilder
from repository.storage import Database, packing
from repository.storage.tables.derived import built_records
from repository.storage.tables.records import records
from repository.storage.tables.usage import usage_totals

BATCH = 2000
COUNTS_AT = 7  # where the version's totals start in a scanned row (then the concept's)


@dataclass
class Batch:
    """Records in id order: `records` the built v1 records, `rows` their records rows' id, revision, updated and
    deleted (what `renditions.bodies` takes)."""

    records: list[dict]
    rows: list[dict]


def public_records(db: Database, settings: Settings, search: IndexBuilder, batch: int = BATCH) -> Iterator[Batch]:
    """The built v1 records of every live (not deleted) record in id order, `batch` at a time, showing files only
    where every reader may see them (restricted, closed and embargoed records show none), with current `stats`."""
    r, copy = records.c, built_records.c
    current = and_(copy.record_id == r.id, copy.revision == r.revision, copy.updated == r.updated,
                   copy.engine.in_(readable_forms(settings, search)))
    # The counts come joined to the scan (the version's and its concept's totals): a separate query by id list
    # cost more in compiling its 4,000 parameters than in running it.
    version, concept = usage_totals.alias("version_totals"), usage_totals.alias("concept_totals")
    query = (select(r.id, r.conceptrecid, r.revision, r.updated, r.access_right, r.embargo_until,
                    type_coerce(copy.record, LargeBinary).label("copy"),
                    *(version.c[name].label(f"version_{name}") for name in stats.COUNTS),
                    *(concept.c[name].label(f"concept_{name}") for name in stats.COUNTS))
             .select_from(records.outerjoin(built_records, current)
                          .outerjoin(version, version.c.id == r.id)
                          .outerjoin(concept, concept.c.id == r.conceptrecid))
             .where(r.deleted.is_(None), r.review.is_(None)).order_by(r.id).limit(batch))
    dialect = db.engine.dialect
    last = 0
    while True:
        with db.scan() as conn:
            rows = conn.execute(query.where(r.id > last)).all()
            if not rows:
                return
            out: dict[int, dict] = {}
            stale = []
            for row in rows:
                record = orjson.loads(packing.unpack(row.copy, dialect)) if row.copy is not None else None
                # A copy showing files it no longer should, or no longer shows (an embargo ended), is built again.
                if record is None or row.access_right is None or ("files" in record) != row_files_open(
                        {"access_right": row.access_right, "embargo_until": row.embargo_until}):
                    stale.append(row.id)
                else:
                    out[row.id] = record
            if stale:
                built = [x for x in get_record_rows(conn, stale) if x["deleted"] is None and x["review"] is None]
                for record in build_records(conn, settings, DatabaseLookups(conn), built):
                    out[record["id"]] = record
        width = len(stats.COUNTS)
        for row in rows:
            if row.id in out:
                out[row.id]["stats"] = stats.record_stats(_counts(row[COUNTS_AT + width:COUNTS_AT + 2 * width]),
                                                          _counts(row[COUNTS_AT:COUNTS_AT + width]))
        kept = [row for row in rows if row.id in out]
        yield Batch([out[row.id] for row in kept],
                    [{"id": row.id, "revision": row.revision, "updated": row.updated, "deleted": None} for row in kept])
        last = rows[-1].id


def _counts(values: Sequence[int | None]) -> tuple[int, ...]:
    """Joined totals (in stats.COUNTS order); none yet where the join found no row."""
    return stats.NO_COUNTS if values[0] is None else tuple(int(n) for n in values)  # type: ignore[arg-type]
