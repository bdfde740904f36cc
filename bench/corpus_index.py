"""The generated corpus as an index alone: each record built and turned into its search document with the code the
indexer uses, bulk-indexed, with no records rows and no files (`generate_corpus.py --index-only`).

Why: `bench/search_bench.py` reads the index only (`EmbeddedBackend(<instance>/index)`), and a full load
(database rows, stored copies, renditions, files) runs at about a hundred records a second on a shared two-core
machine, so a million records would take hours. Here each concept of the corpus (the same `Corpus.concept(i)` as a
full load's) gets the ids, DOIs, buckets and file objects a full load into an empty repository gives it, in the
same order; its records are built by `repository.records.build` from those rows as `build_records` builds them from
the database (zero usage counts, the communities whose owner is the record's owner accepted, as
`inclusions.sync_on_publish` accepts them), and `repository.search.documents.to_index_document` makes their
documents. The instance's database holds the vocabularies, users and communities only (licences and grants are
looked up there, as the indexer looks them up). What differs from a full load: the file ids and bucket ids are
fresh UUIDs (a full load's are too), and nothing but the index can serve the records: the instance is for the
one-process search benchmark, not for a server.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import Callable, Iterable, Iterator

from repository.config import Settings
from repository.deposits import pids
from repository.files.keys import guess_mimetype
from repository.records import build
from repository.records.access import access_columns
from repository.records.lookups import DatabaseLookups
from repository.search.documents import to_index_document
from repository.storage import Database
from repository.storage.tables.communities import communities
from repository.vocabularies.resource_types import type_columns
from repository.worker.bulk import Concept

BATCH = 2000  # documents per bulk-load call (one index commit each)


def community_owners(db: Database) -> dict[str, int]:
    """identifier -> owner id of every community (whose owner's records it accepts at once)."""
    from sqlalchemy import select

    with db.read() as conn:
        return dict(conn.execute(select(communities.c.identifier, communities.c.owner_id)).all())


def records_of(settings: Settings, lookups: DatabaseLookups, owners: dict[str, int], concept: Concept,
               concept_id: int) -> list[dict]:
    """The built records of `concept`, whose concept id is `concept_id` and versions the ids after it (as
    `BulkLoader._write` numbers them)."""
    conceptdoi = pids.service_doi(settings, concept_id)
    recids = [concept_id + 1 + n for n in range(len(concept.versions))]
    wanted = {c["identifier"] for v in concept.versions for c in v.metadata.get("communities") or []}
    accepted = sorted(c for c in wanted if owners.get(c) == concept.owner_id)
    built = []
    for recid, version in zip(recids, concept.versions, strict=True):
        now = version.created
        bucket = str(uuid.uuid4())
        objs: list = [{
            "version_id": str(uuid.uuid4()), "bucket_id": bucket, "key": key, "file_id": str(uuid.uuid4()),
            "mimetype": guess_mimetype(key), "position": position, "created": now, "updated": now,
            "size": len(data), "checksum": "md5:" + hashlib.md5(data, usedforsecurity=False).hexdigest(),
            "sha256": hashlib.sha256(data).hexdigest(), "uri": ""}
            for position, (key, data) in enumerate(version.files, start=1)]
        doi = pids.service_doi(settings, recid)
        row = {"id": recid, "conceptrecid": concept_id, "owner_id": concept.owner_id, "metadata": version.metadata,
               **type_columns(version.metadata), "doi": doi.lower(), "doi_external": False, "bucket_id": bucket,
               "revision": 1, "integrated": True, **access_columns(version.metadata), "created": now,
               "updated": now, "deleted": None}
        built.append(build.build_unread(settings, lookups, row, conceptdoi, recids, accepted, objs))
    return built


def documents(settings: Settings, db: Database, source: Iterable[Concept]) -> Iterator[dict]:
    """The index documents of the concepts of `source`, ids numbered from 1 as in an empty repository."""
    owners = community_owners(db)
    next_id = 1
    with db.read() as conn:
        lookups = DatabaseLookups(conn)
        for concept in source:
            for record in records_of(settings, lookups, owners, concept, next_id):
                yield to_index_document(record)
            next_id += 1 + len(concept.versions)


def load(settings: Settings, db: Database, search, source: Iterable[Concept],  # type: ignore[no-untyped-def]
         progress: Callable[[int], object]) -> tuple[int, float]:
    """Build a new index of `source`'s documents and swap it in; returns (documents, seconds)."""
    started = time.perf_counter()
    if search.building():
        raise SystemExit("an index is being built in this instance: start from a new INSTANCE_PATH")
    search.create_new_index()
    loaded, batch = 0, []
    for doc in documents(settings, db, source):
        batch.append(doc)
        if len(batch) >= BATCH:
            loaded += search.bulk_load(batch, batch_size=BATCH)
            progress(len(batch))
            batch = []
    if batch:
        loaded += search.bulk_load(batch, batch_size=BATCH)
        progress(len(batch))
    search.swap()
    return loaded, time.perf_counter() - started
