"""Browser sessions: a signed cookie (Flask's, keyed by the service's secret) naming the user, the user's
`auth_epoch` when the session began and when it began. The user is looked up on every request, so signing out,
deactivating a user or changing their password (all bump the epoch) ends every session at once, copies of the cookie
included; a session older than SESSION_MAX_DAYS has ended too, however often it was used.

The cookie is Secure, HttpOnly and SameSite=Lax, and a new one is issued at sign-in (`sign_in` clears the old
content, the CSRF secret included: no fixation). Every form, and every write a session authenticates (the JSON API
too), must carry the CSRF token (Flask-WTF): a form field `csrf_token` or an `X-CSRFToken` header. Token-
authenticated and anonymous API calls need none: a browser cannot be made to send a bearer token."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any
from urllib.parse import urljoin, urlsplit

from flask import Flask, current_app, g, request, session
from flask_wtf.csrf import CSRFError, CSRFProtect, generate_csrf

from repository.accounts import users
from repository.config import Settings
from repository.errors import BadRequest

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})
_csrf = CSRFProtect()
COOKIE = "session"
CLOCK_SKEW_SECONDS = 300

def install_sessions(app: Flask, settings: Settings) -> None:
    app.config.update(
        SESSION_COOKIE_NAME=COOKIE,
        SESSION_COOKIE_SECURE=True,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        PERMANENT_SESSION_LIFETIME=dt.timedelta(days=settings.SESSION_LIFETIME_DAYS),
        # The token lives as long as the session (it is bound to it); checked where `check_csrf` is called, not on
        # every POST: OAI-PMH harvesters and token clients POST without one, rightly.
        WTF_CSRF_CHECK_DEFAULT=False,
        WTF_CSRF_TIME_LIMIT=None,
        WTF_CSRF_HEADERS=["X-CSRFToken", "X-CSRF-Token"],
    )
    _csrf.init_app(app)
    app.jinja_env.globals.update(csrf_token=generate_csrf, current_user=current_user)


def current_user() -> dict | None:
    """The signed-in user of this request's session (a users row), or None; looked up once per request."""
    if "session_user" not in g:
        found = None
        # Without the cookie the session is not even read: a response then does not vary by Cookie (caches).
        has_cookie = COOKIE in request.cookies
        user_id, epoch = (session.get("uid"), session.get("epoch")) if has_cookie else (None, None)
        if isinstance(user_id, int) and isinstance(epoch, int):
            if _within_lifetime(session.get("since")):
                with current_app.extensions["repository"].db.read() as conn:
                    found = users.session_user(conn, user_id, epoch)
            if found is None:
                session.clear()  # deactivated, signed out everywhere, or gone: the cookie is dropped
                g.session_ended = True
        g.session_user = found
    user: dict | None = g.session_user
    return user


def _within_lifetime(since: Any) -> bool:
    """Whether a session that began at `since` (seconds since the epoch) is younger than SESSION_MAX_DAYS."""
    max_age = current_app.extensions["repository"].settings.SESSION_MAX_DAYS * 86400
    # A few minutes "in the future" pass: the server that signed in may run a little ahead of this one.
    return isinstance(since, int) and -CLOCK_SKEW_SECONDS <= time.time() - since < max_age


def sign_in(user: dict, remember: bool = True) -> None:
    """Start a new session for `user` (after the caller checked the password or the provider's answer)."""
    session.clear()
    session["uid"] = user["id"]
    session["epoch"] = user["auth_epoch"]
    session["since"] = int(time.time())
    session.permanent = remember
    g.session_user = user


def sign_out() -> None:
    """End the signed-in user's sessions on the server (the epoch moves on: every copy of the cookie, in any
    browser, stops working), then this browser's cookie."""
    user = current_user()
    if user is not None:
        with current_app.extensions["repository"].db.write() as conn:
            users.end_sessions(conn, user["id"])
    session.clear()
    g.session_user = None


def check_csrf() -> None:
    """400 unless the request carries this session's CSRF token (and, over HTTPS, a Referer of this site)."""
    try:
        _csrf.protect()
    except CSRFError as exc:
        raise BadRequest(f"The request was refused: {exc.description} Reload the page and try again.") from None


# Forms a guest sends (their CSRF secret lives in a guest session): a missing cookie there is not an ended sign-in.
GUEST_FORMS = ("/login", "/signup", "/account/reset", "/account/confirm")


def session_ended() -> bool:
    """Whether this request comes from a browser whose sign-in has ended: its session named a user who is no longer
    signed in (signed out elsewhere, password changed, deactivated), or it carries no session cookie at all (the
    cookie expired) on a form that only a signed-in user sends."""
    current_user()
    if g.get("session_ended"):
        return True
    return COOKIE not in request.cookies and not request.path.startswith(GUEST_FORMS)


def needs_csrf(is_page: bool, session_authenticated: bool) -> bool:
    return request.method not in SAFE_METHODS and (is_page or session_authenticated)


def safe_next(target: Any, default: str = "/") -> str:
    """`next=` only ever leads to a path of this site: anything with a scheme, a host, a backslash or a leading
    `//` falls back to `default`."""
    if not isinstance(target, str) or not target or len(target) > 2000:
        return default
    if "\\" in target or any(ord(c) < 32 for c in target) or not target.startswith("/") or target.startswith("//"):
        return default
    parts = urlsplit(urljoin("/", target))
    if parts.scheme or parts.netloc:
        return default
    return target
