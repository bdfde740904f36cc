"""Access requests in the browser: asking for access to a restricted record's files (signed in, or as a guest
whose address a mailed link confirms), and the owner's page of requests to decide and grants to revoke
(`/account/requests/`, which also lists the requests the user made)."""

from __future__ import annotations

from flask import Blueprint, current_app, flash, redirect, request
from flask_wtf import FlaskForm
from werkzeug.wrappers import Response as BaseResponse
from wtforms import DateField, EmailField, TextAreaField
from wtforms.validators import Optional

from repository import urls
from repository.errors import ApiError, ValidationError
from repository.pages.base import confirm_page, render_page, require_user
from repository.records import access_requests, read
from repository.web.ratelimit import throttle_mailing
from repository.web.request import identity, services
from repository.web.session import current_user

bp = Blueprint("access", __name__)
OWNER_PAGE = "/account/requests/"


class RequestForm(FlaskForm):  # type: ignore[misc]  # flask_wtf ships no types
    justification = TextAreaField("Why do you need access?")
    email = EmailField("Your e-mail address")


class DecisionForm(FlaskForm):  # type: ignore[misc]
    until = DateField("Access until (optional)", validators=[Optional()])
    message = TextAreaField("Message to the requester (optional)")


def _record(recid: int) -> dict:
    return read.record_row(services().db, services().settings, recid)


@bp.route("/records/<int:recid>/access/request", methods=["GET", "POST"])
def request_form(recid: int) -> BaseResponse:
    """The form to ask for access to a restricted record's files (a justification; an address for a guest), and
    what became of the request. 404 for no such record."""
    row = _record(recid)
    m = row["metadata"]
    user = current_user()
    form = RequestForm()
    context = {"recid": recid, "title": m.get("title", ""), "conditions": m.get("access_conditions"),
               "access_right": m.get("access_right", "open"), "user": user, "form": form,
               "owner": user is not None and user["id"] == row["owner_id"], "maxlength": access_requests.JUSTIFICATION_MAX}
    if request.method == "POST":
        s = services()
        try:
            if user is None:  # a guest's request mails a confirmation link to the address given
                throttle_mailing(current_app, s.settings, "access-request", form.email.data)
            with s.db.write() as conn:
                made = access_requests.create(conn, s.settings, s.secret, recid, form.justification.data,
                                              identity(), None if user else form.email.data)
        except ValidationError as exc:
            for error in exc.errors:
                field = getattr(form, error["field"], None)
                if field is not None:
                    field.errors = [*field.errors, error["message"]]
            return render_page("access/request.html", 400, **context)
        except ApiError as exc:
            return render_page("access/request.html", exc.status, refused=exc.message, **context)
        return render_page("access/request.html", 201, made=made, **context)
    return render_page("access/request.html", **context)


@bp.route("/records/<int:recid>/access/confirm/<token>", methods=["GET", "POST"])
def confirm(recid: int, token: str) -> BaseResponse:
    """The page of a guest's confirmation link, with the button to confirm (200); its POST sends the request to the
    record's owner. 400 page for a link that is invalid, expired or used."""
    if request.method == "GET":
        return confirm_page("Confirm your request", "Press the button to confirm this address and send your "
                            "request for access to the record's owner.", "Confirm and send the request")
    s = services()
    with s.db.write() as conn:
        made = access_requests.confirm(conn, s.settings, s.secret, token)
    return render_page("access/confirmed.html", recid=made["recid"], made=made)


@bp.get(OWNER_PAGE, endpoint="owner_requests")
def owner_requests() -> BaseResponse:
    """The signed-in user's page: requests for their records to decide, their live grants to revoke, and the
    requests they made themselves."""
    user = require_user()
    with services().db.read() as conn:
        pending, grants = access_requests.owner_overview(conn, user["id"])
        mine = access_requests.made_by(conn, user["id"])
    return render_page("access/requests.html", pending=pending, grants=grants, mine=mine,
                       maxlength=access_requests.MESSAGE_MAX)


def _decided(recid: int, request_id: int, action: str) -> BaseResponse:
    user = require_user()
    form = DecisionForm()
    s = services()
    if form.until.raw_data and form.until.raw_data[0] and form.until.data is None:
        flash("The date is not valid: use YYYY-MM-DD. Nothing was changed.", "error")
        return redirect(urls.access_requests_html(""), 303)
    until = form.until.data.isoformat() if form.until.data else None
    try:
        with s.db.write() as conn:
            if action == "revoke":
                access_requests.revoke(conn, s.settings, recid, request_id, user["id"])
            else:
                access_requests.decide(conn, s.settings, recid, request_id, user["id"], action == "accept",
                                       form.message.data, until)
    except ValidationError as exc:
        details = " ".join(f"{e['field']}: {e['message']}" for e in exc.errors)
        flash(f"Nothing was changed. {details}", "error")
        return redirect(urls.access_requests_html(""), 303)
    done = {"accept": "accepted", "reject": "rejected", "revoke": "revoked"}[action]
    flash(f"Request {request_id} {done}: the requester has been told by e-mail.", "success")
    return redirect(urls.access_requests_html(""), 303)


@bp.post(OWNER_PAGE + "<int:recid>/<int:request_id>/accept")
def accept(recid: int, request_id: int) -> BaseResponse:
    """Accept a pending request (optionally until a date); the record's owner only (403 page)."""
    return _decided(recid, request_id, "accept")


@bp.post(OWNER_PAGE + "<int:recid>/<int:request_id>/reject")
def reject(recid: int, request_id: int) -> BaseResponse:
    """Reject a pending request with a message; the record's owner only (403 page)."""
    return _decided(recid, request_id, "reject")


@bp.post(OWNER_PAGE + "<int:recid>/<int:request_id>/revoke")
def revoke(recid: int, request_id: int) -> BaseResponse:
    """Revoke a grant; the record's owner only (403 page)."""
    return _decided(recid, request_id, "revoke")
