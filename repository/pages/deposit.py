"""The deposit form: `/deposit/new` starts a draft, `/deposit/<id>` (a deposition's `links.html`) shows and saves its
metadata, publishes it, and offers edit, discard, new version and delete — each the domain call the deposit API
makes (repository.deposits.actions), so the form and the API keep one set of rules. Only the signed-in owner sees a
deposition; anyone else gets the 404 page. The file area is repository.pages.deposit_files'; the form <-> metadata
conversion is repository.pages.deposit_form's."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlsplit

from flask import Blueprint, Response, flash, redirect, request
from flask_wtf.csrf import generate_csrf
from werkzeug.wrappers import Response as BaseResponse

from repository import urls
from repository.deposits import actions, formstate, representation
from repository.errors import ApiError
from repository.files.buckets import release_files
from repository.pages import deposit_form as forms
from repository.pages.base import render_page, require_user
from repository.records.lookups import DatabaseLookups
from repository.storage import Connection
from repository.web.openapi import doc
from repository.web.request import services

bp = Blueprint("deposit", __name__, url_prefix="/deposit")

TO_FORM = {"303": {"description": "Done: to the deposition's form, which says so."}}
FORM = {"content": {"application/x-www-form-urlencoded": {"schema": {"type": "object"}}},
        "description": "The form's fields (`title`, `creators-0-name`, …), `csrf_token`, and `action`: save, publish, "
                       "add:<group> or remove:<group>:<row>."}


def _deposition(dep_id: int, owner: int) -> dict:
    """The owner's deposition as the API shows it; NotFound (the 404 page) for anyone else's."""
    with services().db.read() as conn:
        actions.get_deposit(conn, dep_id, owner)
        return representation.render(conn, services().settings, dep_id, form=True)


def _form_page(deposition: dict, state: forms.FormState, errors: forms.PlacedErrors | None = None,
               http_status: int = 200, note: str = "", focus: str = "") -> Response:
    with services().db.read() as conn:
        picks = forms.suggestions(conn, require_user()["id"])
    errors = errors or forms.PlacedErrors()
    opened = {s.slug for s in forms.SECTIONS if not s.optional or forms.section_has_content(s, state, errors)}
    # `deposition` (the API's representation) and `csrf` (the session's token) are what the file area's partial,
    # templates/pages/deposit/_files.html, reads.
    return render_page("deposit/form.html", http_status, deposition=deposition, csrf=generate_csrf(), state=state,
                       errors=errors, sections=forms.SECTIONS, suggestions=picks, opened=opened, note=note,
                       focus=focus, editable=deposition["state"] != "done")


@bp.get("/new")
def new_page() -> Response:
    """The page that starts a new upload: a button, so that a crawler or a prefetch creates nothing."""
    require_user()
    return render_page("deposit/new.html")


@bp.post("/new")
@doc(responses={"303": {"description": "The new draft's form."}})
def create() -> BaseResponse:
    """Create an empty draft for the signed-in user (as `POST /api/deposit/depositions` with `{}`) and go to its
    form."""
    user = require_user()
    with services().db.write() as conn:
        dep_id = actions.create(conn, actions.Context(services().settings, DatabaseLookups(conn)), user["id"], {})
    return redirect(urls.deposit_html("", dep_id), 303)


@bp.get("/<int:dep_id>")
def form_page(dep_id: int) -> Response:
    """The deposition's form with its stored metadata (404 page unless it is the signed-in user's), or as typed at
    the last save that kept only the valid fields, with the refused ones marked."""
    user = require_user()
    deposition = _deposition(dep_id, user["id"])
    with services().db.read() as conn:
        typed = formstate.typed(conn, dep_id) if deposition["state"] != "done" else None
    if typed is None:
        with services().db.read() as conn:
            state = forms.with_titles(conn, forms.from_metadata(deposition["metadata"]))
        return _form_page(deposition, state)
    state = forms.state_from_json(typed)
    return _form_page(deposition, state, forms.place_errors(typed["errors"], typed.get("rows_sent", {}), state),
                      note=KEPT_AS_TYPED)


KEPT_AS_TYPED = ("Saved, except the fields marked below: they are kept as you typed them, not yet in the draft. "
                 "Correct them and save again; publishing needs them correct.")


@bp.post("/<int:dep_id>")
@doc(request=FORM, responses={**TO_FORM, "200": {"description": "The form again with a row added or removed "
                                                                   "(nothing saved)."},
                                "400": {"description": "Refused: the form as typed, each error beside its field."}})
def submit(dep_id: int) -> BaseResponse:
    """Save the draft (the API's PUT, keeping the valid fields when some are refused), go on to the review step
    before publishing (`/deposit/<id>/publish`), or add or remove a row of a repeatable group (the form shown again,
    nothing saved). A save that keeps nothing shows the form as typed."""
    user = require_user()
    deposition = _deposition(dep_id, user["id"])
    state = forms.from_post(request.form)
    action = request.form.get("action", "save")
    if action.startswith(("add:", "remove:")):
        return _change_rows(deposition, state, action)
    if action not in ("save", "publish"):
        action = "save"
    with services().db.read() as conn:
        coded = forms.with_codes(conn, state)
    metadata, rows_sent = forms.to_metadata(coded, deposition["metadata"], deposition["submitted"])
    try:
        with services().db.write() as conn:
            ctx = actions.Context(services().settings, DatabaseLookups(conn))
            left_out = formstate.save(conn, ctx, dep_id, user["id"], metadata,
                                      forms.state_to_json(state, rows_sent))
    except ApiError as exc:
        return refused(deposition, state, exc, rows_sent)
    if left_out:
        flash(f"{len(left_out)} field{'' if len(left_out) == 1 else 's'} could not be saved: see below."
              + (" Publishing needs every field correct." if action == "publish" else ""), "error")
        return redirect(urls.deposit_html("", dep_id), 303)
    if action == "publish":
        return redirect(urls.deposit_action_html("", dep_id, "publish"), 303)
    flash("Draft saved." if not deposition["submitted"] else "Changes saved (not yet published).", "success")
    return redirect(urls.deposit_html("", dep_id), 303)


def refused(deposition: dict, state: forms.FormState, exc: ApiError, rows_sent: dict[str, list[int]],
            saved: bool = False) -> Response:
    """The form again, as typed (or as saved), each error beside its input and all of them in the summary."""
    errors = forms.place_errors(exc.errors, rows_sent, state)
    if not exc.errors:
        errors.summary.append({"href": "", "label": "", "message": exc.message})
    note = ("Your changes are saved, but publishing was refused: correct the fields marked below and publish again."
            if saved else "Nothing was saved: correct the fields marked below and save again.")
    return _form_page(deposition, state, errors, exc.status, note=note)


def _change_rows(deposition: dict, state: forms.FormState, action: str) -> Response:
    """The form again with one row more or less (without JavaScript: deposit-form.js does this in place)."""
    kind, _, rest = action.partition(":")
    group, _, row = rest.partition(":")
    focus = ""
    if kind == "add":
        state.add_row(group)
        if group in forms.GROUPS:
            focus = forms.input_id(group, len(state.rows[group]) - 1, forms.GROUPS[group].inputs[0].name)
    elif row.isdigit():
        state.remove_row(group, int(row))
    note = "Not saved yet: save the draft to keep your changes."
    return _form_page(deposition, state, note=note, focus=focus)


def _act(dep_id: int, action: Callable[[Connection, int, int], None], done: str) -> BaseResponse:
    """Run a deposit action of the signed-in owner; back to the form, which says what happened or why not."""
    user = require_user()
    try:
        with services().db.write() as conn:
            action(conn, dep_id, user["id"])
    except ApiError as exc:
        if exc.status == 404:
            raise
        flash(exc.message, "error")
    else:
        flash(done, "success")
    return redirect(urls.deposit_html("", dep_id), 303)


@bp.post("/<int:dep_id>/edit")
@doc(responses=TO_FORM)
def edit(dep_id: int) -> BaseResponse:
    """Unlock a published deposition's metadata for editing (the API's edit action)."""
    require_user()
    services().indexer.settle(dep_id)  # as the API's edit
    return _act(dep_id, actions.edit, "You can now change the metadata; publish to apply the changes or discard "
                                      "them.")


@bp.post("/<int:dep_id>/discard")
@doc(responses=TO_FORM)
def discard(dep_id: int) -> BaseResponse:
    """Drop the changes of the editing session (the API's discard action)."""
    return _act(dep_id, lambda conn, dep, owner: actions.discard(conn, dep, owner, services().files),
                "Your changes were discarded: the published metadata and files are back.")


@bp.post("/<int:dep_id>/newversion")
@doc(responses={"303": {"description": "The new version's draft (or the form, saying why not)."}})
def new_version(dep_id: int) -> BaseResponse:
    """Start a new version of a published deposition (the API's newversion action) and go to its draft."""
    user = require_user()
    try:
        with services().db.write() as conn:
            actions.newversion(conn, actions.Context(services().settings, DatabaseLookups(conn)), dep_id, user["id"])
    except ApiError as exc:
        if exc.status == 404:
            raise
        flash(exc.message, "error")
        return redirect(urls.deposit_html("", dep_id), 303)
    draft = urlsplit(_deposition(dep_id, user["id"])["links"]["latest_draft_html"]).path
    flash("A new version: change its files and metadata, then publish it.", "success")
    return redirect(draft, 303)


@bp.get("/<int:dep_id>/delete")
def delete_page(dep_id: int) -> Response:
    """Ask before deleting a draft (a published deposition cannot be deleted: the form says so)."""
    user = require_user()
    return render_page("deposit/delete.html", deposition=_deposition(dep_id, user["id"]))


@bp.post("/<int:dep_id>/delete")
@doc(responses={"303": {"description": "Deleted: to My uploads (or back to the form, saying why not)."}})
def delete(dep_id: int) -> BaseResponse:
    """Delete a draft and its files (the API's DELETE); a published deposition is refused."""
    user = require_user()
    try:
        with services().db.write() as conn:
            freed = actions.delete_deposit(conn, dep_id, user["id"])
    except ApiError as exc:
        if exc.status == 404:
            raise
        flash(exc.message, "error")
        return redirect(urls.deposit_html("", dep_id), 303)
    with services().db.write() as conn:
        release_files(conn, services().files, freed)
    flash("The draft and its files were deleted.", "success")
    return redirect(urls.deposits_html(""), 303)
