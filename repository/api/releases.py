"""`/api/releases/`: enable a code repository for archiving, receive its release webhooks, follow each release.

The webhook answers 202 at once and the release is archived by a background thread of this process; its status
(received, processing, published, failed with readable errors) is listed under the repository.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any
from urllib.parse import parse_qs

from flask import Blueprint, Response, request

from repository.errors import BadRequest, Conflict, PayloadTooLarge, Unauthorized
from repository.jsonlimits import ShapeError, loads_bounded
from repository.releases import store
from repository.web.openapi import doc
from repository.web.request import caller, json_body, json_response, require_scope, services

bp = Blueprint("releases", __name__, url_prefix="/api/releases")

# GitHub sends several actions for one release; each of these starts archiving (the first one wins).
ARCHIVED_ACTIONS = ("published", "released", "created")
ENABLE_BODY = {"content": {"application/json": {"schema": {
    "type": "object",
    "required": ["repository"],
    "properties": {
        "repository": {"type": "string", "description": "owner/name on the platform"},
        "platform": {"type": "string", "enum": ["github"], "default": "github"},
        "token": {"type": "string", "description": "A platform access token, for a private repository."},
    },
}}}}  # fmt: skip


def _base() -> str:
    return services().settings.BASE_URL


@bp.post("/repositories")
@require_scope("deposit:write")
@doc(request=ENABLE_BODY, responses={"201": {"description": "The repository, with `webhook.url` and "
                                                             "`webhook.secret` (shown only here)."}})  # fmt: skip
def enable_repository() -> Response:
    """Enable archiving of a repository's releases: 201 with the webhook URL and a new secret, shown only in this
    answer (enable again to get a new one); 409 if another account archives it."""
    body = json_body()
    if not isinstance(body, dict):
        raise BadRequest('The body must be a JSON object: {"repository": "owner/name"}.')
    token = body.get("token")
    if token is not None and not isinstance(token, str):
        raise BadRequest("The token must be a string.")
    with services().db.write() as conn:
        repo = store.enable(conn, caller().user_id, body.get("platform", "github"), body.get("repository"), token)
    location = store.repository_json(repo, _base())["links"]["self"]
    return json_response(store.repository_json(repo, _base(), secret=True), 201, {"Location": location})


@bp.get("/repositories")
@require_scope()
def list_repositories() -> Response:
    """The caller's repositories (without secrets)."""
    with services().db.read() as conn:
        rows = store.list_repositories(conn, caller().user_id)
    return json_response([store.repository_json(row, _base()) for row in rows])


@bp.get("/repositories/<int:repo_id>")
@require_scope()
def get_repository(repo_id: int) -> Response:
    """One of the caller's repositories; 404 for anyone else's."""
    with services().db.read() as conn:
        repo = store.get_repository(conn, repo_id, caller().user_id)
    return json_response(store.repository_json(repo, _base()))


@bp.delete("/repositories/<int:repo_id>")
@require_scope("deposit:write")
@doc(responses={"204": {"description": "Disabled: its webhook answers 409 from now on."}})
def disable_repository(repo_id: int) -> Response:
    """Stop archiving the repository's releases (204); published versions stay."""
    with services().db.write() as conn:
        store.disable(conn, repo_id, caller().user_id)
    return Response(status=204)


@bp.get("/repositories/<int:repo_id>/releases")
@require_scope()
@doc(responses={"200": {"description": "Releases, newest first: `{id, tag, status, errors, record_id, links}`."}})
def list_releases(repo_id: int) -> Response:
    """The repository's releases with their status (received, processing, published, failed) and errors."""
    with services().db.read() as conn:
        store.get_repository(conn, repo_id, caller().user_id)
        rows = store.list_releases(conn, repo_id)
    return json_response([store.release_json(row, _base()) for row in rows])


@bp.get("/repositories/<int:repo_id>/releases/<int:release_id>")
@require_scope()
def get_release(repo_id: int, release_id: int) -> Response:
    """One release and its status."""
    with services().db.read() as conn:
        store.get_repository(conn, repo_id, caller().user_id)
        row = store.get_release(conn, release_id, repo_id)
    return json_response(store.release_json(row, _base()))


