"""The administration area, `/admin/` (docs/operators/administration.md): find a user and read their page, give
roles (administrators only), block and unblock with a reason; take a record down with a public reason and a
private note, restore it, give it to another owner; answer the owners' deletion requests; read the audit log
(administrators only). Every form is a POST with the CSRF token (checked for every page write); each answers with
a redirect back to the page it came from, saying what happened. Anyone without the role gets a 403 page and an
audit entry of the attempt (repository.web.staff)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Blueprint, Response, flash, redirect, request
from werkzeug.wrappers import Response as BaseResponse

from repository import urls
from repository.accounts import admin, audit, personal_data, users
from repository.accounts.audit import Actor
from repository.errors import ApiError
from repository.pages.base import render_page, require_user
from repository.paging import parse_page
from repository.records import moderation
from repository.records.creator_owners import owners_of_creator
from repository.web.openapi import doc
from repository.web.request import json_response, services
from repository.web.staff import page_actor

bp = Blueprint("admin_pages", __name__, url_prefix="/admin")
BACK = {"303": {"description": "Back to the page, which says what happened."}}


def _act(need: str, back: str, done: str, change: Callable[[Any, Actor], Any]) -> BaseResponse:
    """Run `change(conn, actor)` in one transaction for a signed-in user with the role `need`, then go `back`
    saying `done` (or, refused by the domain, why)."""
    actor = page_actor(require_user(), need)
    try:
        with services().db.write() as conn:
            change(conn, actor)
    except ApiError as exc:
        if exc.status == 404:
            raise
        flash(" ".join([exc.message] + [e["message"] for e in exc.errors if e["message"] != exc.message]), "error")
    else:
        flash(done, "success")
    return redirect(back, 303)


@bp.get("/")
def index() -> Response:
    """Find users by e-mail, linked ORCID iD, or a name or ORCID iD their records' creators carry (`q`), and the
    counts of open work."""
    actor = page_actor(require_user())
    q = request.args.get("q", "")
    with services().db.read() as conn:
        found = admin.search(conn, q, owners=owners_of_creator(conn, services().search, q))
        requests = moderation.open_requests(conn)
    return render_page("admin/index.html", q=q, found=found, open_requests=len(requests), actor=actor,
                       staff_role=admin.staff_role)


@bp.get("/users/<int:user_id>")
def user_page(user_id: int) -> Response:
    """A user's page: account, role, block, linked sign-ins, records, deposit and token counts."""
    actor = page_actor(require_user())
    with services().db.read() as conn:
        overview = admin.overview(conn, user_id)
    # `user` is the layout's signed-in user: the one shown here is the `account`.
    return render_page("admin/user.html", actor=actor, roles=(*admin.ROLES, "none"), account=overview.pop("user"),
                       **overview)


@bp.post("/users/<int:user_id>/role")
@doc(responses=BACK)
def set_role(user_id: int) -> BaseResponse:
    """Give the user a role (administrators only; 403 for a moderator)."""
    role = request.form.get("role", "")
    return _act(users.ADMIN, urls.admin_user_html("", user_id), f"The role is now {role}.",
                lambda conn, actor: admin.set_role(conn, actor, user_id, role))


@bp.post("/users/<int:user_id>/block")
@doc(responses=BACK)
def block(user_id: int) -> BaseResponse:
    """Block the user with the reason given: their sessions and tokens stop working at once."""
    reason = request.form.get("reason", "")
    return _act(admin.MODERATOR, urls.admin_user_html("", user_id), "The user is blocked.",
                lambda conn, actor: admin.block(conn, actor, user_id, admin.parse_reason(reason)))


@bp.post("/users/<int:user_id>/unblock")
@doc(responses=BACK)
def unblock(user_id: int) -> BaseResponse:
    """Unblock the user."""
    return _act(admin.MODERATOR, urls.admin_user_html("", user_id), "The user is unblocked.",
                lambda conn, actor: admin.unblock(conn, actor, user_id))


@bp.post("/users/<int:user_id>/resend")
@doc(responses=BACK)
def resend(user_id: int) -> BaseResponse:
    """Mail the user a new confirmation link."""
    s = services()
    return _act(admin.MODERATOR, urls.admin_user_html("", user_id), "A new confirmation link is on its way.",
                lambda conn, actor: personal_data.resend(conn, actor, user_id, s.settings, s.secret))


