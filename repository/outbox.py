"""The outbox: every change to a published record leaves a row in the same transaction (`enqueue`, or `enqueue_many`
for a batch: the only ways to add one); right after the commit the process's indexer applies it (`repository.worker.indexer`), and what fails
is retried later by the background worker. Applying a row reads the current database state, so applying it
twice, or late, is harmless: no update is ever lost, not even by a crash between the commit and the apply."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from sqlalchemy import Connection, RowMapping, insert, select, update

from repository.storage.engine import after_commit
from repository.storage.tables.outbox import outbox
from repository.timeutil import utcnow

# The after-commit work that applies the rows just committed, wired on the Database by the process's indexer: APPLY
# indexes them before the request returns (searchable at once); REGISTER hands the DOI rows to a thread of the process,
# so no request waits for the DOI agency (docs/architecture/decisions.md#doi-registration-in-the-background).
APPLY = "outbox.apply"
REGISTER = "outbox.register"
INDEX_KINDS = ("index",)
DOI_KINDS = ("register_doi", "hide_doi")
MAX_BACKOFF_SECONDS = 600
# The worker leaves a new row this long to the request that wrote it (which applies it right after its commit):
# applying it at the same moment from another process would only write the same documents twice.
GRACE_SECONDS = 10.0


def enqueue(conn: Connection, kind: str, recid: int) -> None:
    """Queue `kind` ("index", "register_doi", "hide_doi") for record `recid` in the caller's transaction; once it
    commits an index row is applied at once, so the change is searchable when the request returns, and a DOI row
    right after, in the background."""
    conn.execute(insert(outbox).values(kind=kind, recid=recid, created=utcnow(), attempts=0))
    after_commit(conn, APPLY if kind in INDEX_KINDS else REGISTER)


def enqueue_many(conn: Connection, kind: str, recids: Sequence[int]) -> None:
    """`enqueue` for many records in one statement (a bulk import's batch: applied together after its commit)."""
    if recids:
        now = utcnow()
        conn.execute(insert(outbox), [{"kind": kind, "recid": recid, "created": now, "attempts": 0} for recid in recids])
        after_commit(conn, APPLY if kind in INDEX_KINDS else REGISTER)


def due(conn: Connection, limit: int, grace: float, now: dt.datetime | None = None, kinds: Sequence[str] = (),
        recid: int | None = None) -> Sequence[RowMapping]:
    """Up to `limit` rows to apply now (or at `now`), oldest first: retries whose time has come, and untried rows
    older than `grace` seconds (younger ones are left to the request that wrote them); only of `kinds` and of record
    `recid` when given."""
    now = now or utcnow()
    untried = outbox.c.not_before.is_(None) & (outbox.c.created <= now - dt.timedelta(seconds=grace))
    query = select(outbox).where(outbox.c.done.is_(None), untried | (outbox.c.not_before <= now))
    if kinds:
        query = query.where(outbox.c.kind.in_(kinds))
    if recid is not None:
        query = query.where(outbox.c.recid == recid)
    return conn.execute(query.order_by(outbox.c.id).limit(limit)).mappings().all()


def mark_done(conn: Connection, ids: list[int]) -> None:
    conn.execute(update(outbox).where(outbox.c.id.in_(ids)).values(done=utcnow()))


def mark_failed(conn: Connection, rows: Sequence[RowMapping], error: str, retryable: bool) -> None:
    """Count a failed attempt of each row and set its next try: exponential backoff, at most MAX_BACKOFF_SECONDS
    (at once the longest for an error that would fail the same way again)."""
    for row in rows:
        attempts = row["attempts"] + 1
        delay = min(MAX_BACKOFF_SECONDS, 2**attempts) if retryable else MAX_BACKOFF_SECONDS
        conn.execute(
            update(outbox)
            .where(outbox.c.id == row["id"])
            .values(attempts=attempts, last_error=error[:2000], not_before=utcnow() + dt.timedelta(seconds=delay))
        )
