"""`/api/communities/<id>/requests`: the community owner lists inclusion requests and accepts or rejects them."""

from __future__ import annotations

from flask import Blueprint, Response, request

from repository.communities import requests as community_requests
from repository.web.openapi import doc
from repository.web.request import identity, json_response, require_scope, services

bp = Blueprint("community_requests", __name__, url_prefix="/api/communities/<identifier>/requests")


@bp.get("/")
@require_scope()
@doc(parameters=[{"name": "status", "in": "query", "schema": {"type": "string"},
                  "description": "pending (default), accepted, rejected or all"}])
def list_requests(identifier: str) -> Response:
    """The community's inclusion requests, oldest first (pending by default); its owner only."""
    base = services().settings.BASE_URL
    with services().db.read() as conn:
        rows = community_requests.list_requests(conn, identifier, identity().user_id, request.args.get("status"))
    return json_response([community_requests.request_json(r, base) for r in rows])


def _decide(identifier: str, request_id: int, accept: bool) -> Response:
    with services().db.write() as conn:
        row, _ = community_requests.decide(conn, identifier, request_id, identity().user_id, accept)
    services().extras["indexer"].process_pending()  # membership shows in search and OAI-PMH at once
    return json_response(community_requests.request_json(row, services().settings.BASE_URL))


@bp.post("/<int:request_id>/accept")
@require_scope()
@doc(responses={"200": {"description": "The accepted request."}})
def accept(identifier: str, request_id: int) -> Response:
    """Accept a record (all its versions) into the community; owner only."""
    return _decide(identifier, request_id, True)


@bp.post("/<int:request_id>/reject")
@require_scope()
@doc(responses={"200": {"description": "The rejected request."}})
def reject(identifier: str, request_id: int) -> Response:
    """Reject a record's request to join the community; owner only."""
    return _decide(identifier, request_id, False)
