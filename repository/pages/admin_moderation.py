"""Moderation in the administration area (docs/operators/moderation.md): the queue of records in review at
`/admin/moderation/` with one-click approve, take down (a public reason) and block the owner; the banned link
domains; hiding a published record while reviewing it, and unhiding it, from its moderation page. Every form is
a POST with the CSRF token, answered with a redirect back saying what happened (`admin._act`); moderators and
administrators only, anyone else a 403 and an audit entry of the attempt."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, request
from werkzeug.wrappers import Response as BaseResponse

from repository import urls
from repository.accounts import admin as accounts_admin
from repository.accounts.audit import Actor
from repository.pages.admin import BACK, _act
from repository.pages.base import render_page, require_user
from repository.records import moderation, review, screening
from repository.web.openapi import doc
from repository.web.request import services
from repository.web.staff import page_actor

bp = Blueprint("moderation_pages", __name__, url_prefix="/admin")
MODERATOR = accounts_admin.MODERATOR


@bp.get("/moderation/")
def queue_page() -> Response:
    """The records in review (awaiting approval or hidden), oldest first, each with its findings and the three
    decisions; the banned domains below."""
    actor = page_actor(require_user())
    with services().db.read() as conn:
        found = review.queue(conn)
        domains = screening.banned(conn)
    return render_page("admin/moderation.html", actor=actor, items=found, domains=domains)


@bp.post("/moderation/<int:recid>/<any(approve, takedown, block):decision>")
@doc(responses=BACK)
def decide(recid: int, decision: str) -> BaseResponse:
    """Approve the record (public, DOI registered), take it down with the public reason given, or block its owner
    for the reason given (every record of theirs taken down). The owner is told by mail."""
    reason = request.form.get("reason", "")

    def change(conn: Any, actor: Actor) -> None:
        if decision == "approve":
            review.release(conn, services().settings, actor, recid)
        elif decision == "takedown":
            review.take_down(conn, actor, recid, *moderation.parse_texts(reason, ""))
        else:
            review.block_owner(conn, actor, recid, accounts_admin.parse_reason(reason))

    done = {"approve": f"Record {recid} is approved: it is public.",
            "takedown": f"Record {recid} is taken down.",
            "block": f"The owner of record {recid} is blocked and their records taken down."}[decision]
    return _act(MODERATOR, urls.admin_moderation_html(""), done, change)


@bp.post("/moderation/domains")
@doc(responses=BACK)
def ban_domain() -> BaseResponse:
    """Add a domain to the banned link domains (its subdomains too)."""
    given = request.form.get("domain", "")

    def change(conn: Any, actor: Actor) -> None:
        screening.ban(conn, actor, screening.parse_domain(given))

    return _act(MODERATOR, urls.admin_moderation_html("") + "#domains-heading", "The domain is banned.", change)


@bp.post("/moderation/domains/<domain>/delete")
@doc(responses=BACK)
def unban_domain(domain: str) -> BaseResponse:
    """Take a domain off the list."""
    return _act(MODERATOR, urls.admin_moderation_html("") + "#domains-heading", f"{domain} is no longer banned.",
                lambda conn, actor: screening.unban(conn, actor, domain.lower()))


@bp.post("/records/<int:recid>/hide")
@doc(responses=BACK)
def hide(recid: int) -> BaseResponse:
    """Hide the record from search, the sitemaps and OAI-PMH while it is reviewed, for the reason given."""
    reason = request.form.get("reason", "")

    def change(conn: Any, actor: Actor) -> None:
        review.hide(conn, actor, recid, moderation.parse_texts(reason, "")[0])

    return _act(MODERATOR, urls.admin_record_html("", recid), "The record is hidden while you review it.", change)


@bp.post("/records/<int:recid>/unhide")
@doc(responses=BACK)
def unhide(recid: int) -> BaseResponse:
    """Release the record from review: listed again (approved, when it awaited approval)."""
    return _act(MODERATOR, urls.admin_record_html("", recid), "The record is public and listed again.",
                lambda conn, actor: review.release(conn, services().settings, actor, recid))
