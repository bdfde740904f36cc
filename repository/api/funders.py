"""`/api/funders/`: search the funders and fetch one by its DOI (docs/reference-behaviour.md#funders-grants-communities)."""

from __future__ import annotations

from flask import Blueprint, Response, request

from repository import urls
from repository.paging import envelope, openapi_parameters, parse_page
from repository.vocabularies import funders
from repository.web.openapi import doc
from repository.web.request import json_response, services

bp = Blueprint("funders", __name__, url_prefix="/api/funders")

Q = {"name": "q", "in": "query", "schema": {"type": "string"}, "description": "Words in name, acronym, DOI."}


@bp.get("/")
@doc(parameters=[Q, *openapi_parameters()], responses={"200": {"description": "The search envelope of funders."}})
def search_funders() -> Response:
    """Search funders by name, acronym, DOI or country (`q`); 400 on a bad `page` or `size`."""
    page = parse_page(request.args)
    with services().db.read() as conn:
        rows, total = funders.search(conn, request.args.get("q"), page)
    base = services().settings.BASE_URL
    hits = [funders.to_json(row, base) for row in rows]
    return json_response(envelope(hits, total, page, base + urls.FUNDERS, request.args))


@bp.get("/<path:doi>")
@doc(responses={"200": {"description": "A funder."}})
def get_funder(doi: str) -> Response:
    """One funder by its DOI, e.g. `/api/funders/10.13039/501100000780`; 404 if unknown."""
    with services().db.read() as conn:
        row = funders.get(conn, doi.rstrip("/"))  # the path converter keeps a trailing slash
    return json_response(funders.to_json(row, services().settings.BASE_URL))
