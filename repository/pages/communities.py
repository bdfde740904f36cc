"""Communities in the browser: the list with its search (`/communities/`), a community's page with its records
and the search page's facets (`/communities/<id>/`, the community's `links.html`), creating and editing one, and
its owner's curation page (pending inclusion requests to accept or reject).

Every write goes through the same domain functions as the API (`communities.store`, `communities.inclusions`),
so the rules and messages are the API's; a field's error is shown beside the field."""

from __future__ import annotations

from dataclasses import replace
from urllib.parse import urlencode

from flask import Blueprint, Response, flash, redirect, request
from werkzeug.datastructures import MultiDict
from werkzeug.wrappers import Response as BaseResponse

from repository import urls
from repository.communities import inclusions, logos, store
from repository.errors import ApiError, Forbidden, NotFound, ValidationError
from repository.metadata.fields import sanitize_html
from repository.pages.base import render_page, require_user
from repository.pages.discover import PARAMS as SEARCH_PARAMS
from repository.pages.discover import plain_snippet, public_when_anonymous, rendered_results, search_view
from repository.paging import parse_page
from repository.search.params import parse_search_args
from repository.storage import Row
from repository.web.openapi import doc
from repository.web.request import services
from repository.web.session import current_user

bp = Blueprint("community_pages", __name__)

SORTS = (("ranking", "Recently changed"), ("newest", "Newest"), ("title", "Title"))
FIELDS = ("identifier", "title", "description", "curation_policy")
TITLES_PER_SEARCH = 100
LOGO_OVERHEAD = 64 * 1024  # the multipart framing and the form's token
REQUEST_STATUSES = (("pending", "Pending"), ("accepted", "Accepted"), ("rejected", "Rejected"), ("all", "All"))
LIST_PARAMS = [{"name": n, "in": "query", "schema": {"type": "string"}, "description": t} for n, t in (
    ("q", "words in the identifier, title or description"), ("sort", "ranking (default), newest or title"),
    ("page", "page number from 1"), ("size", "communities per page (default 20)"))]  # fmt: skip


def _community(row: Row) -> dict:
    """A community as its pages show it; the descriptions are HTML, cleaned again as a record's are."""
    return {"id": row.identifier, "title": row.title, "owner_id": row.owner_id,
            "description": sanitize_html(row.description or ""), "curation_policy": sanitize_html(row.curation_policy or ""),
            "snippet": plain_snippet(row.description, 200), "created": row.created, "updated": row.updated,
            # The address changes with the community, so a browser may keep the logo (Cache-Control below).
            "logo_url": urls.community_logo_html("", row.identifier) + f"?v={row.updated:%Y%m%d%H%M%S}"
                        if row.logo else None}  # fmt: skip


def _load(identifier: str) -> dict:
    """The community `identifier`; NotFound (a 404 page) when there is none, or none could have that name."""
    if not store.IDENTIFIER.fullmatch(identifier):
        raise NotFound(f"Community {identifier!r} not found.")
    with services().db.read() as conn:
        return _community(store.get(conn, identifier))


def _owned(identifier: str, user: dict) -> dict:
    community = _load(identifier)
    if community["owner_id"] != user["id"]:
        raise Forbidden("Only the owner of a community may edit or curate it.")
    return community


@bp.get("/communities/")
@doc(parameters=LIST_PARAMS)
def community_list() -> Response:
    """Every community, searchable by words (`q`) and sortable, with paging; a bad page or sort answers 400 with
    its message on the page."""
    args = {k: request.args[k].strip() for k in ("q", "sort", "page", "size") if request.args.get(k, "").strip()}
    error: ApiError | None = None
    rows: list[Row] = []
    total, number, size = 0, 1, 20
    try:
        page = parse_page(args, default_size=20)
        sort = store.parse_sort(args.get("sort"))
        number, size = page.number, page.size
        with services().db.read() as conn:
            rows, total = store.search(conn, args.get("q"), sort, page)
    except ApiError as exc:
        if exc.status >= 500:
            raise
        error = exc

    def page_url(n: int) -> str:
        return urls.communities_html("") + "?" + urlencode({**args, "page": str(n)})

    counts = _record_counts([r.identifier for r in rows])
    response = render_page(
        "communities/list.html", error.status if error else 200,
        communities=[{**_community(r), "records": counts[r.identifier]} for r in rows],
        total=total, args=args, sorts=SORTS, error=error, page=number,
        prev_url=page_url(number - 1) if number > 1 and not error else None,
        next_url=page_url(number + 1) if number * size < total and not error else None,
        signed_in=current_user() is not None)
    return public_when_anonymous(response)


