"""`GET /api/`: the links to every resource, and the OpenAPI description."""

from __future__ import annotations

from flask import Blueprint, Response, current_app

from repository import urls
from repository.web.openapi import build_spec, doc
from repository.web.request import json_response, services

bp = Blueprint("root", __name__, url_prefix="/api")

# Resource name -> path under the base URL; communities, funders and grants are previews (specification).
RESOURCES = {
    "deposits": urls.DEPOSITIONS,
    "records": urls.RECORDS,
    "files": urls.FILES,
    "licenses": urls.LICENSES,
    "communities": urls.COMMUNITIES,
    "funders": urls.FUNDERS,
    "grants": urls.GRANTS,
}


@bp.get("/")
@doc(responses={"200": {"description": "Links to the resources of the API."}})
def index() -> Response:
    """Links to deposits, records, files, licenses, communities, funders and grants."""
    base = services().settings.BASE_URL
    return json_response({"links": {name: base + path for name, path in RESOURCES.items()}})


@bp.get("/openapi.json")
def openapi() -> Response:
    """The OpenAPI 3 description of this API, generated from its routes and schemas."""
    settings = services().settings
    spec = build_spec(current_app, settings.REPOSITORY_NAME + " API", "1.0.0", settings.BASE_URL)
    return json_response(spec)
