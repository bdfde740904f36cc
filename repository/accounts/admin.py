"""What administrators and moderators do to accounts (docs/operators/administration.md#users): roles, blocking
and unblocking with a reason, finding a user and reading what they hold. Each change writes its audit entry in the
same transaction (repository.accounts.audit)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, func, or_, select, update

from repository.accounts import audit, users
from repository.accounts.audit import Actor
from repository.errors import Conflict, Forbidden, NotFound, ValidationError, field_error
from repository.storage.tables.accounts import tokens, user_identities
from repository.storage.tables.accounts import users as users_table
from repository.storage.tables.deposits import deposits
from repository.storage.tables.records import records

MODERATOR = "moderator"
ROLES = (users.ADMIN, MODERATOR)  # "none" takes both away
REASON_MAX = 2000
SEARCH_MAX = 200


def staff_role(user: dict | None) -> str:
    """"admin", "moderator" or "" for `user` (an active one only: a blocked administrator holds no role)."""
    if user is None or not user["active"]:
        return ""
    held = users.roles(user)
    return users.ADMIN if users.ADMIN in held else MODERATOR if MODERATOR in held else ""


def get(conn: Connection, user_id: int) -> dict:
    user = users.get_user(conn, user_id)
    if user is None:
        raise NotFound(f"No user with id {user_id}.")
    return user


def admins_left(conn: Connection, without: int) -> int:
    query = select(users_table.c.id, users_table.c.roles).where(users_table.c.active.is_(True),
                                                                users_table.c.id != without)
    return sum(1 for row in conn.execute(query) if users.ADMIN in (row.roles or "").split())


def set_role(conn: Connection, actor: Actor, user_id: int, role: str) -> dict:
    """Give user `user_id` the role `role` ("admin", "moderator" or "none"); returns the user as it is now.
    ValidationError for another role; Conflict when it would leave no active administrator."""
    if role not in (*ROLES, "none"):
        raise ValidationError(errors=[field_error("role", "Must be one of: admin, moderator, none.")])
    user = get(conn, user_id)
    before = sorted(users.roles(user))
    kept = users.roles(user) - set(ROLES)
    after = sorted(kept | ({role} if role != "none" else set()))
    if users.ADMIN in before and users.ADMIN not in after and admins_left(conn, user_id) == 0:
        raise Conflict("This is the last administrator: make another user an administrator first.")
    if before != after:
        conn.execute(update(users_table).where(users_table.c.id == user_id).values(roles=" ".join(after)))
        audit.record(conn, actor, "user.role", "user", user_id, email=user["email"], before=before, after=after)
    return get(conn, user_id)


def parse_reason(reason: Any) -> str:
    """The reason of a block (required, at most REASON_MAX characters); ValidationError otherwise."""
    if not isinstance(reason, str) or not reason.strip() or len(reason) > REASON_MAX:
        raise ValidationError(errors=[field_error("reason", f"Say why, in 1 to {REASON_MAX} characters.")])
    return reason.strip()


def block(conn: Connection, actor: Actor, user_id: int, reason: str) -> dict:
    """Block user `user_id` for `reason`: their sessions and tokens stop working at once (as a deactivation);
    their published records stay. Forbidden for oneself; Conflict for the last administrator."""
    user = get(conn, user_id)
    if actor.user_id == user_id:
        raise Forbidden("You cannot block yourself.")
    if users.is_admin(user) and actor.user_id is not None and actor.role != users.ADMIN:
        raise Forbidden("Only an administrator can block an administrator.")
    if users.is_admin(user) and admins_left(conn, user_id) == 0:
        raise Conflict("This is the last administrator: make another user an administrator first.")
    users.deactivate(conn, user_id)
    conn.execute(update(users_table).where(users_table.c.id == user_id).values(block_reason=reason))
    audit.record(conn, actor, "user.block", "user", user_id, email=user["email"], reason=reason,
                 before={"active": user["active"]}, after={"active": False})
    return get(conn, user_id)


def unblock(conn: Connection, actor: Actor, user_id: int) -> dict:
    """Unblock (reactivate) user `user_id`: they sign in again and their tokens not revoked work again."""
    user = get(conn, user_id)
    users.reactivate(conn, user_id)
    conn.execute(update(users_table).where(users_table.c.id == user_id).values(block_reason=None))
    audit.record(conn, actor, "user.unblock", "user", user_id, email=user["email"],
                 before={"active": user["active"], "reason": user["block_reason"]}, after={"active": True})
    return get(conn, user_id)


def search(conn: Connection, q: str, limit: int = 50, owners: Sequence[int] = ()) -> list[dict]:
    """Users whose e-mail contains `q`, whose linked sign-in (an ORCID iD) is `q`, or among `owners` (accounts keep
    no names: the owners of records whose creators match, repository.records.creator_owners); newest first."""
    query = select(users_table).order_by(users_table.c.id.desc()).limit(limit)
    text = q.strip().lower()[:SEARCH_MAX]
    if text:
        linked = select(user_identities.c.user_id).where(func.lower(user_identities.c.subject).contains(
            text, autoescape=True))
        query = query.where(or_(users_table.c.email.contains(text, autoescape=True), users_table.c.id.in_(linked),
                                users_table.c.id.in_(list(owners))))
    return [dict(row) for row in conn.execute(query).mappings()]


def overview(conn: Connection, user_id: int) -> dict:
    """What a user's page shows: the account, its linked sign-ins, its records and deposits, its token count."""
    user = get(conn, user_id)
    identities = [dict(r) for r in conn.execute(select(user_identities.c.provider, user_identities.c.subject,
                                                       user_identities.c.created)
                                                .where(user_identities.c.user_id == user_id)).mappings()]
    recs = [dict(r) for r in conn.execute(
        select(records.c.id, records.c.doi, records.c.created, records.c.deleted, records.c.metadata)
        .where(records.c.owner_id == user_id).order_by(records.c.id.desc()).limit(100)).mappings()]
    for rec in recs:
        rec["title"] = (rec.pop("metadata") or {}).get("title", "")
    count_deposits = select(func.count()).select_from(deposits).where(deposits.c.owner_id == user_id)
    count_tokens = select(func.count()).select_from(tokens).where(tokens.c.user_id == user_id,
                                                                  tokens.c.revoked.is_(None))
    return {"user": user, "role": staff_role(user) or "none", "identities": identities, "records": recs,
            "deposits": conn.execute(count_deposits).scalar() or 0,
            "tokens": conn.execute(count_tokens).scalar() or 0}
