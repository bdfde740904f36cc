"""The deposit page's corrections of a published version (docs/researchers/corrections.md), each the domain call of
the API's action: `/deposit/<id>/delete` asks first (a reason from the list and a note) and then deletes the version
(`delete-version`) or, after the window, sends a deletion request (`request-deletion`); `/deposit/<id>/unlockfiles`
opens the files once for fixing. Each answers with the deposit page (or the tombstone), saying what happened."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, flash, redirect, request
from werkzeug.wrappers import Response as BaseResponse

from repository import urls
from repository.deposits import actions, filefix
from repository.errors import ApiError
from repository.pages.base import require_user
from repository.records import deletion
from repository.web.openapi import doc
from repository.web.request import services

bp = Blueprint("corrections_pages", __name__, url_prefix="/deposit")

BACK = {"303": {"description": "To the deposit page saying what happened, or to the tombstone once deleted."}}
REASON_FORM = {"content": {"application/x-www-form-urlencoded": {"schema": {"type": "object"}}},
               "description": "`reason` (an id of the list), `note`, `csrf_token`."}


@bp.app_template_global()
def corrections(dep: dict) -> dict[str, Any]:
    """What the signed-in owner may do to their deposition `dep` (as the API shows it) now: the deposit page and its
    file area read it (`files_open`, `delete_refused`, `unlock_refused`; see `filefix.owner_choices`)."""
    choices: dict[str, Any] = {"files_open": False, "delete_refused": "", "unlock_refused": "", "deleted": False}
    if dep.get("submitted"):
        s = services()
        with s.db.read() as conn:
            row = actions.get_deposit(conn, dep["id"], dep["owner"])
            choices = filefix.owner_choices(conn, s.settings, row, s.clock())
    return {**choices, "reasons": deletion.DELETION_REASONS}


def _reason() -> tuple[str, str]:
    return deletion.parse_reason({"reason": request.form.get("reason"), "note": request.form.get("note", "")})


def _refused(dep_id: int, exc: ApiError) -> BaseResponse:
    if exc.status == 404:
        raise exc
    messages = [exc.message] + [e["message"] for e in exc.errors if e["message"] != exc.message]
    flash(" ".join(messages), "error")
    return redirect(urls.deposit_action_html("", dep_id, "delete"), 303)


@bp.post("/<int:dep_id>/delete-version")
@doc(request=REASON_FORM, responses=BACK)
def delete_version(dep_id: int) -> BaseResponse:
    """Delete the owner's published version (the API's delete action) and show its tombstone; a refusal goes back
    to the confirmation page, which says why."""
    user = require_user()
    s = services()
    try:
        reason, note = _reason()
        with s.db.write() as conn:
            deletion.delete_version(conn, s.settings, dep_id, user["id"], reason, note, s.clock())
    except ApiError as exc:
        return _refused(dep_id, exc)
    return redirect(urls.record_html("", dep_id), 303)


@bp.post("/<int:dep_id>/request-deletion")
@doc(request=REASON_FORM, responses=BACK)
def request_deletion(dep_id: int) -> BaseResponse:
    """Send the administrators a request to delete the owner's version (the API's requestdeletion action)."""
    user = require_user()
    s = services()
    try:
        reason, note = _reason()
        with s.db.write() as conn:
            deletion.request_deletion(conn, dep_id, user["id"], reason, note)
    except ApiError as exc:
        return _refused(dep_id, exc)
    flash("Your deletion request was sent to the administrators; the record stays published until they act.",
          "success")
    return redirect(urls.deposit_html("", dep_id), 303)


@bp.post("/<int:dep_id>/unlockfiles")
@doc(responses=BACK)
def unlock_files(dep_id: int) -> BaseResponse:
    """Open the files of the owner's published version for fixing (the API's unlockfiles action)."""
    user = require_user()
    s = services()
    s.indexer.settle(dep_id)
    try:
        with s.db.write() as conn:
            dep = actions.get_deposit(conn, dep_id, user["id"], lock=True)
            filefix.unlock_files(conn, s.settings, dep, user["id"], s.clock())
    except ApiError as exc:
        if exc.status == 404:
            raise
        flash(exc.message, "error")
    else:
        flash("The files are open: replace or add files, then publish to apply them (the DOI stays), or discard.",
              "success")
    return redirect(urls.deposit_html("", dep_id), 303)
