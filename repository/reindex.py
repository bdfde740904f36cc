"""Rebuild the search index from the database, swap it in atomically, and check parity (records at revisions).

A rebuild streams the engine-ready documents kept in built_records into a new index through the engine's bulk path;
records whose stored document is missing or stale are built again on the way (and stored for the next time)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from sqlalchemy import select

from repository import built_records
from repository.config import Settings
from repository.search.backend import SearchBackend, compare_revisions
from repository.storage import Database
from repository.storage.tables_deposits import records


def published_revisions(db: Database) -> dict[int, int]:
    """recid -> revision of every published, not deleted record: what the index must hold."""
    with db.read() as conn:
        query = select(records.c.id, records.c.revision).where(records.c.deleted.is_(None))
        return {row.id: row.revision for row in conn.execute(query)}


def rebuild(db: Database, settings: Settings, search: SearchBackend, progress: Callable[[int], None],
            rebuild_all: bool = False) -> int:
    """Build a new index beside the live one, load every record, swap; returns how many were loaded. Writes made
    meanwhile reach both indexes. `rebuild_all` builds every record again instead of reading stored documents."""
    search.create_new_index()

    def stream() -> Iterator[built_records.Entry]:
        for batch in built_records.documents(db, settings, search, rebuild_all=rebuild_all):
            yield from batch
            progress(len(batch))

    loaded = search.load_documents(stream())
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
