"""The review step before publishing (docs/researchers/depositing.md#publishing): `/deposit/<id>/publish` lists what
publishing will do — the DOI registered or the one given used, the files frozen, the record public or embargoed,
the communities asked — and what still refuses it, each linked to its field of the form; its button posts the
API's publish action. The form's "Review and publish" saves and comes here; a first publish, an edit and a new
version all pass through it. The API's publish is unchanged: it has no review step."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, flash, redirect
from werkzeug.wrappers import Response as BaseResponse

from repository import urls
from repository.deposits import actions, filefix, formstate, pids, representation
from repository.errors import ApiError
from repository.pages import deposit_form as forms
from repository.pages.base import render_page, require_user
from repository.pages.deposit import refused
from repository.records.lookups import DatabaseLookups
from repository.vocabularies import licenses
from repository.web.openapi import doc
from repository.web.request import services

bp = Blueprint("deposit_review", __name__, url_prefix="/deposit")


def _facts(conn: Any, dep: dict, deposition: dict, metadata: dict) -> dict[str, Any]:
    """What publishing will do, for the template: the DOI, the files, the access and the communities."""
    settings = services().settings
    first = dep["status"] == "draft"
    license_id = metadata.get("license")
    license_id = license_id.get("id") if isinstance(license_id, dict) else license_id
    found = licenses.resolve(conn, license_id) if isinstance(license_id, str) else None
    return {
        "first": first,
        "new_version": first and actions.is_version_draft(conn, dep),
        "doi": dep["doi"] if dep["doi_external"] or not first else pids.own_doi(settings, dep),
        "doi_external": bool(dep["doi_external"]),
        "files": deposition["files"],
        "files_fixed": not first and filefix.in_session(conn, dep),
        "access_right": metadata.get("access_right", "open"),
        "embargo_date": metadata.get("embargo_date", ""),
        "license": (found.title if found is not None else license_id) or "",
        "communities": [c.get("identifier") for c in metadata.get("communities") or [] if isinstance(c, dict)],
    }


def _problems(dep_id: int, errors: list[dict], metadata: dict, typed: dict | None) -> list[dict[str, str]]:
    """What refuses the publish, each linked to its field on the form: the fields kept as typed first."""
    form = urls.deposit_html("", dep_id)
    placed = forms.PlacedErrors()
    if typed is not None:
        placed = forms.place_errors(typed["errors"], typed.get("rows_sent", {}))
    rows_sent = forms.to_metadata(forms.from_metadata(metadata), {}, False)[1]
    placed.summary.extend(forms.place_errors(errors, rows_sent).summary)
    return [{**p, "href": form + (p["href"] or "")} for p in placed.summary]


@bp.get("/<int:dep_id>/publish")
def review(dep_id: int) -> BaseResponse:
    """The review step: what publishing will do and what is still missing (nothing is changed)."""
    user = require_user()
    s = services()
    try:
        with s.db.read() as conn:
            ctx = actions.Context(s.settings, DatabaseLookups(conn))
            dep, published, errors = actions.publish_preview(conn, ctx, dep_id, user["id"])
            deposition = representation.render(conn, s.settings, dep_id, form=True)
            typed = formstate.typed(conn, dep_id)
            facts = _facts(conn, dep, deposition, published or dep["metadata"] or {})
    except ApiError as exc:
        if exc.status == 404:
            raise
        flash(exc.message, "error")
        return redirect(urls.deposit_html("", dep_id), 303)
    problems = _problems(dep_id, errors, dep["metadata"] or {}, typed)
    return render_page("deposit/review.html", deposition=deposition, facts=facts, problems=problems)


@bp.post("/<int:dep_id>/publish")
@doc(responses={"303": {"description": "Published: to the deposition's page (or back to the review, saying why "
                                       "not)."},
                "400": {"description": "Refused: the form, each reason beside its field."}})
def publish(dep_id: int) -> BaseResponse:
    """Publish after the review (the API's publish action); fields still kept as typed refuse it first."""
    user = require_user()
    s = services()
    with s.db.read() as conn:
        actions.get_deposit(conn, dep_id, user["id"])
        typed = formstate.typed(conn, dep_id)
    if typed is not None:
        flash("Some fields are kept as typed and not yet valid: correct them and save before publishing.", "error")
        return redirect(urls.deposit_html("", dep_id), 303)
    try:
        with s.db.write() as conn:
            actions.publish(conn, actions.Context(s.settings, DatabaseLookups(conn), s.files), dep_id, user["id"])
    except ApiError as exc:
        if exc.status in (404, 403):
            raise
        with s.db.read() as conn:
            stored = representation.render(conn, s.settings, dep_id, form=True)
        if exc.status != 400 or stored["state"] == "done":
            flash(exc.message, "error")
            return redirect(urls.deposit_html("", dep_id), 303)
        shown = forms.from_metadata(stored["metadata"])
        return _refused_page(stored, shown, exc)
    flash("Published. The record page is live; its DOI is registered in the background.", "success")
    return redirect(urls.deposit_html("", dep_id), 303)


def _refused_page(stored: dict, shown: forms.FormState, exc: ApiError) -> Response:
    return refused(stored, shown, exc, forms.to_metadata(shown, {}, stored["submitted"])[1], saved=True)
