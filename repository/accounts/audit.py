"""The audit log (docs/operators/administration.md#audit-log): `record` writes one entry in the caller's
transaction, so an entry exists exactly when its change was committed; nothing here updates an entry, and only
`prune` (past AUDIT_LOG_DAYS) deletes any."""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, delete, func, insert, or_, select

from repository.storage.engine import Database
from repository.storage.tables.accounts import users
from repository.storage.tables.audit import audit_log
from repository.timeutil import isoformat, utcnow

QUERY_MAX = 200
# Where the current request comes from (the client address), set by the web layer at the start of each request
# (repository.web.request): the owners' actions are recorded deep in the domain, which never reads the request.
ORIGIN: ContextVar[str] = ContextVar("audit_origin", default="")


@dataclass(frozen=True)
class Actor:
    """Who acts and from where: a user (None for the command line's operator) and the client address."""

    user_id: int | None
    email: str
    address: str
    role: str = "admin"  # "admin" or "moderator": what the actor may do (the command line's operator: everything)

    @classmethod
    def operator(cls) -> Actor:
        """The operator at the command line (`repository-admin`)."""
        return cls(None, "", "cli")


def record(conn: Connection, actor: Actor, action: str, target_kind: str = "", target_id: Any = "",
           **detail: Any) -> None:
    """Append an entry: `actor` did `action` to (`target_kind`, `target_id`); `detail` holds what changed
    (`before`, `after`, `reason`, ...), kept as JSON."""
    conn.execute(insert(audit_log).values(
        created=utcnow(), actor_id=actor.user_id, actor_email=actor.email[:255], action=action,
        target_kind=target_kind, target_id=str(target_id)[:64], address=actor.address[:64],
        detail=json.dumps(detail, default=str, sort_keys=True)))


def record_many(conn: Connection, actor: Actor, action: str, target_kind: str,
                entries: Sequence[tuple[Any, dict[str, Any]]]) -> None:
    """`record` for many targets of the same action, (target id, detail) each, in one statement (a batch)."""
    now = utcnow()
    conn.execute(insert(audit_log), [
        {"created": now, "actor_id": actor.user_id, "actor_email": actor.email[:255], "action": action,
         "target_kind": target_kind, "target_id": str(target_id)[:64], "address": actor.address[:64],
         "detail": json.dumps(detail, default=str, sort_keys=True)} for target_id, detail in entries])


def owner(conn: Connection, user_id: int) -> Actor:
    """An owner acting on their own deposits, records or tokens, from this request's address (ORIGIN)."""
    email = conn.execute(select(users.c.email).where(users.c.id == user_id)).scalar() or ""
    return Actor(user_id, email, ORIGIN.get(), "")


def changed(before: dict, after: dict) -> dict:
    """The top-level fields of metadata that differ: {field: {"before": ..., "after": ...}}."""
    return {key: {"before": before.get(key), "after": after.get(key)}
            for key in sorted(set(before) | set(after)) if before.get(key) != after.get(key)}


def search(conn: Connection, q: str = "", action: str = "", target: str = "", page: int = 1,
           size: int = 50) -> tuple[list[dict], int]:
    """(entries newest first, total): `q` matches the actor's e-mail, the action or the detail; `action` an
    action's prefix (`user.` for every user action); `target` is `kind:id` (`user:3`)."""
    where = []
    if q:
        like = f"%{q[:QUERY_MAX].lower()}%"
        where.append(or_(func.lower(audit_log.c.actor_email).like(like), func.lower(audit_log.c.action).like(like),
                         func.lower(audit_log.c.detail).like(like)))
    if action:
        where.append(audit_log.c.action.startswith(action[:64], autoescape=True))
    if target:
        kind, _, ident = target.partition(":")
        where.append(audit_log.c.target_kind == kind[:32])
        if ident:
            where.append(audit_log.c.target_id == ident[:64])
    total = conn.execute(select(func.count()).select_from(audit_log).where(*where)).scalar() or 0
    rows = conn.execute(select(audit_log).where(*where).order_by(audit_log.c.id.desc())
                        .limit(size).offset((page - 1) * size)).mappings()
    return [dict(row, detail=json.loads(row["detail"])) for row in rows], total


def entry_json(entry: dict) -> dict:
    """An entry as the API shows it."""
    return {"id": entry["id"], "created": isoformat(entry["created"]), "action": entry["action"],
            "actor": {"id": entry["actor_id"], "email": entry["actor_email"]},
            "target": {"kind": entry["target_kind"], "id": entry["target_id"]},
            "address": entry["address"], "detail": entry["detail"]}


def prune(conn: Connection, days: int, now: datetime) -> int:
    """Delete the entries older than `days` days (0 keeps them all); returns how many went."""
    if days <= 0:
        return 0
    return conn.execute(delete(audit_log).where(audit_log.c.created < now - timedelta(days=days))).rowcount


class Retention:
    """The worker's pruning of the audit log (`prune`, AUDIT_LOG_DAYS), at most once an hour per process."""

    EVERY = timedelta(hours=1)

    def __init__(self, db: Database, days: int) -> None:
        self.db, self.days = db, days
        self._due: datetime | None = None

    def __call__(self) -> int:
        now = utcnow()
        if self.days <= 0 or (self._due is not None and now < self._due):
            return 0
        self._due = now + self.EVERY
        with self.db.write() as conn:
            return prune(conn, self.days, now)
