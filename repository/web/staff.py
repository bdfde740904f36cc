"""Who may use the administration area (docs/operators/administration.md#roles): `admin` everything there,
`moderator` users and records but not roles; the API only with a token holding the `admin` scope, of a user who is
an administrator at the time of the request. A refusal is a 403 that changes nothing but leaves an audit entry of
the attempt (in a write of its own: the refused request writes nothing else)."""

from __future__ import annotations

from flask import request

from repository.accounts import admin, audit, users
from repository.accounts.audit import Actor
from repository.accounts.tokens import ADMIN_SCOPE
from repository.errors import Forbidden, Unauthorized
from repository.web.request import identity, services


def _refuse(user_id: int | None, email: str, need: str) -> Forbidden:
    with services().db.write() as conn:
        audit.record(conn, Actor(user_id, email, request.remote_addr or ""), "admin.refused", "", "",
                     method=request.method, path=request.path, needs=need)
    return Forbidden(f"This needs the role {need!r}." if need != ADMIN_SCOPE or user_id is None else
                     "This needs an administrator (and, for a token, the scope 'admin').")


def page_actor(user: dict, need: str = admin.MODERATOR) -> Actor:
    """The signed-in `user` as the actor of an administration page: `need` is "moderator" (either role will do)
    or "admin". Forbidden (and an audit entry) for anyone else."""
    role = admin.staff_role(user)
    if not role or (need == users.ADMIN and role != users.ADMIN):
        raise _refuse(user["id"], user["email"], need)
    return Actor(user["id"], user["email"], request.remote_addr or "", role)


def api_actor() -> Actor:
    """The caller of the administration API: a token with the `admin` scope (or an administrator's browser
    session) of a current administrator. 401 for a guest, 403 (and an audit entry) for anyone else."""
    who = identity()
    if who is None:
        raise Unauthorized()
    with services().db.read() as conn:
        user = users.get_user(conn, who.user_id)
    if not who.has_scope(ADMIN_SCOPE) or admin.staff_role(user) != users.ADMIN:
        raise _refuse(who.user_id, who.email, ADMIN_SCOPE)
    return Actor(who.user_id, who.email, request.remote_addr or "", users.ADMIN)
