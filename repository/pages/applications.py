"""The applications area, `/account/settings/applications/`: the signed-in user's personal access tokens — the
list (name, scopes, created, last used, revoked), a form that creates one and shows it once, and revocation after
a confirmation. Creating follows post/redirect/get: the new secret crosses the redirect sealed in the session
(`accounts/token_reveal.py`) and is shown by the first page read after it, so a reload creates nothing. Tokens
themselves never open these pages (`require_user`)."""

from __future__ import annotations

from flask import Blueprint, Response, flash, redirect, session, url_for
from flask_wtf import FlaskForm
from werkzeug.wrappers import Response as BaseResponse
from wtforms import SelectChoice, SelectMultipleField, StringField
from wtforms.validators import DataRequired, Length
from wtforms.widgets import CheckboxInput

from repository.accounts import token_reveal, tokens
from repository.errors import NotFound, ValidationError
from repository.pages.base import render_page, require_user
from repository.web.openapi import doc
from repository.web.request import services

bp = Blueprint("applications", __name__, url_prefix="/account/settings/applications")
_REVEAL = "new_token"  # session key of the sealed secret of the token just created

SCOPE_LABELS = {
    "deposit:write": "deposit:write — create, change and delete your deposits and upload their files",
    "deposit:actions": "deposit:actions — publish, edit, discard and make new versions of your deposits",
    "admin": "admin — the administration API: users, roles, blocks, takedowns and the audit log",
}


class TokenForm(FlaskForm):  # type: ignore[misc]  # flask_wtf ships no types
    class Meta:
        csrf = False  # every page write is checked already (repository.web.request); the form carries form_csrf()

    name = StringField("Name", filters=[lambda v: v.strip() if isinstance(v, str) else v],
                       validators=[DataRequired("Give the token a name."),
                                   Length(max=tokens.NAME_MAX, message=f"At most {tokens.NAME_MAX} characters.")])
    scopes = SelectMultipleField("Scopes", choices=[SelectChoice(s, SCOPE_LABELS[s]) for s in tokens.SCOPES],
                                 option_widget=CheckboxInput())  # the template lays the boxes out


def _token_form(user: dict) -> TokenForm:
    """The form, offering the scopes `user` may hold (`admin` to administrators only)."""
    form = TokenForm()
    form.scopes.choices = [SelectChoice(s, SCOPE_LABELS[s]) for s in tokens.scopes_for(user)]
    return form


def _page(form: TokenForm, http_status: int = 200) -> Response:
    user = require_user()
    with services().db.read() as conn:
        listed = tokens.list_tokens(conn, user["id"])
    listed.reverse()  # newest first
    created = None
    revealed = token_reveal.unseal(services().secret, session.pop(_REVEAL, None))
    if revealed is not None:
        token_id, secret = revealed
        created = next(({**t, "secret": secret} for t in listed if t["id"] == token_id and not t["revoked"]), None)
    return render_page("applications/index.html", http_status, form=form, tokens=listed, created=created,
                       api_base=services().settings.BASE_URL)


@bp.get("/")
def index() -> Response:
    """The user's personal access tokens and the form that creates one (sign-in needed; 401 for a token)."""
    return _page(_token_form(require_user()))


@bp.post("/")
@doc(responses={"303": {"description": "Created: to the list, which shows the new token this once."}})
def create() -> BaseResponse:
    """Create a personal access token with the chosen name and scopes, then redirect to the list, which shows its
    secret this once (400 and the form with its errors when the name or a scope is wrong)."""
    user = require_user()
    form = _token_form(user)
    if not form.validate_on_submit():
        return _page(form, 400)
    try:
        with services().db.write() as conn:
            token, secret = tokens.new_token(conn, user["id"], form.name.data, list(form.scopes.data or []))
    except ValidationError as exc:  # the same rules as the form's; kept in case they ever differ
        for error in exc.errors:
            getattr(form, error["field"]).errors = [error["message"]]
        return _page(form, 400)
    session[_REVEAL] = token_reveal.seal(services().secret, token["id"], secret)
    return redirect(url_for(".index"), 303)


@bp.get("/<int:token_id>/revoke")
def revoke_page(token_id: int) -> Response:
    """Ask before revoking one of the user's live tokens (404 page for any other token)."""
    user = require_user()
    with services().db.read() as conn:
        token = tokens.get_token(conn, token_id, user["id"])
    if token is None or token["revoked"]:
        raise NotFound("No such live token of yours.")
    return render_page("applications/revoke.html", token=token)


@bp.post("/<int:token_id>/revoke")
@doc(responses={"303": {"description": "Revoked: back to the list, which says so."}})
def revoke(token_id: int) -> BaseResponse:
    """Revoke one of the user's tokens: programs using it get 401 from now on. 404 page if it is not the user's
    own live token (nothing changes)."""
    user = require_user()
    with services().db.write() as conn:
        token = tokens.get_token(conn, token_id, user["id"])
        tokens.revoke_token(conn, token_id, user["id"])  # NotFound (a 404 page) unless the user's own live token
    assert token is not None
    flash(f"The token “{token['name']}” is revoked: programs using it are now refused.", "success")
    return redirect(url_for(".index"), 303)