def _form_page(template: str, status: int, values: dict, errors: list[dict], **context: object) -> Response:
    by_field: dict[str, list[str]] = {}
    for error in errors:
        by_field.setdefault(error.get("field") or "", []).append(error["message"])
    return render_page(template, status, values=values, field_errors=by_field, **context)


@bp.route("/communities/new", methods=["GET", "POST"])
def create() -> BaseResponse:
    """The form creating a community the signed-in user owns (sign-in first for a guest); 400 with each field's
    error beside it (the API's validation), then the new community's page."""
    user = require_user()
    if request.method == "GET":
        return _form_page("communities/form.html", 200, {}, [], community=None)
    values = {k: request.form.get(k, "") for k in FIELDS}
    try:
        with services().db.write() as conn:
            row = store.create(conn, user["id"], values)
    except ValidationError as exc:
        return _form_page("communities/form.html", 400, values, exc.errors, community=None)
    flash(f"The community “{row.title}” has been created.", "success")
    return redirect(urls.community_html("", row.identifier), 303)


@bp.route("/communities/<identifier>/edit", methods=["GET", "POST"])
def edit(identifier: str) -> BaseResponse:
    """The owner's form changing a community's title, description and curation policy (404 unknown, 403 for
    anyone else); 400 with each field's error beside it."""
    user = require_user()
    community = _owned(identifier, user)
    if request.method == "GET":
        return _form_page("communities/form.html", 200, community, [], community=community)
    values = {k: request.form.get(k, "") for k in FIELDS if k != "identifier"}
    try:
        with services().db.write() as conn:
            store.edit(conn, identifier, user["id"], values)
    except ValidationError as exc:
        return _form_page("communities/form.html", 400, {**values, "identifier": identifier}, exc.errors,
                          community=community)
    flash("The community has been saved.", "success")
    return redirect(urls.community_html("", identifier), 303)


@bp.get("/communities/<identifier>/")
@doc(parameters=[p for p in SEARCH_PARAMS if p["name"] != "communities"])
def community(identifier: str) -> Response:
    """A community's page (its `links.html`): what it is about, and its records with the search page's query,
    facets and paging. 404 page for an unknown community; 400 with the message for a bad query."""
    found = _load(identifier)
    view = search_view(request.args, urls.community_html("", identifier), MultiDict({"communities": identifier}))
    user = current_user()
    # A community that holds no record yet says what it is for and how records join it, rather than the search's
    # "no results" advice (docs/researchers/index.md#the-web-pages).
    empty = view.error is None and view.total == 0 and not any(request.args.values())
    response = render_page("communities/community.html", view.error.status if view.error else 200,
                           community=found, search=view, results=rendered_results(view), empty=empty,
                           owner=user is not None and user["id"] == found["owner_id"])
    return public_when_anonymous(response)


@bp.url_value_preprocessor
def _bound_logo_body(endpoint: str | None, _values: dict | None) -> None:
    # A logo may be larger than the form bound of every page (repository.pages.base): up to logos.MAX_BYTES and
    # the form beside it, still decided before the CSRF check parses the body; a larger one is refused beside the
    # field up to LOGO_OVERHEAD past the bound, with a 413 page beyond.
    if endpoint == "pages.community_pages.change_logo" and current_user() is not None:
        request.max_content_length = logos.MAX_BYTES + LOGO_OVERHEAD


@bp.get("/communities/<identifier>/logo")
@doc(tags=["pages"], responses={"200": {"description": "The community's logo", "content": {"image/png": {}}},
                                "304": {"description": "If-None-Match held its ETag"},
                                "404": {"description": "No such community, or it has no logo"}})  # fmt: skip
