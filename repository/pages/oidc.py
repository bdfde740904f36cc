"""Sign-in with an OpenID Connect provider (OIDC_ISSUER: ORCID, an institution's IdP), through Authlib's Flask
client: the authorization code flow with state, nonce and PKCE (S256); the ID token is checked (signature against
the provider's JWKS, issuer, audience, nonce, expiry) before anyone is signed in. Who is signed in follows
repository.accounts.oidc; a provider that vouches for no address (ORCID) leads to /login/oidc/email, where the
person gives one and confirms it by a mailed link opened in the same browser.

With no provider configured every route here is a 404 page and the sign-in page shows no button
(`oidc_sign_in_label()` is None). A provider that refuses, cannot be reached or answers wrongly gets a page saying so
(400 for what came through the browser, 502 for what the provider itself answered), never a 500."""

from __future__ import annotations

import threading
import time
from typing import Any
from urllib.parse import urlsplit

import requests
from authlib.common.errors import AuthlibBaseError
from authlib.integrations.base_client import MismatchingStateError
from authlib.integrations.flask_client import OAuth
from flask import Blueprint, abort, current_app, redirect, request, session, url_for
from flask_wtf import FlaskForm
from joserfc.errors import JoseError
from werkzeug.wrappers import Response
from wtforms import EmailField
from wtforms.validators import InputRequired, Length

from repository import urls
from repository.accounts import mail, oidc
from repository.accounts.links import LinkInvalid, make_link_token, read_link_token
from repository.accounts.signup import MAX_EMAIL
from repository.errors import ApiError, BadRequest
from repository.pages.accounts import FORM_BYTES, finish_sign_in, throttle
from repository.pages.base import render_page
from repository.web.request import services
from repository.web.session import safe_next

bp = Blueprint("oidc", __name__)
CALLBACK = "/login/oidc/callback"
_PENDING = "oidc_pending"  # session: the identity waiting for a confirmed address
_NEXT = "oidc_next"  # session: where to go once signed in
_TIMEOUT_SECONDS = 10  # each request to the provider
_lock = threading.Lock()
# What talking to the provider can raise: Authlib's OAuth errors (an error answer of the token endpoint), joserfc's
# (an ID token that fails a check), requests' (the provider down or slow), and malformed answers.
_PROVIDER_ERRORS = (AuthlibBaseError, JoseError, requests.RequestException, ValueError, KeyError, TypeError,
                    RuntimeError)


class ProviderFailed(ApiError):
    """The provider could not be reached or answered what cannot be trusted: 502."""

    status = 502


class EmailForm(FlaskForm):  # type: ignore[misc]
    email = EmailField("E-mail address", validators=[InputRequired(), Length(max=MAX_EMAIL)],
                       render_kw={"autocomplete": "email", "maxlength": MAX_EMAIL})


@bp.app_template_global()
def oidc_sign_in_label() -> str | None:
    """The label of the provider's sign-in button, or None when no provider is configured."""
    settings = services().settings
    return settings.OIDC_LABEL if _configured() else None


@bp.url_value_preprocessor
def _bound_body(_endpoint: str | None, _values: dict[str, Any] | None) -> None:
    request.max_content_length = FORM_BYTES  # before the CSRF check reads a form: 413 beyond


@bp.before_request
def _only_with_a_provider() -> None:
    if not _configured():
        abort(404)


@bp.get("/login/oidc/")
def start() -> Response:
    """Send the browser to the provider to sign in (302); 404 without a provider; 502 when it cannot be reached."""
    client = _client()
    next_url = safe_next(request.args.get("next"), "")
    session[_NEXT] = next_url or None
    for key in [key for key in session if key.startswith("_state_oidc_")]:
        session.pop(key)  # the sign-in started last is the one that counts: the cookie stays small
    try:
        _issuer(client)
        response: Response = client.authorize_redirect(_callback_url())
    except _PROVIDER_ERRORS as exc:
        raise _failed("could not be reached", exc) from None
    return response


