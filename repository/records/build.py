"""Published records: the v1 record dict (docs/reference-behaviour.md#record-json) built once from the database, for the API, the index,
the serializers and OAI-PMH alike. Batched: a page of records costs a fixed number of queries."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Connection,
    Dialect,
    LargeBinary,
    Select,
    bindparam,
    func,
    or_,
    select,
    type_coerce,
    update,
)

from repository import urls
from repository.communities import inclusions
from repository.config import Settings
from repository.files import buckets, thumbnails
from repository.metadata import MetadataLookups, to_record_metadata
from repository.records import file_history, stats
from repository.records.access import row_files_open
from repository.storage.packing import PackedJSON
from repository.storage.tables.records import concepts, records
from repository.storage.tables.usage import usage_totals
from repository.timeutil import isoformat


def _file_type(key: str) -> str:
    return key.rsplit(".", 1)[1].lower() if "." in key else ""


def _versions(conn: Connection, concept_ids: set[int]) -> dict[int, list[int]]:
    """concept -> its published, not deleted versions, oldest first; a version awaiting a moderator's approval is
    not one yet (its siblings neither count it nor lead to it: docs/operators/moderation.md)."""
    result: dict[int, list[int]] = defaultdict(list)
    if concept_ids:
        query = (
            select(records.c.conceptrecid, records.c.id)
            .where(records.c.conceptrecid.in_(concept_ids), records.c.deleted.is_(None),
                   or_(records.c.review.is_(None), records.c.review != "pending"))
            .order_by(records.c.id)
        )
        for conceptrecid, recid in conn.execute(query):
            result[conceptrecid].append(recid)
    return result


def _with_own(versions: dict[int, list[int]], row: dict) -> list[int]:
    """The versions `row` shows: its concept's, and itself where it awaits approval (as its owner sees it)."""
    listed = versions[row["conceptrecid"]]
    return listed if row["id"] in listed or row.get("deleted") is not None else sorted([*listed, row["id"]])


def build_records(
    conn: Connection, settings: Settings, lookups: MetadataLookups, rows: list[dict], with_files: bool = False
) -> list[dict]:
    """v1 record dicts for `rows` (records rows). Files appear when the record's files are open, or always with
    `with_files` (the caller has checked access). Deleted records give a tombstone dict."""
    concept_ids = {r["conceptrecid"] for r in rows}
    conceptdois = dict(
        conn.execute(select(concepts.c.id, concepts.c.conceptdoi).where(concepts.c.id.in_(concept_ids))).all()
    ) if concept_ids else {}
    versions = _versions(conn, concept_ids)
    counts = stats.totals(conn, concept_ids | {r["id"] for r in rows})
    accepted = inclusions.accepted_communities(conn, list(concept_ids))
    objects = buckets.objects_of_buckets(conn, [r["bucket_id"] for r in rows])
    changes = file_history.histories(conn, [r["id"] for r in rows if r.get("files_fixed")])
    built = [
        _build(settings, lookups, row, conceptdois.get(row["conceptrecid"]), _with_own(versions, row),
               _stats_of(counts, row), accepted.get(row["conceptrecid"], []), objects[row["bucket_id"]], with_files)
        for row in rows
    ]  # fmt: skip
    for record in built:
        if changes.get(record["id"]):  # only versions whose files were fixed after publishing have one
            record["files_history"] = changes[record["id"]]
    return built


def build_unread(settings: Settings, lookups: MetadataLookups, row: dict, conceptdoi: str | None,
                 versions: list[int], communities: list[str], objs: list[buckets.ObjectRow]) -> dict:
    """The v1 record dict of `row` from what `build_records` would read for it, handed in by a caller that made it
    without the database (generated corpora indexed alone, bench/corpus_index.py): no usage counted, no files."""
    return _build(settings, lookups, row, conceptdoi, versions, _stats_of({}, row), communities, objs, False)


