"""Writing a record published elsewhere: the rows a publish would have left (concept, record, its published deposit,
its locked buckets and files), with the DOIs it already has, marked as registered elsewhere so that the DOI agency
is never asked for them (docs/operators/migration.md#what-an-import-keeps). The one write path of every import:
a full export loaded into an empty instance (`repository.exports.dump`) and an import from another service
(`repository.imports.api`)."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, insert

from repository import outbox
from repository.communities.inclusions import sync_on_publish
from repository.files.keys import check_key, guess_mimetype
from repository.files.store import StoredFile
from repository.records.access import access_columns
from repository.storage.tables.deposits import deposits
from repository.storage.tables.files import buckets as bucket_rows
from repository.storage.tables.files import file_instances, objects
from repository.storage.tables.records import concepts, recids, records
from repository.timeutil import utcnow
from repository.vocabularies.resource_types import type_columns
from serializers.context import RenderContext
from serializers.jsonformats import legacy_record

# What the record shape shows that a deposit does not take back: its DOI lives in the row, and communities are
# inclusion requests, made apart.
NOT_DEPOSITED = ("prereserve_doi", "doi", "communities")


@dataclass
class ImportedRecord:
    """One published version as it is to be written: `metadata` validated as a deposit's at publication."""

    metadata: dict[str, Any]
    doi: str
    conceptdoi: str | None
    created: dt.datetime  # naive UTC, as the tables keep times
    updated: dt.datetime
    revision: int = 1
    recid: int | None = None  # the id to keep (a load between instances), or None for the next free one
    files: Sequence[tuple[str, StoredFile]] = field(default_factory=tuple)  # (key, bytes already in the store)


