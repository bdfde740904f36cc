"""User accounts: lookups by id and e-mail, sign-in bookkeeping, roles and deactivation. Sign-up, confirmation and
password changes build on these (repository.accounts.signup)."""

from __future__ import annotations

from sqlalchemy import Connection, select, update

from repository.storage.tables.accounts import users
from repository.timeutil import utcnow

ADMIN = "admin"


def get_user(conn: Connection, user_id: int) -> dict | None:
    row = conn.execute(select(users).where(users.c.id == user_id)).mappings().first()
    return dict(row) if row else None


def session_user(conn: Connection, user_id: int, epoch: int) -> dict | None:
    """The user a browser session names, or None when the user is gone, deactivated or signed out everywhere (its
    password changed) since the session began: the session's `epoch` is then behind the user's."""
    user = get_user(conn, user_id)
    if user is None or not user["active"] or user["auth_epoch"] != epoch:
        return None
    return user


def record_sign_in(conn: Connection, user_id: int) -> None:
    conn.execute(update(users).where(users.c.id == user_id).values(last_login=utcnow()))


def roles(user: dict) -> frozenset[str]:
    return frozenset((user.get("roles") or "").split())


def is_admin(user: dict) -> bool:
    return ADMIN in roles(user)


def add_role(conn: Connection, user_id: int, role: str) -> None:
    user = get_user(conn, user_id)
    if user is not None and role not in roles(user):
        conn.execute(update(users).where(users.c.id == user_id)
                     .values(roles=" ".join(sorted(roles(user) | {role}))))


def end_sessions(conn: Connection, user_id: int) -> None:
    """Sign the user out of every browser: sessions carry the epoch they began in."""
    conn.execute(update(users).where(users.c.id == user_id).values(auth_epoch=users.c.auth_epoch + 1))


def deactivate(conn: Connection, user_id: int) -> bool:
    """Deactivate a user: their sessions and tokens stop working at once (both are checked against `active` on every
    request); nothing of theirs is deleted, and reactivating brings the tokens back. Returns False if already so."""
    changed = conn.execute(update(users).where(users.c.id == user_id, users.c.active.is_(True))
                           .values(active=False, auth_epoch=users.c.auth_epoch + 1)).rowcount == 1
    return changed


def reactivate(conn: Connection, user_id: int) -> bool:
    return conn.execute(update(users).where(users.c.id == user_id, users.c.active.is_(False))
                        .values(active=True)).rowcount == 1

