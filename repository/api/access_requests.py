"""`/api/records/<id>/access/requests`: asking for access to a restricted record's files (anyone signed in, or a
guest with an address to confirm), and the record owner's list and decisions (accept, reject, revoke)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, current_app, request

from repository.errors import BadRequest
from repository.records import access_requests
from repository.web.openapi import doc
from repository.web.ratelimit import throttle_mailing
from repository.web.request import caller, identity, json_body, json_response, require_scope, services

bp = Blueprint("access_requests", __name__, url_prefix="/api/records/<int:recid>/access/requests")

_OBJECT = {"type": "object"}


def _body() -> dict[str, Any]:
    if not request.get_data(cache=True):
        return {}  # every field is optional to the owner's actions; `create` says what is missing
    body = json_body()
    if not isinstance(body, dict):
        raise BadRequest("The body must be a JSON object.")
    return body


def _json(row: dict) -> dict:
    return access_requests.request_json(row, services().settings.BASE_URL)


@bp.get("/")
@require_scope("deposit:actions")
@doc(responses={"200": {"description": "The record's access requests, newest first (unconfirmed guests' left out)."},
                "403": {"description": "Not the record's owner."}})
def list_requests(recid: int) -> Response:
    """The access requests of the caller's record, pending and decided; 403 to anyone but its owner."""
    with services().db.read() as conn:
        rows = access_requests.list_for_record(conn, recid, caller().user_id)
    return json_response([_json(r) for r in rows])


@bp.post("/")
@doc(request={"content": {"application/json": {"schema": {"type": "object", "required": ["justification"],
                                                          "properties": {"justification": {"type": "string"},
                                                                         "email": {"type": "string"}}}}}},
     responses={"201": {"description": "The request: pending (the owner is mailed), or pending_confirmation for a "
                                       "guest (a confirmation link is mailed to `email`)."},
                "400": {"description": "Not a restricted record, one's own, or bad fields."},
                "409": {"description": "An open request or a live grant exists already."},
                "429": {"description": "A guest past RATELIMIT_SIGNIN (per client address and per address mailed)."}})
def create_request(recid: int) -> Response:
    """Ask for access to a restricted record's files with a justification: signed in (a token or a session), or as
    a guest with an `email` that must be confirmed through a mailed link before the owner is told."""
    body = _body()
    s = services()
    who = identity()
    if who is None:  # a guest's request mails a confirmation link to the address given
        throttle_mailing(current_app, s.settings, "access-request", body.get("email"))
    with s.db.write() as conn:
        row = access_requests.create(conn, s.settings, s.secret, recid, body.get("justification"), who,
                                     body.get("email"))
    # A requester sees their own request, never the owner's side (its links are the owner's).
    return json_response({"id": row["id"], "record_id": row["recid"], "status": row["status"]}, 201)


def _decide(recid: int, request_id: int, accept: bool) -> Response:
    body = _body()
    s = services()
    with s.db.write() as conn:
        row = access_requests.decide(conn, s.settings, recid, request_id, caller().user_id, accept,
                                     body.get("message"), body.get("until"))
    return json_response(_json(row))


@bp.post("/<int:request_id>/accept")
@require_scope("deposit:actions")
@doc(request={"content": {"application/json": {"schema": {"type": "object", "properties": {
         "until": {"type": "string", "format": "date", "description": "last day of access (UTC); none: no end"},
         "message": {"type": "string"}}}}}},
     responses={"200": {"description": "The accepted request (the requester is mailed)."},
                "409": {"description": "Decided already."}})
def accept(recid: int, request_id: int) -> Response:
    """Accept a pending request of the caller's record, optionally until a future date; owner only (403)."""
    return _decide(recid, request_id, True)


@bp.post("/<int:request_id>/reject")
@require_scope("deposit:actions")
@doc(request={"content": {"application/json": {"schema": {"type": "object", "properties": {
         "message": {"type": "string"}}}}}},
     responses={"200": {"description": "The rejected request (the requester is mailed the message)."},
                "409": {"description": "Decided already."}})
def reject(recid: int, request_id: int) -> Response:
    """Reject a pending request of the caller's record with a message; owner only (403)."""
    return _decide(recid, request_id, False)


@bp.post("/<int:request_id>/revoke")
@require_scope("deposit:actions")
@doc(responses={"200": {"description": "The revoked grant (the requester is mailed)."},
                "409": {"description": "Not an accepted request."}})
def revoke(recid: int, request_id: int) -> Response:
    """End a grant of the caller's record now; owner only (403)."""
    s = services()
    with s.db.write() as conn:
        row = access_requests.revoke(conn, s.settings, recid, request_id, caller().user_id)
    return json_response(_json(row))