def _build(
    settings: Settings,
    lookups: MetadataLookups,
    row: dict,
    conceptdoi: str | None,
    versions: list[int],
    record_stats: dict[str, int],
    communities: list[str],
    objs: list[buckets.ObjectRow],
    with_files: bool,
) -> dict:
    base = settings.BASE_URL
    recid = row["id"]
    # The row was just read: its metadata can be shared rather than copied.
    metadata = to_record_metadata(row["metadata"], lookups, accepted_communities=communities, copy_values=False)
    metadata["doi"] = row["doi"]
    latest = versions[-1] if versions else recid
    if conceptdoi:
        related = metadata.setdefault("related_identifiers", [])
        related.append({"identifier": conceptdoi, "relation": "isVersionOf", "scheme": "doi"})
    metadata["relations"] = {
        "version": [
            {
                "index": versions.index(recid) if recid in versions else 0,
                "is_last": recid == latest,
                "count": len(versions),
                "parent": {"pid_type": "recid", "pid_value": str(row["conceptrecid"])},
                "last_child": {"pid_type": "recid", "pid_value": str(latest)},
            }
        ]
    }
    links: dict[str, Any] = {
        "self": urls.record_api(base, recid),
        "html": urls.record_html(base, recid),
        "doi": urls.doi(row["doi"]),
        "badge": urls.badge(base, row["doi"]),
        "files": urls.record_files_api(base, recid),
        "versions": urls.record_versions_api(base, recid),
        # Both redirect to the newest version when followed, so a copy kept by a client never leads astray.
        "latest": urls.record_latest_api(base, latest),
        "latest_html": urls.record_latest_html(base, latest),
    }
    if conceptdoi:
        links["conceptdoi"] = urls.doi(conceptdoi)
        links["conceptbadge"] = urls.badge(base, conceptdoi)
    record = {
        "id": recid,
        "conceptrecid": str(row["conceptrecid"]),
        "doi": row["doi"],
        "created": isoformat(row["created"]),
        "updated": isoformat(row["updated"]),
        "revision": row["revision"],
        "owners": [row["owner_id"]],
        "links": links,
        "metadata": metadata,
        "stats": record_stats,
    }
    if conceptdoi:
        record["conceptdoi"] = conceptdoi
    images = [o for o in objs if o["mimetype"].startswith("image/")]
    if images and (with_files or row_files_open(row)):
        links["thumbs"] = {str(size): urls.record_thumbnail(base, recid, size) for size in thumbnails.SIZES}
        links["thumb250"] = urls.record_thumbnail(base, recid, 250)
    if with_files or row_files_open(row):
        bucket = row["bucket_id"]
        links["bucket"] = urls.bucket(base, bucket)
        links["archive"] = urls.record_archive(base, recid)  # every file as one zip (InvenioRDM's link name)
        record["files"] = [
            {
                "id": o["file_id"],
                "bucket": bucket,
                "checksum": o["checksum"],
                "key": o["key"],
                "size": o["size"],
                "type": _file_type(o["key"]),
                "links": {"self": urls.bucket_object(base, bucket, o["key"])},
            }
            for o in objs
        ]
    return record


def current_stats(conn: Connection | None, row: dict) -> dict[str, int]:
    """A record's `stats` as of now: its concept's totals (every version) and its version's. A row read by
    `get_record_row_with_counts` carries them already: no query then."""
    if CONCEPT_COUNTS in row:
        return stats.record_stats(row[CONCEPT_COUNTS], row[VERSION_COUNTS])
    assert conn is not None, "a row without its counts needs a connection"
    return _stats_of(stats.totals(conn, {row["conceptrecid"], row["id"]}), row)


def _stats_of(counts: dict[int, tuple[int, ...]], row: dict) -> dict[str, int]:
    """The `stats` of the record of `row`, from the totals of its version and concept (`stats.totals`)."""
    return stats.record_stats(counts.get(row["conceptrecid"], stats.NO_COUNTS), counts.get(row["id"], stats.NO_COUNTS))


def get_record_rows(conn: Connection, recids: list[int]) -> list[dict]:
    """Records rows for `recids`, in that order (missing ones skipped)."""
    if not recids:
        return []
    found = {r["id"]: dict(r) for r in conn.execute(select(records).where(records.c.id.in_(recids))).mappings()}
    return [found[i] for i in recids if i in found]


def get_record_row(conn: Connection, recid: int) -> dict | None:
    """The records row of `recid`, or None (`=`, not `IN`: an expanding IN is compiled anew at every call)."""
    row = conn.execute(select(records).where(records.c.id == recid)).mappings().first()
    return dict(row) if row is not None else None


CONCEPT_COUNTS = "concept_counts"  # key of a row's usage totals (stats.COUNTS) over its concept's versions
VERSION_COUNTS = "version_counts"  # and of its own


PACKED_METADATA = "packed_metadata"


def row_with_counts_statement(packed_metadata: bool = False) -> Select:
    """The statement of `get_record_row_with_counts` (parameter `recid`), for callers that add to it: build it once
    and keep it (constructing it at every call cost several times what running it does). With `packed_metadata`,
    the row's metadata comes as stored, under PACKED_METADATA instead of `metadata` (see `unpack_metadata`)."""
    version = usage_totals.alias("version_usage")
    concept = usage_totals.alias("concept_usage")
    columns: list[Any] = [records]
    if packed_metadata:
        columns = [*(c for c in records.c if c.key != "metadata"),
                   type_coerce(records.c.metadata, LargeBinary).label(PACKED_METADATA)]
    return (
        select(*columns, *(version.c[name].label(f"version_usage_{name}") for name in stats.COUNTS),
               *(concept.c[name].label(f"concept_usage_{name}") for name in stats.COUNTS))
        .select_from(records.outerjoin(version, version.c.id == records.c.id)
                     .outerjoin(concept, concept.c.id == records.c.conceptrecid))
        .where(records.c.id == bindparam("recid"))
    )  # fmt: skip


