"""`/api/tokens`: the caller's personal access tokens (listing and revocation; creation is scripts/create_token.py)."""

from __future__ import annotations

from flask import Blueprint, Response

from repository.accounts import tokens
from repository.timeutil import isoformat
from repository.web.openapi import doc
from repository.web.request import caller, json_response, require_scope, services

bp = Blueprint("tokens", __name__, url_prefix="/api/tokens")


def _token_json(token: dict) -> dict:
    return {
        "id": token["id"],
        "name": token["name"],
        "scopes": token["scopes"],
        "created": isoformat(token["created"]),
        "revoked": isoformat(token["revoked"]),
    }


@bp.get("/")
@require_scope()
@doc(responses={"200": {"description": "The caller's tokens (never the secrets)."}})
def list_tokens() -> Response:
    """List the caller's tokens: id, name, scopes, creation and revocation times. 401 without a token."""
    with services().db.read() as conn:
        listed = tokens.list_tokens(conn, caller().user_id)
    return json_response([_token_json(t) for t in listed])


@bp.delete("/<int:token_id>")
@require_scope()
@doc(responses={"204": {"description": "Revoked."}})
def revoke_token(token_id: int) -> Response:
    """Revoke one of the caller's tokens. 404 if it is not theirs or already revoked."""
    with services().db.write() as conn:
        tokens.revoke_token(conn, token_id, caller().user_id)
    return Response(status=204)
