"""The import ledger (table `import_ledger`): per source, which of its records and concepts were imported and as
which local ids, and why the last attempt at the others failed. A record's row is written in the transaction
that writes the record, so the ledger never claims what is not there (docs/operators/migration.md#the-import-ledger)."""

from __future__ import annotations

from sqlalchemy import Connection, insert, select, update

from repository.storage import Database
from repository.storage.tables.import_ledger import import_ledger
from repository.timeutil import utcnow

RECORD, CONCEPT = "record", "concept"


def imported(db: Database, source: str) -> dict[tuple[str, str], int]:
    """What was imported from `source`: local ids by (kind, source id)."""
    query = select(import_ledger.c.kind, import_ledger.c.source_id, import_ledger.c.local_id).where(
        import_ledger.c.source == source, import_ledger.c.status == "imported")
    with db.read() as conn:
        return {(kind, source_id): int(local) for kind, source_id, local in conn.execute(query)}


def failures(db: Database, source: str) -> dict[str, str]:
    """The reasons of the records of `source` whose last attempt failed, by source id."""
    query = select(import_ledger.c.source_id, import_ledger.c.reason).where(
        import_ledger.c.source == source, import_ledger.c.kind == RECORD, import_ledger.c.status == "failed")
    with db.read() as conn:
        return {source_id: reason or "" for source_id, reason in conn.execute(query)}


def mark(conn: Connection, source: str, kind: str, source_id: str, local_id: int | None,
         reason: str | None = None, new: bool = False) -> None:
    """Note that `source_id` of `source` is now `local_id` here, or (`local_id` None) failed for `reason`; `new`:
    the caller knows the ledger has no row for it yet (one statement instead of two)."""
    values = {"local_id": local_id, "status": "failed" if local_id is None else "imported", "reason": reason,
              "updated": utcnow()}
    where = (import_ledger.c.source == source, import_ledger.c.kind == kind, import_ledger.c.source_id == source_id)
    if new or conn.execute(update(import_ledger).where(*where).values(**values)).rowcount == 0:
        conn.execute(insert(import_ledger).values(source=source, kind=kind, source_id=source_id, **values))