def deposit_metadata(record: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The deposit metadata behind a v1 record (an export line, another service's record), not yet validated,
    and the identifiers of the communities it lists."""
    deposited = legacy_record(record, RenderContext())["metadata"]
    listed = [str(c.get("identifier")) for c in deposited.get("communities", []) if isinstance(c, dict)]
    return {k: v for k, v in deposited.items() if k not in NOT_DEPOSITED}, listed


def write_published(conn: Connection, owner_id: int, record: ImportedRecord, concept: int | None,
                    new_concept: bool) -> tuple[int, int]:
    """Write `record` as a published version of `concept` (created first when `new_concept`, with that id or, if
    None, the next free one), owned by `owner_id`, indexed after the commit; returns (record id, concept id)."""
    if new_concept:
        concept = _new_id(conn, "concept", record.created, concept)
        conn.execute(insert(concepts).values(_concept_row(concept, owner_id, record)))
    assert concept is not None
    recid = _new_id(conn, "record", record.created, record.recid)
    deposit_row, record_row = _rows(owner_id, record, concept, recid)
    _write_buckets(conn, (deposit_row["bucket_id"], record_row["bucket_id"]), record.files, record.created)
    conn.execute(insert(deposits).values(deposit_row))
    conn.execute(insert(records).values(record_row))
    if record.metadata.get("communities"):
        sync_on_publish(conn, concept, recid, owner_id, record.metadata)
    outbox.enqueue(conn, "index", recid)
    return recid, concept


def write_new_concepts(conn: Connection, owner_id: int, batch: Sequence[ImportedRecord]) -> list[tuple[int, int]]:
    """Write each of `batch` as the first version of a new concept, as `write_published` does one by one (the
    concept's id, then the record's, taken in order from the shared sequence), in a few statements for the whole
    batch: a bulk import's path (docs/operators/migration.md#bulk-writes). The records have no files and list no
    communities; returns (record id, concept id) of each, in order."""
    if not batch:
        return []
    if any(r.files or r.recid is not None or r.metadata.get("communities") for r in batch):
        raise ValueError("write_new_concepts takes records without files, kept ids or communities")
    taken = conn.execute(insert(recids).returning(recids.c.id, sort_by_parameter_order=True), [
        {"kind": kind, "created": r.created} for r in batch for kind in ("concept", "record")]).scalars().all()
    ids = [(int(taken[2 * n + 1]), int(taken[2 * n])) for n in range(len(batch))]
    rows = [_rows(owner_id, r, concept, recid) for r, (recid, concept) in zip(batch, ids, strict=True)]
    conn.execute(insert(concepts), [_concept_row(concept, owner_id, r)
                                    for r, (_recid, concept) in zip(batch, ids, strict=True)])
    conn.execute(insert(bucket_rows), [{"id": row["bucket_id"], "locked": True, "created": r.created,
                                        "updated": r.created} for r, pair in zip(batch, rows, strict=True)
                                       for row in pair])
    conn.execute(insert(deposits), [deposit_row for deposit_row, _record_row in rows])
    conn.execute(insert(records), [record_row for _deposit_row, record_row in rows])
    outbox.enqueue_many(conn, "index", [recid for recid, _concept in ids])
    return ids


def _concept_row(concept: int, owner_id: int, record: ImportedRecord) -> dict[str, Any]:
    return {"id": concept, "owner_id": owner_id, "created": record.created, "lock_version": 0,
            "conceptdoi": record.conceptdoi}


def _rows(owner_id: int, record: ImportedRecord, concept: int, recid: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The deposit row and the record row of `record`, each with a new bucket id."""
    metadata, doi = record.metadata, record.doi
    deposit_row = {
        "id": recid, "conceptrecid": concept, "owner_id": owner_id, "status": "published", "editing": False,
        "metadata": None, "doi": doi, "doi_external": True, "prereserved": False, "bucket_id": str(uuid.uuid4()),
        "created": record.created, "modified": record.updated}
    record_row = {
        "id": recid, "conceptrecid": concept, "owner_id": owner_id, "metadata": metadata, **type_columns(metadata),
        "doi": doi.lower(), "doi_external": True, "bucket_id": str(uuid.uuid4()), "revision": record.revision,
        "integrated": True, **access_columns(metadata), "created": record.created, "updated": record.updated,
        "deleted": None, "views": 0, "downloads": 0, "volume": 0}
    return deposit_row, record_row


def _write_buckets(conn: Connection, ids: Sequence[str], files: Sequence[tuple[str, StoredFile]],
                   created: dt.datetime) -> None:
    """The deposit's bucket and the record's, both locked and holding the same file instances, as a publish leaves
    them (`files.buckets.snapshot`), in a few statements whatever the number of files: bulk imports write many."""
    now = utcnow()
    conn.execute(insert(bucket_rows), [{"id": b, "locked": True, "created": created, "updated": created} for b in ids])
    if not files:
        return
    keys = [check_key(key) for key, _stored in files]
    if len(set(keys)) != len(keys):
        raise ValueError("two files have the same name")
    conn.execute(insert(file_instances), [
        {"id": stored.id, "uri": stored.uri, "size": stored.size, "checksum": stored.checksum,
         "sha256": stored.sha256, "created": now} for _key, stored in files])
    conn.execute(insert(objects), [
        {"version_id": str(uuid.uuid4()), "bucket_id": bucket, "key": key, "file_id": stored.id,
         "mimetype": guess_mimetype(key), "position": position, "created": now, "updated": now}
        for bucket in ids for position, (key, (_name, stored)) in enumerate(zip(keys, files, strict=True), 1)])


def naive_utc(value: str) -> dt.datetime:
    """A record's ISO 8601 time (`2026-03-01T12:00:00+00:00`) as the tables keep times: naive UTC."""
    return dt.datetime.fromisoformat(value).astimezone(dt.UTC).replace(tzinfo=None)


def _new_id(conn: Connection, kind: str, created: dt.datetime, wanted: int | None) -> int:
    values: dict[str, Any] = {"kind": kind, "created": created}
    if wanted is not None:
        values["id"] = wanted
    return int(conn.execute(insert(recids).values(**values).returning(recids.c.id)).scalar_one())
