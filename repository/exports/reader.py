"""Every public record as an anonymous reader of the API gets it, and its DataCite `<resource>`, a batch at a time,
in flat memory: one keyset scan over the records' ids that takes each record's stored copy (table `built_records`,
written at indexing) and its stored rendition when they are current, builds and renders the others as a record read
and a harvest do, and puts in the counts as of now (docs/operators/export.md#speed)."""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy import LargeBinary, Select, and_, select, type_coerce

from repository.config import Settings
from repository.records import renditions, stats
from repository.records.access import row_files_open
from repository.records.build import build_records, get_record_rows
from repository.records.lookups import DatabaseLookups
from repository.records.stored import readable_forms
from repository.search.backend import IndexBuilder
from repository.storage import Database, packing
from repository.storage.tables.derived import built_records
from repository.storage.tables.derived import renditions as rendition_rows
from repository.storage.tables.records import records
from repository.storage.tables.usage import usage_totals
from serializers import OAI_FORMATS
from serializers.context import RenderContext
from serializers.jsonformats import render_v1_stored, stored_top, v1_record
from serializers.oai import metadata_renderer, rendition_name

BATCH = 2000
# The DataCite `<resource>` of each record as OAI-PMH's `registry` format serves it (its stored rendition).
DATACITE = OAI_FORMATS["registry"]
RENDITION = rendition_name(DATACITE)


@dataclass
class Batch:
    """Records in id order: `lines` their v1 JSON (the anonymous API's bytes), `resources` their DataCite
    `<resource>` elements (a record whose stored copy went while it was read has none)."""

    lines: list[bytes]
    resources: list[bytes]


def scan_query(settings: Settings, search: IndexBuilder, batch: int = BATCH) -> Select:
    """The export's scan: `batch` live records rows after an id (`.where(records.c.id > last)`), each with its
    stored copy when current (`copy`, packed, and its digest `source`), its stored DataCite rendition (`rendered`:
    its digest, `body`: packed) and its version's then its concept's totals (the last columns, in stats.COUNTS
    order)."""
    r, copy, kept = records.c, built_records.c, rendition_rows.c
    current = and_(copy.record_id == r.id, copy.revision == r.revision, copy.updated == r.updated,
                   copy.engine.in_(readable_forms(settings, search)))
    # The counts come joined to the scan (the version's and its concept's totals), and so does the stored
    # rendition: separate queries by id list cost more in compiling their 2,000 parameters than in running.
    version, concept = usage_totals.alias("version_totals"), usage_totals.alias("concept_totals")
    return (select(r.id, r.conceptrecid, r.revision, r.updated, r.access_right, r.embargo_until,
                   type_coerce(copy.record, LargeBinary).label("copy"), copy.digest.label("source"),
                   kept.digest.label("rendered"), type_coerce(kept.body, LargeBinary).label("body"),
                   *(version.c[name].label(f"version_{name}") for name in stats.COUNTS),
                   *(concept.c[name].label(f"concept_{name}") for name in stats.COUNTS))
            .select_from(records.outerjoin(built_records, current)
                         .outerjoin(rendition_rows, and_(kept.record_id == r.id, kept.format == RENDITION))
                         .outerjoin(version, version.c.id == r.id)
                         .outerjoin(concept, concept.c.id == r.conceptrecid))
            .where(r.deleted.is_(None), r.review.is_(None)).order_by(r.id).limit(batch))


def public_records(db: Database, settings: Settings, search: IndexBuilder, ctx: RenderContext,
                   batch: int = BATCH) -> Iterator[Batch]:
    """Every live (not deleted, not in review) record in id order, `batch` at a time, showing files only where
    every reader may see them (restricted, closed and embargoed records show none), with current `stats`."""
    r, fmt, render = records.c, RENDITION, metadata_renderer(DATACITE)
    query = scan_query(settings, search, batch)
    dialect = db.engine.dialect
    salt = renditions.salt(fmt, ctx, render)
    last = 0
    while True:
        today = dt.datetime.now(dt.UTC).date()  # what files_open takes by default
        with db.scan() as conn:
            rows = conn.execute(query.where(r.id > last)).all()
            if not rows:
                return
            lines: dict[int, bytes] = {}
            resources: dict[int, bytes] = {}
            stale = []
            for row in rows:
                line = _line(row, dialect, today)
                if line is None:
                    stale.append(row.id)
                    continue
                lines[row.id] = line
                source = bytes.fromhex(row.source) if row.source else renditions.source_digest(
                    packing.unpack(row.copy, dialect))
                if row.body is not None and row.rendered == hashlib.sha256(salt + source).hexdigest():
                    resources[row.id] = packing.unpack(row.body, dialect)
            if stale:  # built again as a record read builds them
                built = [x for x in get_record_rows(conn, stale) if x["deleted"] is None and x["review"] is None]
                by_id = {row.id: row for row in rows}
                for record in build_records(conn, settings, DatabaseLookups(conn), built):
                    lines[record["id"]] = orjson.dumps(v1_record({**record, "stats": _stats(by_id[record["id"]])}))
        unrendered = [{"id": row.id, "revision": row.revision, "updated": row.updated, "deleted": None}
                      for row in rows if row.id in lines and row.id not in resources]
        if unrendered:  # rendered (and stored) as a harvest renders them
            with db.read() as conn:
                resources.update(renditions.bodies(conn, db, settings, ctx, unrendered, fmt, render))
        ids = [row.id for row in rows if row.id in lines]
        yield Batch([lines[recid] for recid in ids], [resources[recid] for recid in ids if recid in resources])
        last = rows[-1].id


def _line(row: Any, dialect: Any, today: dt.date) -> bytes | None:
    """The v1 JSON of a scanned row from its stored copy, or None when that copy is missing or stale (it shows
    files it no longer should, or no longer shows them: an embargo ended)."""
    if row.copy is None or row.access_right is None:
        return None
    data = packing.unpack(row.copy, dialect)
    top = stored_top(data)
    keys: Any = top if top is not None else orjson.loads(data)
    if ("files" in keys) != row_files_open({"access_right": row.access_right, "embargo_until": row.embargo_until},
                                           today):
        return None
    if top is None:  # a record whose people carry keys beyond the specification's: built whole
        return orjson.dumps(v1_record({**keys, "stats": _stats(row)}))
    return render_v1_stored(top, {"stats": _stats(row)})


def _stats(row: Any) -> dict[str, int]:
    """The record's `stats` from the totals joined to its row (its version's, then its concept's)."""
    width = len(stats.COUNTS)
    return stats.record_stats(_counts(row[-width:]), _counts(row[-2 * width:-width]))


def _counts(values: Sequence[int | None]) -> tuple[int, ...]:
    """Joined totals (in stats.COUNTS order); none yet where the join found no row."""
    return stats.NO_COUNTS if values[0] is None else tuple(int(n) for n in values)  # type: ignore[arg-type]