@bp.get(CALLBACK)
def callback() -> Response:
    """Where the provider sends the browser back: checks the answer, then signs in (302 on), asks for an address
    (302 to /login/oidc/email), or answers 400 (declined, a stale or forged answer), 403 (a deactivated account,
    sign-up closed) or 502 (the provider failed)."""
    client = _client()
    settings = services().settings
    if request.args.get("error"):
        _forget_state(request.args.get("state"))
        if request.args["error"] == "access_denied":
            raise BadRequest(f"The sign-in was cancelled at {_provider_name()}: nobody was signed in.")
        raise BadRequest(f"The provider refused the sign-in ({request.args['error'][:100]}). Nobody was signed in.")
    if not request.args.get("code") or not request.args.get("state"):
        raise BadRequest("This address is where the provider sends you back after signing in; it was opened without "
                         "the provider's answer. Start again from the sign-in page.")
    try:
        issuer = _issuer(client)
        client.client_kwargs["token_endpoint_auth_method"] = _auth_method(client.load_server_metadata())
        token = client.authorize_access_token(claims_options={
            "iss": {"essential": True, "value": issuer},
            "aud": {"essential": True, "value": settings.OIDC_CLIENT_ID},
            "exp": {"essential": True},
        })
    except MismatchingStateError:
        raise BadRequest("This sign-in answer does not belong to a sign-in started in this browser, or it was "
                         "already used or is too old. Start again from the sign-in page.") from None
    except requests.RequestException as exc:
        raise _failed("could not be reached", exc) from None
    except _PROVIDER_ERRORS as exc:
        raise _failed("gave an answer that could not be verified", exc) from None
    claims = token.get("userinfo") if isinstance(token, dict) else None
    if not claims or not isinstance(claims.get("sub"), str):
        raise ProviderFailed("The provider gave no ID token: nobody was signed in.")
    found = _provider_claims(client, issuer, token, claims)
    with services().db.write() as conn:
        user = oidc.sign_in_user(conn, found, settings.SIGNUP_ENABLED)
    if user is None:
        session[_PENDING] = {"iss": found.issuer, "sub": found.subject,
                             "until": time.time() + settings.CONFIRM_LINK_HOURS * 3600}
        return redirect(url_for(".email"))
    return _finish(user)


@bp.route("/login/oidc/email", methods=["GET", "POST"])
def email() -> Response:
    """The address of an account reached through a provider that vouched for none: a form (200), then a mailed
    confirmation link (200, whatever the address); 400 when no provider sign-in is waiting for one."""
    pending = _pending()
    settings = services().settings
    form = EmailForm()
    if form.validate_on_submit():
        try:
            address = oidc.check_email(form.email.data)
        except BadRequest as exc:
            form.email.errors = [exc.message]
        else:
            throttle("signin", address, mailed=True)  # an address mailed: counted for the client and the mailbox
            payload = {"iss": pending["iss"], "sub": pending["sub"], "email": address}
            link = (settings.BASE_URL.rstrip("/") + url_for(".confirm", token=make_link_token(
                services().secret, oidc.LINK_PURPOSE, payload)))
            with services().db.write() as conn:
                mail.enqueue(conn, address, f"Confirm your address for {settings.REPOSITORY_NAME}", _mail_text(
                    _provider_name(), pending["sub"], link, settings.CONFIRM_LINK_HOURS))
            return render_page("oidc/sent.html", email=address)
    status = 400 if form.errors else 200
    return render_page("oidc/email.html", status, form=form, provider=_provider_name(), subject=pending["sub"])


@bp.route("/login/oidc/confirm/<token>", methods=["GET", "POST"])
def confirm(token: str) -> Response:
    """The mailed link: a page confirming the address (GET), then the account linked or made and signed in (POST,
    302); 400 for a link expired, forged, used, or opened in another browser than the sign-in."""
    settings = services().settings
    try:
        payload = read_link_token(services().secret, oidc.LINK_PURPOSE, token, settings.CONFIRM_LINK_HOURS * 3600)
    except LinkInvalid as exc:
        raise BadRequest(f"{exc} Sign in with the provider again to get a new one.") from None
    elsewhere = f"Open this link in the browser where you signed in with {_provider_name()}: it only works there."
    pending = _pending(elsewhere)
    if (pending["iss"], pending["sub"]) != (payload.get("iss"), payload.get("sub")):
        raise BadRequest(elsewhere)
    if request.method != "POST":
        return render_page("oidc/confirm.html", email=payload["email"], provider=_provider_name())
    with services().db.write() as conn:
        user = oidc.link_confirmed_email(conn, payload["iss"], payload["sub"], payload["email"],
                                         settings.SIGNUP_ENABLED)
    return _finish(user)


# The provider's client, registered once per application on first use

def _configured() -> bool:
    settings = services().settings
    return bool(settings.OIDC_ISSUER and settings.OIDC_CLIENT_ID)