@bp.post("/repositories/<int:repo_id>/releases/<int:release_id>/actions/retry")
@require_scope("deposit:actions")
@doc(responses={"202": {"description": "Queued again."}})
def retry_release(repo_id: int, release_id: int) -> Response:
    """Archive a failed release again (after fixing a token, or a platform outage): 202; 400 if it did not fail."""
    with services().db.write() as conn:
        store.get_repository(conn, repo_id, caller().user_id)
        store.retry(conn, release_id, repo_id)
        row = store.get_release(conn, release_id, repo_id)
    services().releases.submit(release_id)
    return json_response(store.release_json(row, _base()), 202)


@bp.post("/hooks/<int:repo_id>")
@doc(responses={"202": {"description": "Release received; archiving in the background."},
                "200": {"description": "Ping answered, or an event that is not archived."}})  # fmt: skip
def webhook(repo_id: int) -> Response:
    """GitHub `release` events, signed with the repository's secret (`X-Hub-Signature-256`): 202 and archived in
    the background; 401 bad signature; 404 unknown repository; 409 disabled repository or duplicate release."""
    raw = _raw_body()
    with services().db.read() as conn:
        repo = store.get_repository(conn, repo_id)
    _verify(raw, repo["secret"])
    event = request.headers.get("X-GitHub-Event", "")
    if not repo["enabled"]:
        raise Conflict("This repository is not enabled for archiving: enable it again to archive its releases.")
    if event == "ping":
        return json_response({"message": "pong: the webhook is set up."})
    payload = _payload(raw)
    release = payload.get("release")
    if event != "release" or payload.get("action") not in ARCHIVED_ACTIONS or not isinstance(release, dict):
        return json_response({"message": f"Ignored: only release events ({', '.join(ARCHIVED_ACTIONS)}) are archived."})
    if release.get("draft"):
        return json_response({"message": "Ignored: a draft release is archived once it is published."})
    named = str((payload.get("repository") or {}).get("full_name") or "")
    if named.lower() != repo["name_key"]:
        raise BadRequest(f"The event is about {named or 'no repository'}, but this webhook is {repo['full_name']}'s.")
    with services().db.write() as conn:
        release_id = store.receive(conn, repo, str(release.get("id") or release.get("tag_name")),
                                   release.get("tag_name"))  # fmt: skip
        row = store.get_release(conn, release_id)
    services().releases.submit(release_id)
    body: dict[str, Any] = {"message": "Release received: it is being archived.",
                            "release": store.release_json(row, _base())}
    return json_response(body, 202, {"Location": body["release"]["links"]["self"]})


def _raw_body() -> bytes:
    limit = services().settings.MAX_JSON_BYTES
    raw = request.stream.read(limit + 1)
    if len(raw) > limit:
        raise PayloadTooLarge(f"The event is larger than {limit} bytes.")
    return raw


def _verify(raw: bytes, secret: str) -> None:
    """HMAC-SHA256 of the body with the repository's secret, compared in constant time."""
    given = request.headers.get("X-Hub-Signature-256", "")
    expected = "sha256=" + hmac.new(secret.encode(), raw, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(given.encode(), expected.encode()):
        raise Unauthorized("The webhook signature (X-Hub-Signature-256) does not match this repository's secret.")


def _payload(raw: bytes) -> dict[str, Any]:
    """The event as JSON, sent as the body or (content type form) in the `payload` field."""
    text = raw.decode("utf-8", errors="replace")
    if request.mimetype == "application/x-www-form-urlencoded":
        text = (parse_qs(text).get("payload") or [""])[0]
    try:
        payload = loads_bounded(text)
    except ShapeError as exc:
        raise BadRequest(f"The event is {exc}.") from None
    except json.JSONDecodeError as exc:
        raise BadRequest(f"The event is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno}).") from None
    if not isinstance(payload, dict):
        raise BadRequest("The event must be a JSON object.")
    return payload
