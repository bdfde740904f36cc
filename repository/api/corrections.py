"""Corrections of a published version by its owner, as deposition actions beside publish, edit and newversion
(docs/api/deposits.md#corrections): `actions/delete` and `actions/requestdeletion` (a reason from
`DELETION_REASONS` and a note), `actions/unlockfiles` (fix the files once, then publish again)."""

from __future__ import annotations

from flask import Blueprint, Response

from repository.deposits import actions, filefix, representation
from repository.records import build, deletion
from repository.web.openapi import doc
from repository.web.request import caller, json_body, json_response, require_scope, services

bp = Blueprint("corrections", __name__, url_prefix="/api/deposit/depositions")

REASON = {"content": {"application/json": {"schema": {
    "type": "object", "required": ["reason"],
    "properties": {"reason": {"type": "string", "enum": list(deletion.DELETION_REASONS)},
                   "note": {"type": "string", "maxLength": deletion.NOTE_MAX}}}}}}  # fmt: skip
REFUSALS = {"400": {"description": "A reason missing or unknown, or a note too long ('other' needs one)"},
            "404": {"description": "No such deposition of the caller"},
            "410": {"description": "The version is deleted already"}}  # fmt: skip


@bp.post("/<int:dep_id>/actions/delete")
@require_scope("deposit:actions")
@doc(request=REASON, responses={**REFUSALS, "200": {"description": "Deleted: the tombstone's facts"},
                                "403": {"description": "Outside RECORD_DELETE_DAYS, or a DOI registered elsewhere: "
                                                       "request the deletion instead"},
                                "409": {"description": "The deposition is being edited"}})  # fmt: skip
def delete_view(dep_id: int) -> Response:
    """Delete the caller's published version within RECORD_DELETE_DAYS of its publication: 200 with the tombstone's
    facts; it answers 410 with the reason from then on. 403 outside the window, 409 while being edited."""
    reason, note = deletion.parse_reason(json_body())
    s = services()
    with s.db.write() as conn:
        deletion.delete_version(conn, s.settings, dep_id, caller().user_id, reason, note, s.clock())
    with s.db.read() as conn:
        done = deletion.deletion_of(conn, dep_id)
        newest = build.latest_version(conn, build.concept_of(conn, dep_id) or dep_id)
    assert done is not None
    return json_response(deletion.deletion_json(done, dep_id, newest, s.settings.BASE_URL))


@bp.post("/<int:dep_id>/actions/requestdeletion")
@require_scope("deposit:actions")
@doc(request=REASON, responses={**REFUSALS, "202": {"description": "The request, kept for the administrators"},
                                "409": {"description": "A request for this version is open already"}})  # fmt: skip
def request_deletion_view(dep_id: int) -> Response:
    """Ask the administrators to delete the caller's published version: 202 with the request; 409 while one is
    open."""
    reason, note = deletion.parse_reason(json_body())
    s = services()
    with s.db.write() as conn:
        kept = deletion.request_deletion(conn, dep_id, caller().user_id, reason, note)
    return json_response(deletion.request_json(s.settings.BASE_URL, kept), 202)


@bp.post("/<int:dep_id>/actions/unlockfiles")
@require_scope("deposit:actions")
@doc(responses={"201": {"description": "The deposition, its files open until it is published or discarded"},
                "400": {"description": "A draft, or a deposition being edited"},
                "403": {"description": "Outside FILES_EDIT_DAYS, or unlocked once already: make a new version"},
                "404": {"description": "No such deposition of the caller"},
                "409": {"description": "The record is still being integrated"},
                "410": {"description": "The version is deleted"}})  # fmt: skip
def unlock_files_view(dep_id: int) -> Response:
    """Open the files of the caller's published deposition, once, within FILES_EDIT_DAYS: 201 with the deposition
    (state inprogress); publish applies the files (same DOI, a file history kept), discard puts them back."""
    s = services()
    s.indexer.settle(dep_id)  # a registration still under way, as before an edit
    with s.db.write() as conn:
        dep = actions.get_deposit(conn, dep_id, caller().user_id, lock=True)
        filefix.unlock_files(conn, s.settings, dep, caller().user_id, s.clock())
    with s.db.read() as conn:
        body = representation.render(conn, s.settings, dep_id)
    return json_response(body, 201)