def logo(identifier: str) -> BaseResponse:
    """A community's logo as a PNG (200; 304 for a copy the browser holds); 404 when it has none."""
    if not store.IDENTIFIER.fullmatch(identifier):
        raise NotFound(f"Community {identifier!r} not found.")
    with services().db.read() as conn:
        data, tag = logos.logo(conn, identifier)
    response = Response(data, mimetype="image/png")
    response.set_etag(tag)
    response.headers["Cache-Control"] = "public, max-age=86400"
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response.make_conditional(request)


@bp.post("/communities/<identifier>/logo")
def change_logo(identifier: str) -> BaseResponse:
    """The owner's logo upload (multipart, field `logo`) or removal (field `remove`): 303 to the edit form; 400 with
    the form and the error beside the field (too large, not an image); 403 for anyone else."""
    user = require_user()
    community = _owned(identifier, user)
    upload = request.files.get("logo")
    data = b""
    if upload is not None:
        with upload.stream:  # closed at once: werkzeug spooled it to a temporary file
            data = upload.stream.read(logos.MAX_BYTES + 1)
    try:
        png = None if request.form.get("remove") else logos.thumbnail(data)
        with services().db.write() as conn:
            logos.set_logo(conn, identifier, user["id"], png)
    except ValidationError as exc:
        return _form_page("communities/form.html", 400, community, exc.errors, community=community)
    flash("The logo has been removed." if png is None else "The logo has been saved.", "success")
    return redirect(urls.community_edit_html("", identifier), 303)


def _record_counts(identifiers: list[str]) -> dict[str, int]:
    """How many records each community lists (latest versions, as its page does): a search each, for its total
    only (a page lists 20; the engine's terms facet would give the top ten only)."""
    s = services()
    counts = {}
    for identifier in identifiers:
        args = MultiDict({"communities": identifier, "size": "1"})
        counts[identifier] = s.search.search(replace(parse_search_args(args, cursor_key=s.secret), facets=())).total
    return counts


def _titles(recids: list[int]) -> dict[int, str]:
    """The titles of published records, by searches of 100 ids (all versions: a request may name an older one)."""
    s = services()
    titles: dict[int, str] = {}
    for start in range(0, len(recids), TITLES_PER_SEARCH):
        chunk = recids[start:start + TITLES_PER_SEARCH]
        args = MultiDict({"q": "recid:(" + " OR ".join(str(r) for r in chunk) + ")", "all_versions": "true",
                          "size": str(len(chunk))})
        req = replace(parse_search_args(args, cursor_key=s.secret), facets=())  # no counts needed
        titles |= {hit["id"]: hit.get("metadata", {}).get("title") or "Untitled" for hit in s.search.search(req).hits}
    return titles


@bp.get("/communities/<identifier>/curate")
def curate(identifier: str) -> Response:
    """The owner's inclusion requests (pending by default; `status` = accepted, rejected or all) with accept and
    reject buttons; 404 unknown community, 403 for anyone but its owner, 400 for an unknown status."""
    user = require_user()
    community = _load(identifier)
    status = request.args.get("status") or "pending"
    with services().db.read() as conn:
        rows = inclusions.list_requests(conn, identifier, user["id"], status)
    titles = _titles(sorted({r["recid"] for r in rows}))
    requests = [{**r, "title": titles.get(r["recid"], f"Record {r['recid']}")} for r in rows]
    return render_page("communities/curate.html", community=community, requests=requests, status=status,
                       statuses=REQUEST_STATUSES)


def _decide(identifier: str, request_id: int, accept: bool) -> BaseResponse:
    user = require_user()
    _load(identifier)
    s = services()
    with s.db.write() as conn:
        row, _ = inclusions.decide(conn, s.settings, identifier, request_id, user["id"], accept)
    done = "accepted: every version of the record is now in the community" if accept else "rejected"
    flash(f"Request {row['id']} {done}.", "success")
    return redirect(urls.community_curate_html("", identifier), 303)


@bp.post("/communities/<identifier>/curate/<int:request_id>/accept")
def accept(identifier: str, request_id: int) -> BaseResponse:
    """Accept a record (all its versions) into the community; its owner only (403 page), then the curation page."""
    return _decide(identifier, request_id, True)


@bp.post("/communities/<identifier>/curate/<int:request_id>/reject")
def reject(identifier: str, request_id: int) -> BaseResponse:
    """Reject a record's request, or remove an accepted record; its owner only (403 page)."""
    return _decide(identifier, request_id, False)
