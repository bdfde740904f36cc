"""`/api/licenses/`: search the licenses and fetch one by any of its ids (docs/reference-behaviour.md#licenses)."""

from __future__ import annotations

from flask import Blueprint, Response, request

from repository import urls
from repository.paging import envelope, openapi_parameters, parse_page
from repository.vocabularies import licenses
from repository.web.openapi import doc
from repository.web.request import json_response, services
from serializers.negotiation import parse_accept

bp = Blueprint("licenses", __name__, url_prefix="/api/licenses")

Q = {"name": "q", "in": "query", "schema": {"type": "string"},
     "description": "Words to find in id and title, in the query-string syntax of record search (AND, OR, NOT, "
                    "phrases); a syntax error is a 400."}
ENVELOPE_TYPES = ("application/vnd.service.v1+json", "application/vnd.zenodo.v1+json")


def wants_array(accept: str | None) -> bool:
    """`Accept: application/json` asks for the specification's array of licenses, as on /api/records/
    (CONTRACT.md); no Accept, a wildcard or the v1 media types get the search envelope."""
    for media, _ in parse_accept(accept or ""):
        if media == "application/json":
            return True
        if media.endswith("*") or media in ENVELOPE_TYPES:
            return False
    return False


@bp.get("/")
@doc(parameters=[Q, *openapi_parameters()],
     responses={"200": {"description": "The search envelope of License resources; with Accept: application/json "
                                       "the array of License resources."}})
def search_licenses() -> Response:
    """Search licenses by id, alias and title (`q`, tolerant of small typos); 400 on a bad `q`, `page` or `size`."""
    page = parse_page(request.args)
    with services().db.read() as conn:
        rows, total = licenses.search(conn, request.args.get("q"), page)
    base = services().settings.BASE_URL
    hits = [licenses.to_json(row, base) for row in rows]
    body = envelope(hits, total, page, base + urls.LICENSES, request.args)
    accept = request.headers.get("Accept")
    if wants_array(accept):
        # The paging links the envelope would carry go in a Link header, as for the deposition list.
        links = ", ".join(f'<{url}>; rel="{rel}"' for rel, url in body["links"].items())
        return json_response(hits, headers={"Link": links, "Vary": "Accept"})
    response = json_response(body, headers={"Vary": "Accept"})
    response.mimetype = envelope_type(accept)
    return response


def envelope_type(accept: str | None) -> str:
    """The media type the envelope is labelled with: the v1 type the client named, else application/json."""
    for media, _ in parse_accept(accept or ""):
        if media in ENVELOPE_TYPES:
            return media
        if media.endswith("*"):
            break
    return "application/json"


@bp.get("/<path:license_id>")
@doc(responses={"200": {"description": "A License resource."},
                 "301": {"description": "An alias or another case of the id: the license under its canonical id."}})
def get_license(license_id: str) -> Response:
    """One license by its id; an alias or the id in another case (`CC-BY-4.0`, `CC-BY`) is a 301 to the canonical
    id (a URL never answers a license with another id); 404 if unknown."""
    asked = license_id.rstrip("/")  # the path converter keeps a trailing slash
    with services().db.read() as conn:
        row = licenses.get(conn, asked)
    base = services().settings.BASE_URL
    if row.id != asked:
        location = urls.license_api(base, row.id)
        if request.query_string:
            location += "?" + request.query_string.decode("latin-1")
        body = {"message": f"License {asked!r} is {row.id!r}: see {location}.", "status": 301, "location": location}
        return json_response(body, 301, {"Location": location})
    return json_response(licenses.to_json(row, base))