@bp.post("/users/<int:user_id>/delete")
@doc(responses={"303": {"description": "To the user list, or back to the user's page saying why not."}})
def delete_account(user_id: int) -> BaseResponse:
    """Delete the account (administrators only): personal data removed, published records stay. The form asks to
    type the address, so that no slip of the mouse deletes an account."""
    actor = page_actor(require_user(), users.ADMIN)
    with services().db.read() as conn:
        email = admin.get(conn, user_id)["email"]
    if request.form.get("confirm", "").strip().lower() != email:
        flash("Type the e-mail address of the account to confirm its deletion.", "error")
        return redirect(urls.admin_user_html("", user_id), 303)
    try:
        with services().db.write() as conn:
            personal_data.erase(conn, actor, user_id)
    except ApiError as exc:
        flash(exc.message, "error")
        return redirect(urls.admin_user_html("", user_id), 303)
    flash(f"The account of {email} is deleted; its published records stay.", "success")
    return redirect(urls.admin_html(""), 303)


@bp.get("/users/<int:user_id>/export")
def export(user_id: int) -> Response:
    """The user's personal data as a JSON download (administrators only); written to the audit log."""
    actor = page_actor(require_user(), users.ADMIN)
    with services().db.write() as conn:
        data = personal_data.export(conn, user_id)
        audit.record(conn, actor, "user.export", "user", user_id)
    response = json_response(data)
    response.headers["Content-Disposition"] = f'attachment; filename="user-{user_id}.json"'
    response.headers["Cache-Control"] = "private, no-store"
    return response


@bp.get("/records/<int:recid>")
def record_page(recid: int) -> Response:
    """A record's moderation page: its state, owner and takedown, with the forms that change them."""
    actor = page_actor(require_user())
    with services().db.read() as conn:
        facts = moderation.record_facts(conn, recid)
    return render_page("admin/record.html", actor=actor, record=facts)


@bp.post("/records/<int:recid>/takedown")
@doc(responses=BACK)
def take_down(recid: int) -> BaseResponse:
    """Take the record down with a public reason (the tombstone shows it) and a private note."""

    def change(conn: Any, actor: Actor) -> None:
        reason, note = moderation.parse_texts(request.form.get("reason"), request.form.get("note", ""))
        moderation.take_down_record(conn, actor, recid, reason, note)

    return _act(admin.MODERATOR, urls.admin_record_html("", recid), "The record is taken down.", change)


@bp.post("/records/<int:recid>/restore")
@doc(responses=BACK)
def restore(recid: int) -> BaseResponse:
    """Bring a taken-down record back."""
    return _act(admin.MODERATOR, urls.admin_record_html("", recid), "The record is public again.",
                lambda conn, actor: moderation.restore(conn, actor, recid))


@bp.post("/records/<int:recid>/owner")
@doc(responses=BACK)
def change_owner(recid: int) -> BaseResponse:
    """Give the record (every version) to the user with the e-mail address given."""
    email = request.form.get("email", "")
    return _act(admin.MODERATOR, urls.admin_record_html("", recid), f"The record now belongs to {email}.",
                lambda conn, actor: moderation.change_owner(conn, actor, recid, email))


@bp.get("/requests/")
def requests_page() -> Response:
    """The owners' open deletion requests, each with accept and decline."""
    actor = page_actor(require_user())
    with services().db.read() as conn:
        found = moderation.open_requests(conn)
    return render_page("admin/requests.html", actor=actor, requests=found)


@bp.post("/requests/<int:request_id>/<any(accept, decline):decision>")
@doc(responses=BACK)
def decide(request_id: int, decision: str) -> BaseResponse:
    """Accept (take the record down) or decline (close, the record stays) an owner's deletion request."""
    decide_one = moderation.accept_request if decision == "accept" else moderation.decline_request
    done = "The record is taken down." if decision == "accept" else "The request is declined; the record stays."
    return _act(admin.MODERATOR, urls.admin_requests_html(""), done,
                lambda conn, actor: decide_one(conn, actor, request_id))


@bp.get("/audit/")
def audit_page() -> Response:
    """The audit log, newest first, filtered by `q`, `action` and `target` (administrators only)."""
    actor = page_actor(require_user(), users.ADMIN)
    page = parse_page(request.args, default_size=50)
    args = {name: request.args.get(name, "")[:200] for name in ("q", "action", "target")}
    with services().db.read() as conn:
        entries, total = audit.search(conn, page=page.number, size=page.size, **args)
    return render_page("admin/audit.html", actor=actor, entries=entries, total=total, page=page, args=args)
