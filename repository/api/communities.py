"""`/api/communities`: create, edit, search and fetch communities (docs/reference-behaviour.md#funders-grants-communities)."""

from __future__ import annotations

from flask import Blueprint, Response, request
from werkzeug.wrappers import Response as BaseResponse

from repository import urls
from repository.communities import store
from repository.paging import envelope, openapi_parameters, parse_page
from repository.storage import Row
from repository.timeutil import http_date
from repository.web.openapi import doc
from repository.web.request import caller, json_body, json_response, require_scope, services

bp = Blueprint("communities", __name__, url_prefix="/api/communities")

BODY = {
    "required": True,
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "properties": {
                    "identifier": {"type": "string", "pattern": "^[a-z0-9_-]{1,100}$"},
                    "title": {"type": "string", "maxLength": 255},
                    "description": {"type": "string", "description": "HTML (sanitised)."},
                    "curation_policy": {"type": "string", "description": "HTML (sanitised)."},
                },
                "additionalProperties": False,
            }
        }
    },
}
SEARCH = [
    {"name": "q", "in": "query", "schema": {"type": "string"}, "description": "Words in id, title, description."},
    {"name": "sort", "in": "query", "schema": {"type": "string", "enum": list(store.SORTS), "default": "ranking"},
     "description": "Order; prefix '-' to reverse."},
    {**openapi_parameters()[0]},
    {**openapi_parameters()[1], "schema": {**openapi_parameters()[1]["schema"], "default": 20}},
]  # fmt: skip


def _response(row: Row, status: int = 200) -> Response:
    response = json_response(store.to_json(row, services().settings.BASE_URL), status)
    response.headers["ETag"] = store.etag(row)
    response.headers["Last-Modified"] = http_date(row.updated)
    return response


@bp.post("/")
@require_scope("deposit:write")
@doc(request=BODY, responses={"201": {"description": "The new community."}})
def create_community() -> Response:
    """Create a community owned by the caller; 401 for a guest, 400 on bad fields or a taken identifier."""
    data = json_body()
    with services().db.write() as conn:
        row = store.create(conn, caller().user_id, data)
    return _response(row, 201)


@bp.put("/<identifier>")
@require_scope("deposit:write")
@doc(request=BODY, responses={"200": {"description": "The changed community."}})
def edit_community(identifier: str) -> Response:
    """Change the given fields of a community; 403 unless the caller owns it, 404 if unknown, 400 on bad fields."""
    data = json_body()
    with services().db.write() as conn:
        row = store.edit(conn, identifier, caller().user_id, data)
    return _response(row)


@bp.get("/")
@doc(parameters=SEARCH, responses={"200": {"description": "The search envelope of communities."}})
def search_communities() -> Response:
    """Search communities (`q`), ordered by `sort` (ranking, newest, title); 400 on bad paging or sort."""
    page = parse_page(request.args, default_size=20)
    sort = store.parse_sort(request.args.get("sort"))
    with services().db.read() as conn:
        rows, total = store.search(conn, request.args.get("q"), sort, page)
    base = services().settings.BASE_URL
    hits = [store.to_json(row, base) for row in rows]
    return json_response(envelope(hits, total, page, base + urls.COMMUNITIES, request.args))


@bp.get("/<identifier>")
@doc(responses={"200": {"description": "A community (with ETag and Last-Modified)."}})
def get_community(identifier: str) -> BaseResponse:
    """One community by its identifier (304 when `If-None-Match` matches its ETag); 404 if unknown."""
    with services().db.read() as conn:
        row = store.get(conn, identifier)
    return _response(row).make_conditional(request)
