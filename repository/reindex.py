"""Rebuild the search index from the database, swap it in atomically, and check parity (records at revisions)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from sqlalchemy import select

from repository import records as records_mod
from repository.config import Settings
from repository.search.backend import SearchBackend, compare_revisions
from repository.search.documents import to_index_document
from repository.storage import Database
from repository.storage.tables_deposits import records
from repository.vocabularies.lookups import DatabaseLookups

BATCH = 1000


def published_revisions(db: Database) -> dict[int, int]:
    """recid -> revision of every published, not deleted record: what the index must hold."""
    with db.read() as conn:
        query = select(records.c.id, records.c.revision).where(records.c.deleted.is_(None))
        return {row.id: row.revision for row in conn.execute(query)}


def documents(db: Database, settings: Settings, batch: int = BATCH) -> Iterator[list[dict]]:
    """Index documents of every published record, a batch at a time (a keyset scan over the id)."""
    last = 0
    while True:
        with db.read() as conn:
            ids = list(
                conn.execute(
                    select(records.c.id)
                    .where(records.c.id > last, records.c.deleted.is_(None))
                    .order_by(records.c.id)
                    .limit(batch)
                ).scalars()
            )
            if not ids:
                return
            rows = records_mod.get_rows(conn, ids)
            built = records_mod.build_records(conn, settings, DatabaseLookups(conn), rows)
        yield [to_index_document(record) for record in built]
        last = ids[-1]


def rebuild(db: Database, settings: Settings, search: SearchBackend, progress: Callable[[int], None]) -> int:
    """Build a new index beside the live one, load every record, swap; returns how many were loaded."""
    search.create_new_index()
    loaded = 0
    for docs in documents(db, settings):
        loaded += search.bulk_load(docs)
        progress(len(docs))
    search.swap()
    return loaded


def check(db: Database, search: SearchBackend) -> list[str]:
    """The differences between the index and the database (empty when they agree)."""
    expected = published_revisions(db)
    indexed = search.get_revisions()
    parity = compare_revisions(expected, indexed)
    return (
        [f"record {r} is missing from the index" for r in parity.missing]
        + [f"record {r} is in the index but not published" for r in parity.extra]
        + [f"record {r} is indexed at revision {indexed[r]}, the database has {expected[r]}" for r in parity.stale]
    )
