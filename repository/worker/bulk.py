"""The batched load path: many published records written as `deposits.publish` writes them, one transaction per
batch, then indexed in bulk. For generated corpora (benchmarks) and migrations of already-validated metadata.

Each version becomes what a publish leaves behind: a record id (and a concept id for the first version) from the
shared sequence, the concept with its DOI, the deposit in `published` status (so the owner sees it) with its locked
bucket, the record with a locked snapshot bucket sharing the same file instances, the file contents written through
`FileStore`, the community inclusion requests (`communities.inclusions.sync_on_publish`). The metadata must already be
in the form `validate_for_publish` returns (the corpus test checks a sample); it is stored as given.

Differences from a publish, on purpose: no outbox rows (records are indexed here, in bulk, right after each commit)
and no DOI registration (records are marked integrated; bulk-loaded records are not real works).
"""

from __future__ import annotations

import io
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import Connection, func, insert, select, text

from repository.communities import inclusions
from repository.config import Settings
from repository.deposits import pids
from repository.files.keys import guess_mimetype
from repository.files.store import FileStore, StoredFile
from repository.records import stored
from repository.records.access import access_columns
from repository.records.lookups import DatabaseLookups
from repository.records.render_context import render_context
from repository.search.backend import SearchBackend
from repository.storage import Database, dictionaries
from repository.storage.tables.deposits import deposits
from repository.storage.tables.files import buckets, file_instances, objects
from repository.storage.tables.records import concepts, recids, records
from repository.vocabularies.resource_types import type_columns

BATCH_RECORDS = 1000
FILE_THREADS = 4  # files are written without their own fsyncs (one syncfs per batch): a few writers suffice


@dataclass
class Version:
    """One published version: validated deposit metadata, its files (key, bytes) and when it was published."""

    metadata: dict
    files: list[tuple[str, bytes]]
    created: datetime


@dataclass
class Concept:
    """A record and its versions (oldest first), all owned by `owner_id`."""

    owner_id: int
    versions: list[Version]


@dataclass
class LoadReport:
    """What a load did and where its time went (seconds per phase)."""

    records: int = 0
    concepts: int = 0
    files: int = 0
    seconds: float = 0.0
    phases: dict[str, float] = field(default_factory=lambda: {
        "wait_input": 0.0, "files": 0.0, "database": 0.0, "build": 0.0, "index": 0.0, "swap": 0.0,
        "dictionaries": 0.0})

    @property
    def rate(self) -> float:
        return self.records / self.seconds if self.seconds else 0.0


def batches(concepts_: Iterable[Concept], size: int) -> Iterator[list[Concept]]:
    """Concepts grouped so each batch holds about `size` records; a concept's versions stay together."""
    batch: list[Concept] = []
    count = 0
    for concept in concepts_:
        batch.append(concept)
        count += len(concept.versions)
        if count >= size:
            yield batch
            batch, count = [], 0
    if batch:
        yield batch


