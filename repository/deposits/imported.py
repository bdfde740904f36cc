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
    _write_buckets(conn, [((deposit_row["bucket_id"], record_row["bucket_id"]), record.files, record.created)])
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
    if any(r.files or r.recid is not None or r.metadata.get("communities") for r in batch):
        raise ValueError("write_new_concepts takes records without files, kept ids or communities")
    return write_versions(conn, owner_id, [(None, [record]) for record in batch])


def write_versions(conn: Connection, owner_id: int,
                   batch: Sequence[tuple[int | None, Sequence[ImportedRecord]]]) -> list[tuple[int, int]]:
    """Write many published versions as `write_published` does one by one, in a few statements for the whole
    batch (docs/operators/migration.md#running-it-again): each entry is a concept (its id here, or None for a new
    one) with its new versions in order. The ids are taken from the shared sequence in that order (a new concept's
    before its first version's), so versions number as they would one by one. The records must have been checked
    (`check_files`, the publish rules): a bad one fails the whole batch. Returns (record id, concept id) of each
    version, in order."""
    if any(r.recid is not None for _concept, versions in batch for r in versions):
        raise ValueError("write_versions takes records without kept ids")
    batch = [(concept, versions) for concept, versions in batch if versions]
    ids: list[dict[str, Any]] = []
    for concept, versions in batch:
        ids += [{"kind": "concept", "created": versions[0].created}] if concept is None else []
        ids += [{"kind": "record", "created": record.created} for record in versions]
    taken = iter(conn.execute(insert(recids).returning(recids.c.id, sort_by_parameter_order=True), ids).scalars())
    new_concepts: list[dict[str, Any]] = []
    written: list[tuple[ImportedRecord, int, int]] = []  # (record, record id, concept id)
    for concept, versions in batch:
        if concept is None:
            concept = int(next(taken))
            new_concepts.append(_concept_row(concept, owner_id, versions[0]))
        written += [(record, int(next(taken)), concept) for record in versions]
    if not written:
        return []
    rows = [_rows(owner_id, record, concept, recid) for record, recid, concept in written]
    if new_concepts:
        conn.execute(insert(concepts), new_concepts)
    _write_buckets(conn, [((deposit_row["bucket_id"], record_row["bucket_id"]), record.files, record.created)
                          for (record, _recid, _concept), (deposit_row, record_row) in zip(written, rows, strict=True)])
    conn.execute(insert(deposits), [deposit_row for deposit_row, _record_row in rows])
    conn.execute(insert(records), [record_row for _deposit_row, record_row in rows])
    for record, recid, concept in written:  # in version order: a later version sees the requests of an earlier one
        if record.metadata.get("communities"):
            sync_on_publish(conn, concept, recid, owner_id, record.metadata)
    outbox.enqueue_many(conn, "index", [recid for _record, recid, _concept in written])
    return [(recid, concept) for _record, recid, concept in written]


def check_files(files: Sequence[tuple[str, StoredFile]]) -> list[str]:
    """The keys of `files` as a record keeps them; ValueError when they cannot be a record's: a key the file
    rules refuse, or two files of the same name."""
    keys = [check_key(key) for key, _stored in files]
    if len(set(keys)) != len(keys):
        raise ValueError("two files have the same name")
    return keys


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


def _write_buckets(conn: Connection, versions: Sequence[tuple[Sequence[str], Sequence[tuple[str, StoredFile]],
                                                      dt.datetime]]) -> None:
    """For each version (its two bucket ids, its files, its time): the deposit's bucket and the record's, both
    locked and holding the same file instances, as a publish leaves them (`files.buckets.snapshot`), in a few
    statements whatever the number of versions and files: bulk imports write many."""
    now = utcnow()
    conn.execute(insert(bucket_rows), [{"id": b, "locked": True, "created": created, "updated": created}
                                       for ids, _files, created in versions for b in ids])
    instances, entries = [], []
    for ids, files, _created in versions:
        keys = check_files(files)
        instances += [{"id": stored.id, "uri": stored.uri, "size": stored.size, "checksum": stored.checksum,
                       "sha256": stored.sha256, "created": now} for _key, stored in files]
        entries += [{"version_id": str(uuid.uuid4()), "bucket_id": bucket, "key": key, "file_id": stored.id,
                     "mimetype": guess_mimetype(key), "position": position, "created": now, "updated": now}
                    for bucket in ids for position, (key, (_name, stored)) in enumerate(zip(keys, files, strict=True), 1)]
    if instances:
        conn.execute(insert(file_instances), instances)
        conn.execute(insert(objects), entries)


def naive_utc(value: str) -> dt.datetime:
    """A record's ISO 8601 time (`2026-03-01T12:00:00+00:00`) as the tables keep times: naive UTC."""
    return dt.datetime.fromisoformat(value).astimezone(dt.UTC).replace(tzinfo=None)


def _new_id(conn: Connection, kind: str, created: dt.datetime, wanted: int | None) -> int:
    values: dict[str, Any] = {"kind": kind, "created": created}
    if wanted is not None:
        values["id"] = wanted
    return int(conn.execute(insert(recids).values(**values).returning(recids.c.id)).scalar_one())
