"""The jobs page's facts (docs/operators/administration.md#jobs): the outbox and the mail outbox (pending, failing
with their last error), the last reindex check and fixity run with their findings, the database's size and the
free disk. The counts and sizes are the ones /metrics reports, from the same functions (repository.storage.status).
An administrator may retry a failing outbox entry now or drop it; both are audited."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import Connection, delete, insert, select, update

from repository.accounts import audit
from repository.accounts.audit import Actor
from repository.errors import NotFound
from repository.outbox import APPLY, INDEX_KINDS, REGISTER
from repository.storage import status
from repository.storage.engine import Database, after_commit
from repository.storage.tables.mail import mail_outbox
from repository.storage.tables.outbox import outbox
from repository.storage.tables.site import job_runs
from repository.timeutil import isoformat, utcnow

LISTED = 50  # entries of each queue the page lists (the counts are of all of them)
FINDINGS_KEPT = 200  # findings kept of one run (the command's own report has them all)
JOBS = ("reindex-check", "fixity")


@dataclass(frozen=True)
class Readings:
    """The numbers the jobs page and /metrics share."""

    outbox: status.Queue
    mail: status.Queue
    database_bytes: int
    disk_free_bytes: int | None  # None when no disk could be measured


def readings(conn: Connection, db: Database, files_root: str) -> Readings:
    """The queues, the database's size and the free disk, read now."""
    return Readings(status.index_outbox(conn), status.mail_queue(conn), status.database_bytes(conn),
                    status.disk_free_bytes(db, files_root))


def _entries(conn: Connection, table: Any, pending: Any, columns: list) -> list[dict]:
    query = select(*columns).where(pending).order_by(table.c.last_error.is_(None), table.c.id).limit(LISTED)
    # str(): the column names are SQLAlchemy's str subclass, which JSON encoders refuse as keys.
    return [{str(key): value for key, value in row.items()} for row in conn.execute(query).mappings()]


def overview(conn: Connection, db: Database, files_root: str) -> dict[str, Any]:
    """Everything the jobs page shows: the readings, the pending entries of both queues (failing ones first, each
    with its last error), and the last run of each check."""
    found = readings(conn, db, files_root)
    return {
        "readings": found,
        "outbox": _entries(conn, outbox, outbox.c.done.is_(None),
                           [outbox.c.id, outbox.c.kind, outbox.c.recid, outbox.c.created, outbox.c.attempts,
                            outbox.c.last_error, outbox.c.not_before]),
        "mail": _entries(conn, mail_outbox, mail_outbox.c.sent.is_(None),
                         [mail_outbox.c.id, mail_outbox.c.recipients, mail_outbox.c.created, mail_outbox.c.attempts,
                          mail_outbox.c.last_error, mail_outbox.c.not_before]),
        "runs": {job: last_run(conn, job) for job in JOBS},
    }


def overview_json(facts: dict[str, Any]) -> dict[str, Any]:
    """The overview as the API shows it."""
    found: Readings = facts["readings"]

    def when(entry: dict) -> dict:
        return {key: isoformat(value) if key in ("created", "not_before", "finished") else value
                for key, value in entry.items()}

    return {"outbox": {**asdict(found.outbox), "entries": [when(e) for e in facts["outbox"]]},
            "mail_outbox": {**asdict(found.mail), "entries": [when(e) for e in facts["mail"]]},
            "database_bytes": found.database_bytes, "disk_free_bytes": found.disk_free_bytes,
            "runs": {job: when(run) if run else None for job, run in facts["runs"].items()}}


def _pending_entry(conn: Connection, entry_id: int) -> dict:
    row = conn.execute(select(outbox).where(outbox.c.id == entry_id, outbox.c.done.is_(None))).mappings().first()
    if row is None:
        raise NotFound("There is no pending outbox entry with this id.")
    return dict(row)


def retry(conn: Connection, actor: Actor, entry_id: int) -> None:
    """Try the pending outbox entry again right after the commit (in this process), not at its backoff's time;
    audited. NotFound when it is done or absent."""
    row = _pending_entry(conn, entry_id)
    conn.execute(update(outbox).where(outbox.c.id == entry_id).values(not_before=utcnow()))
    audit.record(conn, actor, "outbox.retry", "outbox", entry_id, kind=row["kind"], recid=row["recid"],
                 attempts=row["attempts"], last_error=row["last_error"])
    after_commit(conn, APPLY if row["kind"] in INDEX_KINDS else REGISTER)


def drop(conn: Connection, actor: Actor, entry_id: int) -> None:
    """Remove the pending outbox entry: its change is never applied (a reindex would still bring the index up to
    the database); audited with what it was. NotFound when it is done or absent."""
    row = _pending_entry(conn, entry_id)
    conn.execute(delete(outbox).where(outbox.c.id == entry_id))
    audit.record(conn, actor, "outbox.drop", "outbox", entry_id, kind=row["kind"], recid=row["recid"],
                 attempts=row["attempts"], last_error=row["last_error"])


def record_run(db: Database, job: str, ok: bool, summary: str, findings: list) -> None:
    """Keep the outcome of a check (`reindex-check`, `fixity`) for the jobs page: its first FINDINGS_KEPT findings."""
    with db.write() as conn:
        conn.execute(insert(job_runs).values(job=job, finished=utcnow(), ok=ok, summary=summary,
                                             findings=json.dumps(findings[:FINDINGS_KEPT], default=str)))


def last_run(conn: Connection, job: str) -> dict | None:
    """The latest run of `job` ({finished, ok, summary, findings}), or None."""
    row = conn.execute(select(job_runs).where(job_runs.c.job == job).order_by(job_runs.c.id.desc()).limit(1)
                       ).mappings().first()
    if row is None:
        return None
    return {"finished": row["finished"], "ok": row["ok"], "summary": row["summary"],
            "findings": json.loads(row["findings"])}
