"""`/api/vocabularies/`: suggestions for the deposit form's pickers as one types — licenses, languages, research
organisations (ROR), subject terms and the people the depositor named before (docs/api/vocabularies.md). Each answers
`{"hits": [...], "total": N}` with at most `size` (1..50) hits; the public ones may be cached by anyone for a few
minutes, the people only by the depositor's browser, and an `ETag` lets a browser ask again for nothing."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, request

from repository.deposits.people import known_people
from repository.errors import ValidationError, field_error
from repository.paging import Page
from repository.records.known_creators import public_creators
from repository.vocabularies import languages, licenses, ror, subjects
from repository.web.openapi import doc
from repository.web.request import caller, json_response, services

bp = Blueprint("vocabularies", __name__, url_prefix="/api/vocabularies")

MAX_SUGGESTIONS = 50
MAX_AGE = 300  # seconds a suggestion may be reused: the vocabularies change with a load, rarely
PARAMETERS = [{"name": "q", "in": "query", "schema": {"type": "string"}, "description": "What was typed."},
              {"name": "size", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": MAX_SUGGESTIONS,
                                                           "default": 10}}]
ANSWERS = {"200": {"description": "`{hits, total}`"}, "304": {"description": "Not modified (If-None-Match)."},
           "400": {"description": "A bad `size` or `q`."}}


def _size() -> int:
    text = request.args.get("size", "10")
    if not text.isdigit() or not 1 <= int(text) <= MAX_SUGGESTIONS:
        raise ValidationError("Invalid parameters.", [field_error(
            "size", f"Not a valid size: a whole number from 1 to {MAX_SUGGESTIONS}.")])
    return int(text)


def _q() -> str:
    q = request.args.get("q", "")
    if len(q) > 200:
        raise ValidationError("Invalid parameters.", [field_error("q", "Too long: at most 200 characters.")])
    return q


def _answer(hits: list[dict[str, Any]], total: int, private: bool = False) -> Response:
    """The suggestions with their cache headers; 304 when the browser's copy is the same."""
    response = json_response({"hits": hits, "total": total})
    response.headers["Cache-Control"] = f"{'private' if private else 'public'}, max-age={MAX_AGE}"
    if private:
        response.vary.add("Cookie")
        response.vary.add("Authorization")
    response.add_etag()
    response.make_conditional(request)
    return response


@bp.get("/licenses")
@doc(parameters=PARAMETERS, responses=ANSWERS)
def suggest_licenses() -> Response:
    """Licenses by name or id, the one named exactly first, then the common ones (CC-BY-4.0, CC0-1.0, MIT, …)."""
    size, q = _size(), _q()
    with services().db.read() as conn:
        rows = licenses.suggest(conn, q, size)
    return _answer([{"id": r.id, "title": r.title, "url": r.url} for r in rows], len(rows))


@bp.get("/languages")
@doc(parameters=PARAMETERS, responses=ANSWERS)
def suggest_languages() -> Response:
    """Languages by their English name (or ISO 639 code): `{id: "eng", name: "English"}`."""
    found = languages.suggest(_q(), _size())
    return _answer([{"id": code, "name": name} for code, name in found], len(found))


@bp.get("/affiliations")
@doc(parameters=PARAMETERS, responses=ANSWERS)
def suggest_affiliations() -> Response:
    """Research organisations of the loaded ROR dump by name, acronym, other names or ROR id, with their ROR id."""
    size, q = _size(), _q()
    with services().db.read() as conn:
        rows, total = ror.search(conn, q, Page(1, size))
    return _answer([ror.to_json(row) for row in rows], total)


@bp.get("/subjects")
@doc(parameters=PARAMETERS, responses=ANSWERS)
def suggest_subjects() -> Response:
    """Terms of the loaded subject vocabularies by their words or identifier, the term typed exactly first:
    `{term, identifier, scheme, vocabulary}`."""
    size, q = _size(), _q()
    with services().db.read() as conn:
        rows, total = subjects.search(conn, q, Page(1, size))
    return _answer([subjects.to_json(row) for row in rows], total)


@bp.get("/creators")
@doc(parameters=PARAMETERS, responses={**ANSWERS, "401": {"description": "Not signed in."}})
def suggest_creators() -> Response:
    """The people named in the caller's own depositions (name, ORCID iD, affiliation and its ROR id), the most often
    named first, then (for a `q`) the creators of public records whose name holds what was typed; 401 for a guest."""
    who = caller()
    size, q = _size(), _q()
    with services().db.read() as conn:
        people = known_people(conn, who.user_id, q, size)
    if q.strip() and len(people) < size:
        seen = {(p["name"].strip().lower(), p.get("orcid", "")) for p in people}
        people += [p for p in public_creators(services().search, q, size)
                   if (p["name"].strip().lower(), p.get("orcid", "")) not in seen][:size - len(people)]
    return _answer(people, len(people), private=True)
