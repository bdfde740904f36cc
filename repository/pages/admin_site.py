"""The institution's site in the administration area (docs/operators/branding-and-pages.md), for administrators:
the branding (`/admin/site/`: name, contact address, primary colour checked for contrast, footer links, logo and
favicon), the content pages in Markdown (`/admin/pages/`) and the banners (`/admin/banners/`). Every change is
audited; each form answers with a redirect back saying what happened, or the form again with what to fix."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Blueprint, Response, flash, redirect, request
from werkzeug.wrappers import Response as BaseResponse

from repository import urls
from repository.accounts import users
from repository.accounts.audit import Actor
from repository.errors import ValidationError
from repository.pages.admin import BACK, _act
from repository.pages.base import render_page, require_user
from repository.site import banners, branding, content, layout
from repository.web.openapi import doc
from repository.web.request import services
from repository.web.staff import page_actor

bp = Blueprint("admin_site_pages", __name__, url_prefix="/admin")


def _change(back: str, done: str, change: Callable[[Any, Actor], Any]) -> BaseResponse:
    """An administrator's change of the site (repository.pages.admin._act), shown on the next page at once."""
    answer = _act(users.ADMIN, back, done, change)
    layout.forget(services().db)
    return answer


@bp.get("/site/")
def site_page() -> Response:
    """The branding form, the logo and the favicon (administrators only)."""
    actor = page_actor(require_user(), users.ADMIN)
    s = services()
    with s.db.read() as conn:
        found = branding.current(conn, s.settings)
    return render_page("admin/site.html", actor=actor, branding=found, links=branding.links_text(found.footer_links),
                       defaults=branding.defaults(s.settings), max_bytes=s.settings.SITE_IMAGE_MAX_BYTES)


@bp.post("/site/branding")
@doc(responses=BACK)
def save_branding() -> BaseResponse:
    """Save the name, contact address, primary colour and footer links; a colour with too little contrast is
    refused, saying why."""
    s = services()
    values = {key: request.form.get(key, "") for key in ("name", "contact", "colour", "footer_links")}
    return _change(urls.admin_site_html(""), "The branding is saved.",
                   lambda conn, actor: branding.update(conn, actor, s.settings, branding.parse(values)))


@bp.post("/site/<any(logo, favicon):name>")
@doc(responses=BACK)
def upload_image(name: str) -> BaseResponse:
    """Replace the logo or favicon with the image sent (`file`); anything not an image, or too large, is refused
    saying why."""
    limit = services().settings.SITE_IMAGE_MAX_BYTES
    sent = request.files.get("file")
    data = sent.stream.read(limit + 1) if sent is not None else b""
    return _change(urls.admin_site_html(""), f"The {name} is saved.",
                   lambda conn, actor: branding.save_image(conn, actor, name, data, limit))


@bp.post("/site/<any(logo, favicon):name>/remove")
@doc(responses=BACK)
def remove_image(name: str) -> BaseResponse:
    """Go back to no logo, or the default favicon."""
    return _change(urls.admin_site_html(""), f"The {name} is removed.",
                   lambda conn, actor: branding.remove_image(conn, actor, name))


@bp.get("/pages/")
def pages_page() -> BaseResponse:
    """The content pages, the standard ones not yet written, and a form to add one (`?slug=` opens its editor)."""
    actor = page_actor(require_user(), users.ADMIN)
    slug = request.args.get("slug", "").strip().lower()
    if slug:
        if content.SLUG.match(slug):
            return redirect(urls.admin_content_html("", slug), 303)
        flash("A page's address is 1 to 64 lower-case letters, digits and hyphens.", "error")
    with services().db.read() as conn:
        found = content.all_pages(conn)
    written = {p["slug"] for p in found}
    missing = {slug: title for slug, title in content.STANDARD.items() if slug not in written}
    return render_page("admin/pages.html", actor=actor, pages=found, missing=missing)


def _editor(actor: Actor, slug: str, page: dict, status: int = 200, errors: list | None = None) -> Response:
    return render_page("admin/page_edit.html", status, actor=actor, slug=slug, page=page,
                       errors={e.get("field"): e["message"] for e in errors or []},
                       preview=content.render(page.get("body") or ""))


@bp.get("/pages/<slug>")
def page_editor(slug: str) -> Response:
    """A content page's editor, with a preview of the text as readers see it (a new page's when none exists)."""
    actor = page_actor(require_user(), users.ADMIN)
    with services().db.read() as conn:
        page = content.find(conn, slug) or {"title": content.STANDARD.get(slug, ""), "body": "", "in_footer": True,
                                            "position": list(content.STANDARD).index(slug) if slug in
                                            content.STANDARD else 10, "version": 0}
    return _editor(actor, slug, page)


@bp.post("/pages/<slug>")
@doc(responses={"303": {"description": "Back to the editor, saying the page is saved."},
                "400": {"description": "The editor again, with what to fix."}})
def save_page(slug: str) -> BaseResponse:
    """Save the page (a new version of it); 400 with the editor again when the title or text is not right."""
    actor = page_actor(require_user(), users.ADMIN)
    values = {"slug": slug, "title": request.form.get("title"), "body": request.form.get("body"),
              "in_footer": request.form.get("in_footer", "off"), "position": request.form.get("position", "0")}
    try:
        parsed = content.parse(values)
        with services().db.write() as conn:
            saved = content.save(conn, actor, parsed)
    except ValidationError as exc:
        return _editor(actor, slug, {**values, "version": 0}, 400, exc.errors)
    layout.forget(services().db)
    flash(f"The page is saved (version {saved['version']}).", "success")
    return redirect(urls.admin_content_html("", slug), 303)


@bp.post("/pages/<slug>/delete")
@doc(responses=BACK)
def delete_page(slug: str) -> BaseResponse:
    """Delete the page (its address answers 404 from then on)."""
    return _change(urls.admin_content_html(""), "The page is deleted.",
                   lambda conn, actor: content.remove(conn, actor, slug))


@bp.get("/banners/")
def banners_page() -> Response:
    """The banners, each saying whether it shows now, and a form to add one."""
    actor = page_actor(require_user(), users.ADMIN)
    s = services()
    with s.db.read() as conn:
        found = banners.all_banners(conn)
    now = s.clock()
    return render_page("admin/banners.html", actor=actor, now=now,
                       banners=[{**b, "state": banners.state(b, now)} for b in found])


@bp.post("/banners/")
@doc(responses=BACK)
def add_banner() -> BaseResponse:
    """Add a banner shown from `starts` to `ends` (UTC; either may be empty)."""
    values = {key: request.form.get(key, "") for key in ("message", "starts", "ends")}
    return _change(urls.admin_banners_html(""), "The banner is added.",
                   lambda conn, actor: banners.add(conn, actor, banners.parse(values)))


@bp.post("/banners/<int:banner_id>/remove")
@doc(responses=BACK)
def remove_banner(banner_id: int) -> BaseResponse:
    """Remove a banner."""
    return _change(urls.admin_banners_html(""), "The banner is removed.",
                   lambda conn, actor: banners.remove(conn, actor, banner_id))