_ROW_WITH_COUNTS = row_with_counts_statement()


def get_record_row_with_counts(conn: Connection, recid: int) -> dict | None:
    """The records row of `recid` with its usage totals (`stats.COUNTS`) under VERSION_COUNTS and its concept's
    under CONCEPT_COUNTS: one query, so a record read shows the counts of this moment without a second one."""
    row = conn.execute(_ROW_WITH_COUNTS, {"recid": recid}).mappings().first()
    return row_with_counts(row) if row is not None else None


def row_with_counts(result: Mapping[Any, Any]) -> dict:
    """A row of `row_with_counts_statement` as `get_record_row_with_counts` gives it."""
    found = dict(result)
    for key, prefix in ((VERSION_COUNTS, "version_usage_"), (CONCEPT_COUNTS, "concept_usage_")):
        found[key] = tuple(int(found.pop(prefix + name) or 0) for name in stats.COUNTS)
    return found


def unpack_metadata(dialect: Dialect, row: dict) -> dict:
    """`row` (of `row_with_counts_statement(packed_metadata=True)`) with its metadata unpacked, as
    `get_record_row_with_counts` gives it: only a record built anew needs it (who may see the files is in the
    row's columns, `access.row_files_open`)."""
    if PACKED_METADATA in row:
        packed = row.pop(PACKED_METADATA)
        row["metadata"] = PackedJSON().process_result_value(packed, dialect)
    return row


def touch_versions(conn: Connection, conceptrecid: int, now: datetime, exclude: int | None = None) -> list[int]:
    """Mark every live version of a concept (but `exclude`) changed at `now`: a new revision and datestamp.
    What a version shows of its siblings (the latest one, the count, the communities that accepted the concept)
    is part of its representation, so a change there is a change of each version: its ETag, the per-process
    cache, the stored copy and renditions (keyed by revision and datestamp), the search engine's document (its
    version is the revision) and OAI-PMH's datestamp all follow. Returns the ids touched."""
    where = [records.c.conceptrecid == conceptrecid, records.c.deleted.is_(None)]
    if exclude is not None:
        where.append(records.c.id != exclude)
    # Locked in id order first, so that two writers touching one concept cannot deadlock.
    touched = list(conn.execute(select(records.c.id).where(*where).order_by(records.c.id).with_for_update()).scalars())
    if touched:
        conn.execute(update(records).where(records.c.id.in_(touched))
                     .values(updated=now, revision=records.c.revision + 1))  # fmt: skip
    return touched


def concept_of(conn: Connection, recid: int) -> int | None:
    """The concept of record `recid` (taken down or not), or `recid` itself when it is a concept id."""
    found = conn.execute(select(records.c.conceptrecid).where(records.c.id == recid)).scalar()
    if found is None:
        found = conn.execute(select(concepts.c.id).where(concepts.c.id == recid)).scalar()
    return found


def is_concept(conn: Connection, recid: int) -> bool:
    """Whether `recid` is a concept id (the id every version of a record shares)."""
    return conn.execute(concepts.select().where(concepts.c.id == recid)).first() is not None


def latest_version(conn: Connection, conceptrecid: int) -> int | None:
    """The newest published, not deleted version of a concept (not one awaiting a moderator's approval)."""
    query = select(func.max(records.c.id)).where(records.c.conceptrecid == conceptrecid, records.c.deleted.is_(None),
                                                 or_(records.c.review.is_(None), records.c.review != "pending"))
    return conn.execute(query).scalar()


def awaiting_approval(conn: Connection, conceptrecid: int) -> bool:
    """Whether the concept has a live version awaiting a moderator's approval (none public when `latest_version`
    found nothing: the concept is not public yet, rather than deleted)."""
    query = select(records.c.id).where(records.c.conceptrecid == conceptrecid, records.c.deleted.is_(None),
                                       records.c.review == "pending").limit(1)
    return conn.execute(query).first() is not None


_TRAILING_ID = re.compile(r"\.([0-9]{1,10})$")


def doi_state(conn: Connection, doi: str) -> str | None:
    """What this repository holds under `doi` (lower case): "live" for a published record or the concept of one,
    "deleted" when everything it names was taken down, None for a DOI it does not have. Two index lookups at most: a concept DOI
    ends in its concept's id (`<prefix>/<namespace>.<id>`), which finds the concept without a scan."""
    found = conn.execute(select(records.c.deleted).where(records.c.doi == doi)).first()
    if found is not None:
        return "live" if found.deleted is None else "deleted"
    match = _TRAILING_ID.search(doi)
    concept = int(match.group(1)) if match else 0
    if not 0 < concept < 2**31:  # ids are 32-bit integers in PostgreSQL
        return None
    if conn.execute(select(concepts.c.id).where(concepts.c.id == concept, concepts.c.conceptdoi == doi)).first() is None:
        return None
    return "live" if latest_version(conn, concept) is not None else "deleted"
