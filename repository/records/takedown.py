"""Taking a published record down: it stays as a tombstone (410 on the API, `status="deleted"` in OAI-PMH),
leaves the search index, and its DOI is hidden at the agency — all through the outbox, so nothing is lost."""

from __future__ import annotations

from sqlalchemy import Connection, delete, select, update

from repository import outbox
from repository.errors import BadRequest, NotFound
from repository.records.build import touch_versions
from repository.storage.tables.corrections import deletion_requests
from repository.storage.tables.moderation import record_reviews
from repository.storage.tables.records import records
from repository.timeutil import utcnow


def take_down(conn: Connection, recid: int) -> None:
    """Mark record `recid` deleted (its datestamp moves, so harvesters see the deletion) and queue the rest: once
    the caller's transaction commits, the record is out of search and OAI-PMH shows the deletion."""
    row = conn.execute(
        select(records.c.deleted, records.c.conceptrecid).where(records.c.id == recid).with_for_update()
    ).first()
    if row is None:
        raise NotFound(f"Record {recid} does not exist.")
    if row.deleted is not None:
        raise BadRequest(f"Record {recid} is already deleted.")
    now = utcnow()
    # Out of review too (docs/operators/moderation.md): restoring it makes it public.
    conn.execute(update(records).where(records.c.id == recid).values(deleted=now, updated=now, review=None))
    conn.execute(delete(record_reviews).where(record_reviews.c.recid == recid))
    # The owner's requests to delete it are answered (docs/operators/corrections.md).
    conn.execute(update(deletion_requests).where(deletion_requests.c.recid == recid, deletion_requests.c.closed.is_(None))
                 .values(closed=now))  # fmt: skip
    for kind in ("index", "hide_doi"):
        outbox.enqueue(conn, kind, recid)
    # The other versions change too (their count, which one is the last): a new revision and datestamp, and
    # indexed again, as after a new version.
    for sibling in touch_versions(conn, row.conceptrecid, now):
        outbox.enqueue(conn, "index", sibling)
