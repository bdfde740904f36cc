"""`/api/deposit/depositions`: create, list, get, update, delete and the actions publish, edit, discard, newversion."""

from __future__ import annotations

from typing import TYPE_CHECKING

from flask import Blueprint, Response, request

from repository import urls
from repository.deposits import actions, representation
from repository.deposits.listing import list_deposits
from repository.errors import BadRequest
from repository.files.buckets import release_files
from repository.storage import Connection
from repository.web.openapi import doc
from repository.web.request import caller, json_body, json_response, require_scope, services

if TYPE_CHECKING:
    from repository.records.lookups import DatabaseLookups


def _lookups(conn: Connection) -> DatabaseLookups:
    from repository.records.lookups import DatabaseLookups

    return DatabaseLookups(conn)


bp = Blueprint("deposits", __name__, url_prefix="/api/deposit/depositions")

DEPOSITION = {"application/json": {"schema": {"type": "object"}}}
LIST_PARAMS = [
    {"name": name, "in": "query", "schema": {"type": kind}, "description": text}
    for name, kind, text in (
        ("q", "string", "query string syntax over the caller's depositions"),
        ("status", "string", "draft or published"),
        ("sort", "string", "bestmatch or mostrecent; a leading - reverses"),
        ("page", "integer", "page number, from 1"),
        ("size", "integer", "depositions per page (default 10)"),
        ("all_versions", "string", "true/1 shows every version, false/0 only the newest of each concept"),
    )
]


def _render(dep_id: int, status: int, headers: dict | None = None) -> Response:
    with services().db.read() as conn:
        body = representation.render(conn, services().settings, dep_id)
    return json_response(body, status, headers)


@bp.get("/")
@require_scope()
@doc(parameters=LIST_PARAMS, responses={"200": {"description": "A bare array of the caller's depositions."}})
def list_view() -> Response:
    """List the caller's depositions (a bare array), with q, status, sort, page, size and all_versions."""
    with services().db.read() as conn:
        rows, links = list_deposits(conn, services().settings, caller().user_id, request.args)
        body = representation.render_many(conn, services().settings, rows)
    return json_response(body, headers={"Link": links} if links else None)


@bp.post("/")
@require_scope("deposit:write")
@doc(request={"content": DEPOSITION}, responses={"201": {"description": "The new deposition."}})
def create_view() -> Response:
    """Create a deposition from `{}` or `{"metadata": {...}}`; given metadata is validated and stored. 201."""
    body = json_body()
    if not isinstance(body, dict):
        raise BadRequest("The body must be a JSON object: {} or {\"metadata\": {...}}.")
    with services().db.write() as conn:
        ctx = actions.Context(services().settings, _lookups(conn))
        dep_id = actions.create(conn, ctx, caller().user_id, body.get("metadata", {}) if body else {})
    location = urls.deposit_api(services().settings.BASE_URL, dep_id)
    return _render(dep_id, 201, {"Location": location})


@bp.get("/<int:dep_id>")
@require_scope()
def get_view(dep_id: int) -> Response:
    """One of the caller's depositions; 404 for anyone else's."""
    with services().db.read() as conn:
        actions.get_deposit(conn, dep_id, caller().user_id)
    return _render(dep_id, 200)


@bp.put("/<int:dep_id>")
@require_scope("deposit:write")
@doc(request={"content": DEPOSITION})
def update_view(dep_id: int) -> Response:
    """Replace the metadata (`{"metadata": {...}}`) of a draft or of a deposition being edited."""
    body = json_body()
    with services().db.write() as conn:
        ctx = actions.Context(services().settings, _lookups(conn))
        actions.update_metadata(conn, ctx, dep_id, caller().user_id, body)
    return _render(dep_id, 200)


@bp.delete("/<int:dep_id>")
@require_scope("deposit:write")
@doc(responses={"201": {"description": "Deleted (empty body)."}})
def delete_view(dep_id: int) -> Response:
    """Delete an unpublished deposition: 201 with an empty body; 403 once published; 404 if absent."""
    store = services().files
    with services().db.write() as conn:
        freed = actions.delete_deposit(conn, dep_id, caller().user_id)
    with services().db.write() as conn:
        release_files(conn, store, freed)
    return Response(status=201)


@bp.post("/<int:dep_id>/actions/publish")
@require_scope("deposit:actions")
@doc(responses={"202": {"description": "Published: the deposition."}})
def publish_view(dep_id: int) -> Response:
    """Publish: needs every required field and at least one file; creates the record and its DOI. 202."""
    with services().db.write() as conn:
        ctx = actions.Context(services().settings, _lookups(conn), services().files)
        actions.publish(conn, ctx, dep_id, caller().user_id)
    return _render(dep_id, 202)


@bp.post("/<int:dep_id>/actions/edit")
@require_scope("deposit:actions")
@doc(responses={"201": {"description": "Unlocked for editing."}})
def edit_view(dep_id: int) -> Response:
    """Unlock a published deposition's metadata: 201; 400 if not published or already being edited; 409 while
    the record is being integrated."""
    services().indexer.settle(dep_id)  # a registration still under way, in the background, first
    with services().db.write() as conn:
        actions.edit(conn, dep_id, caller().user_id)
    return _render(dep_id, 201)


@bp.post("/<int:dep_id>/actions/discard")
@require_scope("deposit:actions")
@doc(responses={"201": {"description": "Changes dropped."}})
def discard_view(dep_id: int) -> Response:
    """Drop the changes of the edit session: 201; 400 when not being edited."""
    with services().db.write() as conn:
        actions.discard(conn, dep_id, caller().user_id, services().files)
    return _render(dep_id, 201)


@bp.post("/<int:dep_id>/actions/newversion")
@require_scope("deposit:actions")
@doc(responses={"201": {"description": "The original deposition, with links.latest_draft to the new draft."}})
def newversion_view(dep_id: int) -> Response:
    """Create a new-version draft of the latest version (files snapshotted, no bytes copied). 201, the original."""
    with services().db.write() as conn:
        ctx = actions.Context(services().settings, _lookups(conn))
        actions.newversion(conn, ctx, dep_id, caller().user_id)
    return _render(dep_id, 201)
