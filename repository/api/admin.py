"""The administration API (docs/api/administration.md), for automation: the same actions as the administration
pages, for a token with the `admin` scope of an administrator (repository.web.staff.api_actor: 401 for a guest,
403 and an audit entry for anyone else). Each change writes its audit entry in its own transaction."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, request

from repository import urls
from repository.accounts import admin, audit, personal_data
from repository.errors import BadRequest
from repository.paging import parse_page
from repository.records import moderation
from repository.records.creator_owners import owners_of_creator
from repository.timeutil import isoformat
from repository.web.openapi import doc
from repository.web.request import json_body, json_response, services
from repository.web.staff import api_actor

bp = Blueprint("admin", __name__, url_prefix="/api/admin")
REFUSED = {"401": {"description": "No valid token"},
           "403": {"description": "Not an administrator, or the token lacks the scope 'admin'"}}  # fmt: skip


def _user_json(user: dict) -> dict:
    base = services().settings.BASE_URL
    return {"id": user["id"], "email": user["email"], "role": admin.staff_role(user) or "none",
            "active": user["active"], "blocked": user["block_reason"] is not None,
            "block_reason": user["block_reason"], "created": isoformat(user["created"]),
            "confirmed": isoformat(user["email_confirmed"]) if user["email_confirmed"] else None,
            "last_login": isoformat(user["last_login"]) if user["last_login"] else None,
            "links": {"self": urls.admin_user_api(base, user["id"]),
                      "html": urls.admin_user_html(base, user["id"])}}  # fmt: skip


def _object() -> dict[str, Any]:
    body = json_body()
    if not isinstance(body, dict):
        raise BadRequest("The body must be a JSON object.")
    return body


@bp.get("/users")
@doc(responses=REFUSED)
def users_view() -> Response:
    """Users whose e-mail contains `q`, whose linked ORCID iD is `q`, or whose public records' creators carry the
    name or ORCID iD `q`; newest first: `{"hits": [...]}`."""
    api_actor()
    q = request.args.get("q", "")
    with services().db.read() as conn:
        found = admin.search(conn, q, owners=owners_of_creator(conn, services().search, q))
    return json_response({"hits": [_user_json(user) for user in found]})


@bp.get("/users/<int:user_id>")
@doc(responses={**REFUSED, "404": {"description": "No such user"}})
def user_view(user_id: int) -> Response:
    """One user, with the counts of their deposits, records and active tokens."""
    api_actor()
    with services().db.read() as conn:
        overview = admin.overview(conn, user_id)
    return json_response({**_user_json(overview["user"]), "deposits": overview["deposits"],
                          "records": [item["id"] for item in overview["records"]], "tokens": overview["tokens"]})


@bp.post("/users/<int:user_id>/role")
@doc(responses={**REFUSED, "400": {"description": "Not a role"}, "409": {"description": "The last administrator"}})
def role_view(user_id: int) -> Response:
    """`{"role": "admin"|"moderator"|"none"}`: the user with the role; 409 when no administrator would be left."""
    actor = api_actor()
    role = _object().get("role")
    with services().db.write() as conn:
        user = admin.set_role(conn, actor, user_id, role if isinstance(role, str) else "")
    return json_response(_user_json(user))


@bp.post("/users/<int:user_id>/block")
@doc(responses={**REFUSED, "400": {"description": "No reason"}, "409": {"description": "The last administrator"}})
def block_view(user_id: int) -> Response:
    """`{"reason": "..."}`: block the user (sessions and tokens stop working at once)."""
    actor = api_actor()
    reason = admin.parse_reason(_object().get("reason"))
    with services().db.write() as conn:
        user = admin.block(conn, actor, user_id, reason)
    return json_response(_user_json(user))


@bp.post("/users/<int:user_id>/unblock")
@doc(responses={**REFUSED, "404": {"description": "No such user"}})
def unblock_view(user_id: int) -> Response:
    """Unblock the user."""
    actor = api_actor()
    with services().db.write() as conn:
        user = admin.unblock(conn, actor, user_id)
    return json_response(_user_json(user))


@bp.get("/users/<int:user_id>/export")
@doc(responses={**REFUSED, "404": {"description": "No such user"}})
def export_view(user_id: int) -> Response:
    """Everything held about the user, as one JSON document (GDPR access); written to the audit log."""
    actor = api_actor()
    with services().db.write() as conn:
        data = personal_data.export(conn, user_id)
        audit.record(conn, actor, "user.export", "user", user_id)
    return json_response(data)


@bp.post("/users/<int:user_id>/resend")
@doc(responses={**REFUSED, "409": {"description": "Confirmed already, blocked, or without a password"}})
def resend_view(user_id: int) -> Response:
    """Mail the user a new confirmation link: 202."""
    actor = api_actor()
    s = services()
    with s.db.write() as conn:
        personal_data.resend(conn, actor, user_id, s.settings, s.secret)
    return json_response({"status": "queued"}, 202)


@bp.delete("/users/<int:user_id>")
@doc(responses={**REFUSED, "404": {"description": "No such user"}, "409": {"description": "The last administrator"}})
def delete_view(user_id: int) -> Response:
    """Delete the account: personal data removed, published records stay. 204."""
    actor = api_actor()
    with services().db.write() as conn:
        personal_data.erase(conn, actor, user_id)
    return Response(status=204)


@bp.post("/records/<int:recid>/takedown")
@doc(responses={**REFUSED, "400": {"description": "No public reason, or deleted already"},
                "404": {"description": "No such record"}})  # fmt: skip
def takedown_view(recid: int) -> Response:
    """`{"reason": "public reason", "note": "private note"}`: take the record down; it answers 410 with the
    reason from then on."""
    actor = api_actor()
    body = _object()
    reason, note = moderation.parse_texts(body.get("reason"), body.get("note", ""))
    with services().db.write() as conn:
        moderation.take_down_record(conn, actor, recid, reason, note)
        facts = moderation.record_facts(conn, recid)
    return json_response(_record_json(facts))


@bp.post("/records/<int:recid>/restore")
@doc(responses={**REFUSED, "400": {"description": "Not deleted"}, "404": {"description": "No such record"}})
def restore_view(recid: int) -> Response:
    """Make a taken-down record public again."""
    actor = api_actor()
    with services().db.write() as conn:
        moderation.restore(conn, actor, recid)
        facts = moderation.record_facts(conn, recid)
    return json_response(_record_json(facts))


@bp.post("/records/<int:recid>/owner")
@doc(responses={**REFUSED, "400": {"description": "No user with that e-mail"},
                "404": {"description": "No such record"}})  # fmt: skip
def owner_view(recid: int) -> Response:
    """`{"email": "..."}`: give every version of the record to that user."""
    actor = api_actor()
    email = _object().get("email")
    with services().db.write() as conn:
        moderation.change_owner(conn, actor, recid, email if isinstance(email, str) else "")
        facts = moderation.record_facts(conn, recid)
    return json_response(_record_json(facts))


def _record_json(facts: dict) -> dict:
    takedown = facts["takedown"]
    return {"id": facts["id"], "doi": facts["doi"], "owner": {"id": facts["owner_id"], "email": facts["owner_email"]},
            "deleted": isoformat(facts["deleted"]) if facts["deleted"] else None, "review": facts["review"],
            "takedown": {"reason": takedown["note"], "note": takedown["private_note"] or ""} if takedown else None}


@bp.get("/audit")
@doc(responses={**REFUSED, "400": {"description": "A bad page or size"}})
def audit_view() -> Response:
    """The audit log, newest first: `q` (text), `action` (a prefix), `target` (`user:3`), `page`, `size`."""
    api_actor()
    page = parse_page(request.args, default_size=50)
    args = {name: request.args.get(name, "") for name in ("q", "action", "target")}
    with services().db.read() as conn:
        entries, total = audit.search(conn, page=page.number, size=page.size, **args)
    return json_response({"hits": {"total": total, "hits": [audit.entry_json(e) for e in entries]}})
