"""The administration API for jobs and the site (docs/api/administration.md#jobs-and-the-site): the jobs overview
(the numbers of /metrics and the jobs page), retrying or dropping an outbox entry, the branding, the content pages
and the banners; for a token with the `admin` scope of an administrator (repository.web.staff.api_actor). Each
change writes its audit entry in its own transaction."""

from __future__ import annotations

from dataclasses import asdict

from flask import Blueprint, Response, request

from repository import urls
from repository.api.admin import REFUSED, _object
from repository.site import banners, branding, content, layout
from repository.timeutil import isoformat
from repository.web.openapi import doc
from repository.web.request import json_response, services
from repository.web.staff import api_actor
from repository.worker import jobs

bp = Blueprint("admin_site", __name__, url_prefix="/api/admin")
MISSING = {**REFUSED, "404": {"description": "No such entry"}}


@bp.get("/jobs")
@doc(responses=REFUSED)
def jobs_view() -> Response:
    """The outbox and the mail outbox (counts and pending entries with their last errors), the last reindex check
    and fixity run with their findings, the database's size and the free disk."""
    api_actor()
    s = services()
    with s.db.read() as conn:
        facts = jobs.overview(conn, s.db, s.files.root)
    return json_response(jobs.overview_json(facts))


@bp.post("/jobs/outbox/<int:entry_id>/<any(retry, drop):action>")
@doc(responses=MISSING)
def outbox_view(entry_id: int, action: str) -> Response:
    """Retry a pending outbox entry now (202) or drop it (204)."""
    actor = api_actor()
    with services().db.write() as conn:
        (jobs.retry if action == "retry" else jobs.drop)(conn, actor, entry_id)
    return json_response({"status": "retrying"}, 202) if action == "retry" else Response(status=204)


def _branding_json(found: branding.Branding) -> dict:
    base = services().settings.BASE_URL
    return {**asdict(found), "images": {name: urls.site_image(base, name, digest)
                                        for name, digest in found.images.items()}}


@bp.get("/site/branding")
@doc(responses=REFUSED)
def branding_view() -> Response:
    """The branding: name, contact, colour, footer links, and the addresses of the logo and favicon."""
    api_actor()
    s = services()
    with s.db.read() as conn:
        return json_response(_branding_json(branding.current(conn, s.settings)))


@bp.patch("/site/branding")
@doc(responses={**REFUSED, "400": {"description": "A bad value, or a colour with too little contrast"}})
def branding_change() -> Response:
    """`{"name", "contact", "colour", "footer_links": [{"label", "url"}]}`, any of them: save them (a colour with
    less than 4.5:1 contrast against white is a 400 saying so)."""
    actor = api_actor()
    s = services()
    changes = branding.parse(_object())
    with s.db.write() as conn:
        found = branding.update(conn, actor, s.settings, changes)
    layout.forget(s.db)
    return json_response(_branding_json(found))


@bp.put("/site/<any(logo, favicon):name>")
@doc(responses={**REFUSED, "400": {"description": "Empty, too large, or not a PNG, JPEG, GIF, WebP or ICO image"}})
def image_put(name: str) -> Response:
    """The request body is the image (any `Content-Type`: the bytes decide): it replaces the logo or the favicon.
    Anything not an image a browser shows, or larger than SITE_IMAGE_MAX_BYTES, is a 400 saying why."""
    actor = api_actor()
    s = services()
    limit = s.settings.SITE_IMAGE_MAX_BYTES
    data = request.stream.read(limit + 1)  # one byte past the limit is enough to refuse it
    with s.db.write() as conn:
        branding.save_image(conn, actor, name, data, limit)
    layout.forget(s.db)
    with s.db.read() as conn:
        return json_response(_branding_json(branding.current(conn, s.settings)))


@bp.delete("/site/<any(logo, favicon):name>")
@doc(responses=REFUSED)
def image_delete(name: str) -> Response:
    """Go back to no logo, or the default favicon (204)."""
    actor = api_actor()
    s = services()
    with s.db.write() as conn:
        branding.remove_image(conn, actor, name)
    layout.forget(s.db)
    return Response(status=204)


def _page_json(page: dict) -> dict:
    base = services().settings.BASE_URL
    return {"slug": page["slug"], "title": page["title"], "body": page["body"], "version": page["version"],
            "in_footer": page["in_footer"], "position": page["position"], "updated": isoformat(page["updated"]),
            "links": {"html": urls.content_page_html(base, page["slug"]),
                      "self": urls.admin_site_api(base, f"pages/{page['slug']}")}}


@bp.get("/site/pages")
@doc(responses=REFUSED)
def pages_view() -> Response:
    """Every content page, in the footer's order: `{"hits": [...]}`."""
    api_actor()
    with services().db.read() as conn:
        return json_response({"hits": [_page_json(p) for p in content.all_pages(conn)]})


@bp.get("/site/pages/<slug>")
@doc(responses=MISSING)
def page_view(slug: str) -> Response:
    """One content page, its Markdown as written."""
    api_actor()
    with services().db.read() as conn:
        return json_response(_page_json(content.get(conn, slug)))


@bp.put("/site/pages/<slug>")
@doc(responses={**REFUSED, "400": {"description": "A bad address, title or text"}})
def page_put(slug: str) -> Response:
    """`{"title", "body", "in_footer"?, "position"?}`: create or replace the page (a new version)."""
    actor = api_actor()
    page = content.parse({**_object(), "slug": slug})
    with services().db.write() as conn:
        saved = content.save(conn, actor, page)
    layout.forget(services().db)
    return json_response(_page_json(saved))


@bp.delete("/site/pages/<slug>")
@doc(responses=MISSING)
def page_delete(slug: str) -> Response:
    """Delete the page: 204."""
    actor = api_actor()
    with services().db.write() as conn:
        content.remove(conn, actor, slug)
    layout.forget(services().db)
    return Response(status=204)


def _banner_json(banner: dict) -> dict:
    return {"id": banner["id"], "message": banner["message"], "starts": isoformat(banner["starts"]),
            "ends": isoformat(banner["ends"]), "state": banners.state(banner, services().clock())}


@bp.get("/site/banners")
@doc(responses=REFUSED)
def banners_view() -> Response:
    """Every banner, newest first, with its state now (showing, scheduled, ended)."""
    api_actor()
    with services().db.read() as conn:
        return json_response({"hits": [_banner_json(b) for b in banners.all_banners(conn)]})


@bp.post("/site/banners")
@doc(responses={**REFUSED, "400": {"description": "No message, or a bad time"}})
def banner_add() -> Response:
    """`{"message", "starts"?, "ends"?}` (ISO 8601, UTC without an offset): add a banner; 201."""
    actor = api_actor()
    banner = banners.parse(_object())
    with services().db.write() as conn:
        banner_id = banners.add(conn, actor, banner)
        found = next(b for b in banners.all_banners(conn) if b["id"] == banner_id)
    layout.forget(services().db)
    return json_response(_banner_json(found), 201)


@bp.delete("/site/banners/<int:banner_id>")
@doc(responses=MISSING)
def banner_delete(banner_id: int) -> Response:
    """Remove a banner: 204."""
    actor = api_actor()
    with services().db.write() as conn:
        banners.remove(conn, actor, banner_id)
    layout.forget(services().db)
    return Response(status=204)