def _client() -> Any:
    """The app's Authlib client of the provider (registered on first use)."""
    app = current_app
    with _lock:
        registry = app.extensions.get("oidc")
        if registry is None:
            settings = services().settings
            registry = OAuth(app)
            registry.register(
                "oidc",
                client_id=settings.OIDC_CLIENT_ID,
                client_secret=settings.OIDC_CLIENT_SECRET,
                server_metadata_url=settings.OIDC_ISSUER.rstrip("/") + "/.well-known/openid-configuration",
                client_kwargs={"scope": "openid email profile", "code_challenge_method": "S256",
                               "default_timeout": _TIMEOUT_SECONDS},
            )
            app.extensions["oidc"] = registry
    return registry.create_client("oidc")


def _issuer(client: Any) -> str:
    """The provider's issuer, as its discovery document names it: that of OIDC_ISSUER (OpenID Connect Discovery),
    else the document is not the provider's."""
    issuer = client.load_server_metadata().get("issuer")
    if not isinstance(issuer, str) or issuer.rstrip("/") != services().settings.OIDC_ISSUER.rstrip("/"):
        raise ValueError(f"the discovery document names another issuer ({str(issuer)[:200]!r})")
    return issuer


def _auth_method(metadata: dict) -> str:
    """How this client proves itself at the token endpoint: in the Authorization header (the default of the
    specification), or in the form when the provider says it takes only that."""
    supported = metadata.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
    if "client_secret_basic" not in supported and "client_secret_post" in supported:
        return "client_secret_post"
    return "client_secret_basic"


def _provider_name() -> str:
    """The provider as messages name it: the button's label without "Sign in with" (ORCID), else the issuer's
    host."""
    settings = services().settings
    label = settings.OIDC_LABEL.strip()
    if label.lower().startswith("sign in with ") and label[13:].strip():
        return label[13:].strip()
    return urlsplit(settings.OIDC_ISSUER).hostname or settings.OIDC_ISSUER


def _callback_url() -> str:
    """The redirect URI registered at the provider: BASE_URL + /login/oidc/callback."""
    return urls.oidc_callback(services().settings.BASE_URL.rstrip("/"))


def _provider_claims(client: Any, issuer: str, token: dict, claims: dict) -> oidc.ProviderClaims:
    """The person as the ID token names them; an address the ID token lacks is taken from the userinfo answer
    (about the same subject) when the provider has one."""
    email, verified = claims.get("email"), _true(claims.get("email_verified"))
    if not (email and verified) and client.load_server_metadata().get("userinfo_endpoint"):
        try:
            info = client.userinfo(token=token)
        except _PROVIDER_ERRORS:
            info = {}  # then the person is asked for an address, as when the provider has none
        if info.get("sub") == claims["sub"] and info.get("email"):
            email, verified = info.get("email"), _true(info.get("email_verified"))
    return oidc.ProviderClaims(issuer, claims["sub"], email if isinstance(email, str) else None, verified)


def _true(value: object) -> bool:
    return value is True or value == "true"  # some providers send the claim as a string


def _forget_state(state: str | None) -> None:
    if state:
        session.pop(f"_state_oidc_{state}", None)


def _pending(refusal: str = "No sign-in with the provider is waiting for an e-mail address in this browser. "
                            "Start again from the sign-in page.") -> dict:
    """The identity this browser's provider sign-in left waiting for an address; BadRequest(refusal) if none."""
    pending = session.get(_PENDING)
    if not isinstance(pending, dict) or not isinstance(pending.get("until"), (int, float)) \
            or pending["until"] < time.time():
        session.pop(_PENDING, None)
        raise BadRequest(refusal)
    return pending


def _failed(what: str, exc: BaseException) -> ProviderFailed:
    current_app.logger.warning("OpenID Connect provider %s: %s: %s", what, type(exc).__name__, exc)
    return ProviderFailed(f"The sign-in provider ({_provider_name()}) {what}: nobody was signed in. "
                          "Try again later, or sign in with your password.")


def _finish(user: dict) -> Response:
    """Sign `user` in (a new session, the sign-in noted) and go where the sign-in was asked from."""
    next_url = session.get(_NEXT)
    return finish_sign_in(user, next_url if isinstance(next_url, str) else None)


def _mail_text(provider: str, subject: str, link: str, hours: int) -> str:
    return (
        f"Someone signed in with {provider} (identifier {subject}) and gave this address for their account.\n\n"
        f"To confirm it and sign in, open this link in the same browser within {hours} hours:\n\n{link}\n\n"
        "If the address already has an account here, that account will then also open with this sign-in.\n"
        "If this was not you, ignore this message: nothing changes.\n"
    )
