"""My uploads, `/deposit`: the signed-in user's depositions (drafts, published, being edited), newest change first,
with the deposition list's own search (`q` in the query syntax of record search, `status`, `all_versions`) and
paging — the same domain listing as `GET /api/deposit/depositions`. Guests are sent to sign in."""

from __future__ import annotations

from urllib.parse import urlencode

from flask import Blueprint, Response, request

from repository import urls
from repository.deposits import representation
from repository.deposits.listing import list_deposits
from repository.errors import ApiError
from repository.pages.base import render_page, require_user
from repository.web.openapi import doc
from repository.web.request import services

bp = Blueprint("my_uploads", __name__)

PAGE_SIZE = "20"
STATES = {"unsubmitted": "Draft", "inprogress": "Published, being edited", "done": "Published"}
PARAMS = [{"name": name, "in": "query", "schema": {"type": kind}, "description": text} for name, kind, text in (
    ("q", "string", "the query syntax of record search, over your depositions"),
    ("status", "string", "draft or published"),
    ("all_versions", "string", "1: every version, not only the newest of each"),
    ("page", "integer", "page number, from 1"),
    ("size", "integer", "uploads per page (default 20)"),
)]


def _args() -> dict[str, str]:
    """The list's arguments from the URL, without empty ones (an empty search box is no search)."""
    wanted = ("q", "status", "all_versions", "page", "size")
    return {k: request.args[k].strip() for k in wanted if request.args.get(k, "").strip()}


def _page_url(args: dict[str, str], number: int) -> str:
    return urls.deposits_html("") + "?" + urlencode({**args, "page": str(number)})


@bp.get("/deposit")
@doc(parameters=PARAMS)
def my_uploads() -> Response:
    """The signed-in user's uploads with their state, search and paging (sign-in first for a guest; a bad query or
    page shows the 400's message on the page)."""
    user = require_user()
    args = _args()
    listing = {"size": PAGE_SIZE} | args
    error, deps, links, owns_any = None, [], "", True
    try:
        with services().db.read() as conn:
            rows, links = list_deposits(conn, services().settings, user["id"], listing)
            deps = representation.render_many(conn, services().settings, rows)
            if not rows and not args:
                owns_any = False
    except ApiError as exc:
        error = exc
    page = int(args.get("page", "1")) if error is None else 1
    return render_page(
        "deposit/list.html", error.status if error else 200,
        deposits=deps, states=STATES, args=args, error=error, owns_any=owns_any, page=page,
        prev_url=_page_url(args, page - 1) if 'rel="prev"' in links else None,
        next_url=_page_url(args, page + 1) if 'rel="next"' in links else None,
    )
