"""`/api/tokens`: the caller's personal access tokens: listing and revocation (with a token or a browser session),
creation only for a signed-in browser session (the applications area does the same as a page)."""

from __future__ import annotations

from flask import Blueprint, Response

from repository.accounts import tokens
from repository.errors import BadRequest, Forbidden, Unauthorized
from repository.timeutil import isoformat
from repository.web.openapi import doc
from repository.web.request import caller, identity, json_body, json_response, require_scope, services

bp = Blueprint("tokens", __name__, url_prefix="/api/tokens")

NEW_TOKEN = {
    "content": {"application/json": {"schema": {
        "type": "object",
        "required": ["name", "scopes"],
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": tokens.NAME_MAX},
            "scopes": {"type": "array", "items": {"type": "string", "enum": list(tokens.KNOWN_SCOPES)}},
        },
    }}},
}


def _token_json(token: dict) -> dict:
    return {
        "id": token["id"],
        "name": token["name"],
        "scopes": token["scopes"],
        "created": isoformat(token["created"]),
        "last_used": isoformat(token["last_used"]),
        "revoked": isoformat(token["revoked"]),
    }


@bp.get("/")
@require_scope()
@doc(responses={"200": {"description": "The caller's tokens (never the secrets)."}})
def list_tokens() -> Response:
    """List the caller's tokens: id, name, scopes, creation, last use and revocation times. 401 without a token."""
    with services().db.read() as conn:
        listed = tokens.list_tokens(conn, caller().user_id)
    return json_response([_token_json(t) for t in listed])


@bp.post("/")
@doc(request=NEW_TOKEN, responses={"201": {"description": "The new token, with its secret (`token`) shown this once."}})
def create_token() -> Response:
    """Create a personal access token for the signed-in browser session (with its CSRF token in `X-CSRFToken`):
    `{"name", "scopes"}` → 201 `{"id", "name", "scopes", "created", "token"}`. 401 for a guest; 403 with a token
    (tokens cannot create tokens); 400 for a bad name or an unknown scope."""
    who = identity()  # not `require_scope`: the description must not offer a bearer token, which is refused
    if who is None:
        raise Unauthorized("Sign in to this site in a browser to create tokens.")
    if not who.session:
        raise Forbidden("Tokens cannot create tokens: create one in the applications area of your account, "
                        "or with this request from a signed-in browser session.")
    body = json_body()
    if not isinstance(body, dict):
        raise BadRequest('The body must be a JSON object: {"name": ..., "scopes": [...]}.')
    with services().db.write() as conn:
        created, secret = tokens.new_token(conn, who.user_id, body.get("name"), body.get("scopes"))
    shown = {key: value for key, value in _token_json(created).items() if key not in {"last_used", "revoked"}}
    return json_response({**shown, "token": secret}, 201)


@bp.delete("/<int:token_id>")
@require_scope()
@doc(responses={"204": {"description": "Revoked."}})
def revoke_token(token_id: int) -> Response:
    """Revoke one of the caller's tokens (a browser session needs its CSRF token). 403 with a token that has no
    scope (read-only); 404 if it is not theirs or already revoked."""
    who = caller()
    if not who.scopes:
        raise Forbidden("A token with no scope is read-only: revoke tokens with a scoped token or from the "
                        "applications area of your account.")
    with services().db.write() as conn:
        tokens.revoke_token(conn, token_id, who.user_id)
    return Response(status=204)
