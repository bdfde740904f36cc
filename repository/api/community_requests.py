"""`/api/communities/<id>/requests`: the community owner lists inclusion requests and accepts or rejects them."""

from __future__ import annotations

from flask import Blueprint, Response, request

from repository.communities import inclusions
from repository.web.openapi import doc
from repository.web.request import caller, json_response, require_scope, services

bp = Blueprint("community_requests", __name__, url_prefix="/api/communities/<identifier>/requests")


@bp.get("/")
@require_scope()
@doc(parameters=[{"name": "status", "in": "query", "schema": {"type": "string"},
                  "description": "pending (default), accepted, rejected or all"}])
def list_requests(identifier: str) -> Response:
    """The community's inclusion requests, oldest first (pending by default); its owner only."""
    base = services().settings.BASE_URL
    with services().db.read() as conn:
        rows = inclusions.list_requests(conn, identifier, caller().user_id, request.args.get("status"))
    return json_response([inclusions.request_json(r, base) for r in rows])


def _decide(identifier: str, request_id: int, accept: bool) -> Response:
    with services().db.write() as conn:
        row, _ = inclusions.decide(conn, services().settings, identifier, request_id, caller().user_id, accept)
    return json_response(inclusions.request_json(row, services().settings.BASE_URL))


@bp.post("/<int:request_id>/accept")
@require_scope("deposit:actions")
@doc(responses={"200": {"description": "The accepted request."}})
def accept(identifier: str, request_id: int) -> Response:
    """Accept a record (all its versions) into the community; owner only (403), with `deposit:actions` (403), as
    deciding an access request."""
    return _decide(identifier, request_id, True)


@bp.post("/<int:request_id>/reject")
@require_scope("deposit:actions")
@doc(responses={"200": {"description": "The rejected request."}})
def reject(identifier: str, request_id: int) -> Response:
    """Reject a record's request to join the community; owner only (403), with `deposit:actions` (403)."""
    return _decide(identifier, request_id, False)
