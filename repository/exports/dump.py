"""Loading a full public export into an empty instance (`repository-admin import dump`), as a migration between
instances: every record keeps its id, its concept id, its versions, its revision and times, its DOI and concept DOI
(never registered again: the records are marked as carrying external DOIs) and its metadata. The export's checksum
is verified first; a wrong one is refused before anything is written. A rerun loads only what is missing
(docs/operators/export.md#loading-an-export)."""

from __future__ import annotations

import gzip
import hashlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson
from sqlalchemy import select, text

from repository.deposits.imported import ImportedRecord, deposit_metadata, naive_utc, write_published
from repository.errors import ValidationError
from repository.exports import folder
from repository.metadata import MetadataLookups
from repository.metadata.rules import validate_for_publish
from repository.records.lookups import DatabaseLookups
from repository.storage import Database
from repository.storage.tables.records import recids

BATCH = 500
CHUNK = 1 << 20


class DumpError(Exception):
    """The export cannot be loaded (not an export, a wrong checksum, not an empty instance): nothing was written."""


@dataclass
class LoadReport:
    """What a load did: records loaded now, already there (an earlier run's), and failed (id, reason)."""

    loaded: int = 0
    skipped: int = 0
    failed: list[tuple[int, str]] = field(default_factory=list)
    dropped_communities: int = 0


def open_export(path: str) -> tuple[str, dict[str, Any]]:
    """The folder and manifest of the export at `path` (its folder or its manifest.json), its records file checked
    against the manifest's SHA-256 and size; DumpError otherwise."""
    where = os.path.dirname(path) if os.path.basename(path) == folder.MANIFEST else path
    try:
        with open(os.path.join(where, folder.MANIFEST), "rb") as handle:
            manifest = orjson.loads(handle.read())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise DumpError(f"{path} is not an export: no readable {folder.MANIFEST} ({exc})") from exc
    about = manifest.get("files", {}).get(folder.JSONL) if isinstance(manifest, dict) else None
    if manifest.get("export_format") != 1 or not isinstance(about, dict) or "sha256" not in about:
        raise DumpError(f"{path}: not an export of format 1 (or its manifest lacks {folder.JSONL}'s checksum)")
    digest, size = hashlib.sha256(), 0
    try:
        with open(os.path.join(where, folder.JSONL), "rb") as handle:
            while chunk := handle.read(CHUNK):
                digest.update(chunk)
                size += len(chunk)
    except OSError as exc:
        raise DumpError(f"{path}: {folder.JSONL} cannot be read ({exc})") from exc
    if digest.hexdigest() != about["sha256"] or size != about.get("size", size):
        raise DumpError(f"{path}: {folder.JSONL} does not match the manifest's SHA-256 (a damaged or altered "
                        "download): nothing loaded")
    return where, manifest


def lines(where: str) -> Iterator[dict[str, Any]]:
    """The records of the export in `where`, one at a time."""
    try:
        with gzip.open(os.path.join(where, folder.JSONL), "rb") as handle:
            for line in handle:
                yield orjson.loads(line)
    except (OSError, EOFError, orjson.JSONDecodeError) as exc:
        raise DumpError(f"{where}: {folder.JSONL} is not gzipped JSON Lines ({exc})") from exc


def load(db: Database, path: str, owner_id: int, batch: int = BATCH,
         progress: Callable[[int], object] | None = None) -> LoadReport:
    """Load the export at `path` into this instance, owned by user `owner_id`: refused (DumpError, nothing
    written) unless its checksum holds and the instance holds no record id, concept id or deposit but the
    export's. Records already loaded are skipped; each batch is one transaction, indexed after its commit."""
    where, _manifest = open_export(path)
    ours: set[int] = set()
    for record in lines(where):
        ours.update((int(record["id"]), int(record["conceptrecid"])))
    with db.read() as conn:
        present = set(conn.execute(select(recids.c.id)).scalars())
    strangers = present - ours
    if strangers:
        raise DumpError(f"not an empty instance: it holds {len(strangers)} record, concept or deposit id(s) the "
                        f"export does not (the smallest: {min(strangers)})")
    report = LoadReport()
    pending: list[dict[str, Any]] = []
    for record in lines(where):
        if int(record["id"]) in present:
            report.skipped += 1
            continue
        pending.append(record)
        if len(pending) >= batch:
            _load_batch(db, pending, owner_id, present, report)
            pending = []
            if progress is not None:
                progress(report.loaded + report.skipped)
    if pending:
        _load_batch(db, pending, owner_id, present, report)
    if db.engine.dialect.name == "postgresql":  # new deposits take ids after the loaded ones
        with db.write() as conn:
            conn.execute(text("SELECT setval(pg_get_serial_sequence('recids', 'id'), "
                              "(SELECT coalesce(max(id), 1) FROM recids))"))
    return report


def _load_batch(db: Database, batch: list[dict[str, Any]], owner_id: int, present: set[int],
                report: LoadReport) -> None:
    with db.write() as conn:
        lookups = DatabaseLookups(conn)
        for record in batch:
            try:
                imported = _imported(record, lookups, report)
            except (ValidationError, KeyError, TypeError, ValueError) as exc:
                report.failed.append((int(record.get("id", 0)), reason(exc)))
                continue
            concept = int(record["conceptrecid"])
            write_published(conn, owner_id, imported, concept, new_concept=concept not in present)
            present.update((int(record["id"]), concept))
            report.loaded += 1


def reason(exc: Exception) -> str:
    """An exception as a report's line: the fields a validation error names, or the exception itself."""
    errors = getattr(exc, "errors", None)
    if errors:
        return "; ".join(f"{e.get('field')}: {e.get('message')}" for e in errors)
    return f"{type(exc).__name__}: {exc}"


def _imported(record: dict[str, Any], lookups: MetadataLookups, report: LoadReport) -> ImportedRecord:
    """What a publish would have written for `record` (an export line), its metadata validated as a deposit's."""
    deposited, communities = deposit_metadata(record)
    if communities:
        report.dropped_communities += 1
    metadata = validate_for_publish(deposited, lookups)
    return ImportedRecord(metadata=metadata, doi=str(record["doi"]), conceptdoi=record.get("conceptdoi"),
                          created=naive_utc(record["created"]), updated=naive_utc(record["updated"]),
                          revision=int(record.get("revision", 1)), recid=int(record["id"]))
