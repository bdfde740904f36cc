"""`/api/grants/`: search the grants and fetch one by `<funder DOI>::<code>` (docs/reference-behaviour.md#funders-grants-communities)."""

from __future__ import annotations

from flask import Blueprint, Response, request

from repository import urls
from repository.paging import envelope, openapi_parameters, parse_page
from repository.vocabularies import grants
from repository.web.openapi import doc
from repository.web.request import json_response, services

bp = Blueprint("grants", __name__, url_prefix="/api/grants")

PARAMETERS = [
    {"name": "q", "in": "query", "schema": {"type": "string"}, "description": "Words in code, title, acronym."},
    {"name": "funder", "in": "query", "schema": {"type": "string"}, "description": "Funder acronym or DOI."},
    *openapi_parameters(),
]


@bp.get("/")
@doc(parameters=PARAMETERS, responses={"200": {"description": "The search envelope of grants."}})
def search_grants() -> Response:
    """Search grants (`q`), optionally of one funder (`funder`: acronym or DOI); 400 on a bad `page` or `size`."""
    page = parse_page(request.args)
    with services().db.read() as conn:
        rows, total = grants.search(conn, request.args.get("q"), request.args.get("funder"), page)
    base = services().settings.BASE_URL
    hits = [grants.to_json(row, base) for row in rows]
    return json_response(envelope(hits, total, page, base + urls.GRANTS, request.args))


@bp.get("/<path:grant_id>")
@doc(responses={"200": {"description": "A grant with its funder."}})
def get_grant(grant_id: str) -> Response:
    """One grant by `<funder DOI>::<code>` (a bare code is a European Commission grant); 404 if unknown."""
    with services().db.read() as conn:
        row = grants.get(conn, grant_id)
    return json_response(grants.to_json(row, services().settings.BASE_URL))
