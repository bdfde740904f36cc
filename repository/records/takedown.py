"""Taking a published record down: it stays as a tombstone (410 on the API, `status="deleted"` in OAI-PMH),
leaves the search index, and its DOI is hidden at the agency — all through the outbox, so nothing is lost."""

from __future__ import annotations

from sqlalchemy import Connection, insert, select, update

from repository.errors import BadRequest, NotFound
from repository.records import build as records_mod
from repository.storage.tables.deposits import outbox, records
from repository.timeutil import utcnow


def take_down(conn: Connection, recid: int) -> None:
    """Mark record `recid` deleted (its datestamp moves, so harvesters see the deletion) and queue the rest."""
    row = conn.execute(
        select(records.c.deleted, records.c.conceptrecid).where(records.c.id == recid).with_for_update()
    ).first()
    if row is None:
        raise NotFound(f"Record {recid} does not exist.")
    if row.deleted is not None:
        raise BadRequest(f"Record {recid} is already deleted.")
    now = utcnow()
    conn.execute(update(records).where(records.c.id == recid).values(deleted=now, updated=now))
    for kind in ("index", "hide_doi"):
        conn.execute(insert(outbox).values(kind=kind, recid=recid, created=now, attempts=0))
    # The other versions change too (their count, which one is the last): a new revision and datestamp, and
    # indexed again, as after a new version.
    for sibling in records_mod.touch_versions(conn, row.conceptrecid, now):
        conn.execute(insert(outbox).values(kind="index", recid=sibling, created=now, attempts=0))
