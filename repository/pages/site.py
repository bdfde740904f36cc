"""The institution's own pages and look (docs/operators/branding-and-pages.md): the content pages at
/pages/<slug>, the stylesheet of the primary colour, the logo and the favicon; and `site_layout()`, what every page's
layout reads of them (name, colour, footer links, banners)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, g, request

from repository.errors import NotFound
from repository.pages.base import render_page
from repository.site import banners, branding, content, layout
from repository.web.request import services

bp = Blueprint("site", __name__)
YEAR = "public, max-age=31536000, immutable"


@bp.app_template_global()
def site_layout() -> dict[str, Any]:
    """The branding, footer pages and banners showing now, read once per request. When the database does not
    answer (an error page for that very reason), the settings' defaults and no banner."""
    if "site_layout" not in g:
        s = services()
        try:
            found = layout.read(s.db, s.settings)
        except Exception:  # noqa: BLE001 - the layout of an error page must not fail in its turn
            found = layout.Layout(branding.defaults(s.settings), [], [])
        g.site_layout = {"branding": found.branding, "footer_pages": found.footer_pages,
                         "banners": banners.showing(found.banners, s.clock())}
    return g.site_layout


@bp.get("/pages/<slug>")
def content_page(slug: str) -> Response:
    """A content page, its Markdown rendered and sanitized (200); 404 when there is none."""
    with services().db.read() as conn:
        page = content.get(conn, slug)
    return render_page("site/content.html", page=page, html=content.render(page["body"]))


@bp.get("/site/brand.css")
def stylesheet() -> Response:
    """The primary colour over site.css's default. Its address carries the colour, so it may be kept a year."""
    colour = site_layout()["branding"].colour
    response = Response(branding.stylesheet(colour), mimetype="text/css")
    response.headers["Cache-Control"] = YEAR if request.args.get("c") == colour.lstrip("#") else "no-cache"
    return response


@bp.get("/site/<any(logo, favicon):name>/<digest>")
def image(name: str, digest: str) -> Response:
    """The logo or favicon uploaded by an administrator (404 when none, or an older one's digest)."""
    with services().db.read() as conn:
        found = branding.image(conn, name)
    if found is None or found[2] != digest:
        raise NotFound("There is no such image.")
    response = Response(found[1], mimetype=found[0])
    response.headers["Cache-Control"] = YEAR
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response