class BulkLoader:
    """Loads concepts batch by batch. Into an empty repository it builds a new index and swaps it in at the end
    (`search.bulk_load`); otherwise it upserts into the live index (`search.index`) after each batch."""

    def __init__(self, db: Database, settings: Settings, search: SearchBackend, store: FileStore,
                 file_threads: int = FILE_THREADS) -> None:
        self.db, self.settings, self.search, self.store = db, settings, search, store
        self.file_threads = file_threads
        self.packed = False  # every kind of packed value has its zstd dictionary

    def load(self, concepts_: Iterable[Concept], batch_records: int = BATCH_RECORDS,
             progress: Callable[[int], object] | None = None) -> LoadReport:
        report = LoadReport()
        started = time.perf_counter()
        with self.db.read() as conn:
            empty = not conn.execute(select(func.count()).select_from(records)).scalar_one()
        # Into an empty repository, or resuming a load that was interrupted before its swap: build the new index.
        fresh = empty or self.search.building()
        if empty and not self.search.building():
            self.search.create_new_index()
        source = iter(batches(concepts_, batch_records))
        with ThreadPoolExecutor(self.file_threads, thread_name_prefix="bulk-files") as pool:
            # One batch ahead: its files are written by the pool while this thread writes and indexes the last.
            pending: tuple[list[Concept], list[list[Future]]] | None = None
            while True:
                mark = time.perf_counter()
                batch = next(source, None)
                report.phases["wait_input"] += time.perf_counter() - mark
                if batch is not None:
                    futures = [[pool.submit(self.store.write, io.BytesIO(data), None, False) for _key, data in version.files]
                               for concept in batch for version in concept.versions]
                if pending is not None:
                    self._load_batch(*pending, fresh, report)
                    if progress is not None:
                        progress(sum(len(c.versions) for c in pending[0]))
                if batch is None:
                    break
                pending = (batch, futures)
        if fresh:
            mark = time.perf_counter()
            self.search.swap()
            report.phases["swap"] += time.perf_counter() - mark
        report.seconds = time.perf_counter() - started
        return report

    def _load_batch(self, batch: list[Concept], futures: list[list[Future]], fresh: bool,
                    report: LoadReport) -> None:
        mark = time.perf_counter()
        stored_files: list[list[StoredFile]] = []
        try:
            for group in futures:
                stored_files.append([f.result() for f in group])
            self.store.sync()  # the files reach the disk before the rows that point at them are committed
        except BaseException:
            self._remove(futures)
            raise
        report.phases["files"] += time.perf_counter() - mark

        mark = time.perf_counter()
        try:
            with self.db.write() as conn:
                rows = self._write(conn, batch, stored_files)
        except BaseException:
            self._remove(futures)
            raise
        report.phases["database"] += time.perf_counter() - mark

        mark = time.perf_counter()
        with self.db.read() as conn:
            derived = stored.derive(conn, self.settings, DatabaseLookups(conn),
                                           render_context(self.settings, self.db), rows)
        with self.db.write() as conn:  # the stored copies before the index, as the indexer writes them
            entries = stored.save(conn, self.settings, self.search, derived)
        docs = derived.docs
        report.phases["build"] += time.perf_counter() - mark

        mark = time.perf_counter()
        if fresh:
            self.search.bulk_load(docs, batch_size=len(docs))
        else:  # the engine-ready documents the stored copies were made of: not made twice
            self.search.index_documents(entries)
        report.phases["index"] += time.perf_counter() - mark
        report.records += len(rows)
        report.concepts += len(batch)
        report.files += sum(len(group) for group in stored_files)
        if not self.packed:  # once there are enough values: later batches are packed with the dictionaries
            mark = time.perf_counter()
            dictionaries.ensure(self.db)
            with self.db.read() as conn:
                self.packed = set(dictionaries.newest(conn)) >= set(dictionaries.KINDS)
            report.phases["dictionaries"] += time.perf_counter() - mark

    def _remove(self, futures: list[list[Future]]) -> None:
        """A failed batch leaves no file behind (`FileStore.sweep` would find them later anyway)."""
        for group in futures:
            for future in group:
                if not future.cancel() and future.exception() is None:
                    self.store.remove(future.result().uri)

    def _take_ids(self, conn: Connection, count: int) -> int:
        """Reserve `count` consecutive ids of the shared sequence; returns the first."""
        if conn.dialect.name == "postgresql":
            conn.execute(text("LOCK TABLE recids IN EXCLUSIVE MODE"))
        return (conn.execute(select(func.max(recids.c.id))).scalar() or 0) + 1

    def _write(self, conn: Connection, batch: list[Concept], stored_files: list[list[StoredFile]]) -> list[dict]:
        """Insert every row of the batch (executemany per table); returns the records rows as stored."""
        settings = self.settings
        total_ids = sum(1 + len(c.versions) for c in batch)
        next_id = self._take_ids(conn, total_ids)
        rows: dict[str, list[dict]] = {name: [] for name in (
            "recids", "concepts", "buckets", "file_instances", "objects", "deposits", "records")}
        community_asks: list[tuple[int, int, int, dict]] = []
        files_iter = iter(stored_files)
        for concept in batch:
            concept_id = next_id
            next_id += 1
            first = concept.versions[0].created
            rows["recids"].append({"id": concept_id, "kind": "concept", "created": first})
            rows["concepts"].append({"id": concept_id, "owner_id": concept.owner_id, "created": first,
                                     "lock_version": 0, "conceptdoi": pids.service_doi(settings, concept_id)})
            asks = any(v.metadata.get("communities") for v in concept.versions)
            for version in concept.versions:
                recid = next_id
                next_id += 1
                now = version.created
                rows["recids"].append({"id": recid, "kind": "record", "created": now})
                deposit_bucket, record_bucket = str(uuid.uuid4()), str(uuid.uuid4())
                for bucket_id in (deposit_bucket, record_bucket):
                    rows["buckets"].append({"id": bucket_id, "locked": True, "created": now, "updated": now})
                for position, ((key, _data), done) in enumerate(
                        zip(version.files, next(files_iter), strict=True), start=1):
                    rows["file_instances"].append({"id": done.id, "uri": done.uri, "size": done.size,
                                                   "checksum": done.checksum, "sha256": done.sha256,
                                                   "created": now})
                    for bucket_id in (deposit_bucket, record_bucket):
                        rows["objects"].append({
                            "version_id": str(uuid.uuid4()), "bucket_id": bucket_id, "key": key,
                            "file_id": done.id, "mimetype": guess_mimetype(key), "position": position,
                            "created": now, "updated": now})
                doi = pids.service_doi(settings, recid)
                rows["deposits"].append({
                    "id": recid, "conceptrecid": concept_id, "owner_id": concept.owner_id, "status": "published",
                    "editing": False, "metadata": None, "doi": doi, "doi_external": False,  # the record's
                    "prereserved": False, "bucket_id": deposit_bucket, "created": now, "modified": now})
                rows["records"].append({
                    "id": recid, "conceptrecid": concept_id, "owner_id": concept.owner_id,
                    "metadata": version.metadata, **type_columns(version.metadata), "doi": doi.lower(),
                    "doi_external": False,
                    "bucket_id": record_bucket, "revision": 1, "integrated": True,
                    **access_columns(version.metadata), "created": now, "updated": now,
                    "deleted": None, "views": 0, "downloads": 0, "volume": 0})
                if asks:
                    community_asks.append((concept_id, recid, concept.owner_id, version.metadata))
        for name, table in (("recids", recids), ("concepts", concepts), ("buckets", buckets),
                            ("file_instances", file_instances), ("objects", objects), ("deposits", deposits),
                            ("records", records)):
            if rows[name]:
                conn.execute(insert(table), rows[name])
        for concept_id, recid, owner_id, metadata in community_asks:  # version by version, as each publish did
            inclusions.sync_on_publish(conn, concept_id, recid, owner_id, metadata)
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT setval(pg_get_serial_sequence('recids', 'id'), (SELECT max(id) FROM recids))"))
        return rows["records"]
