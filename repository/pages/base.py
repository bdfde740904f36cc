"""What every web page shares: the `pages` blueprint (the parent of each area's blueprint), page rendering, error
pages instead of error objects, and the signed-in user a page needs.

Every write under `pages` must carry the CSRF token (checked for all of them in repository.web.request), so a form
only has to include `{{ form_csrf() }}`. Every link a template makes comes from repository/urls.py, the `urls`
global."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NoReturn

from flask import Blueprint, Response, abort, redirect, render_template, request
from flask_wtf.csrf import generate_csrf
from markupsafe import Markup, escape
from werkzeug.exceptions import HTTPException

from repository import urls
from repository.errors import ApiError, Unauthorized
from repository.web.request import services
from repository.web.session import current_user, safe_next

bp = Blueprint("pages", __name__, template_folder="../templates")
GUEST_BODY_BYTES = 64 * 1024  # more than any form a guest may send (sign-in, sign-up, reset, an access request)


@bp.url_value_preprocessor
def _bound_body(_endpoint: str | None, _values: dict[str, Any] | None) -> None:
    """Bound every page request's body before anything reads it (this runs before every before_request hook; the
    CSRF check parses the form, and werkzeug spools a multipart body to the temporary directory): a guest's at
    GUEST_BODY_BYTES, a signed-in user's at MAX_JSON_BYTES, decided from Content-Length before a byte is read (413
    page beyond; a chunked body stops there). An area may bound its own routes (the deposit form's file area lets a
    signed-in user send files; the account forms take less); its hook runs after this one."""
    signed_in = request.method not in ("GET", "HEAD", "OPTIONS") and current_user() is not None
    request.max_content_length = services().settings.MAX_JSON_BYTES if signed_in else GUEST_BODY_BYTES


def render_page(template: str, http_status: int = 200, **context: Any) -> Response:
    """A page of `templates/pages/`, with what the layout needs."""
    html = render_template(f"pages/{template}", site_name=services().settings.REPOSITORY_NAME, **context)
    return page_response(html, http_status)


def confirm_page(title: str, message: str, button: str) -> Response:
    """The page a mailed link opens (200): one button that POSTs back to the link with the CSRF token. Nothing is
    confirmed by the GET itself, so a mail gateway that opens every link to check it confirms nothing."""
    return render_page("confirm_link.html", title=title, message=message, button=button)


def page_response(html: str, http_status: int = 200) -> Response:
    """A rendered page as a response, with the headers every page carries."""
    response = Response(html, status=http_status, mimetype="text/html")
    # Pages with a form or someone's data are never cached by a shared cache, nor framed by another site.
    response.headers.setdefault("Cache-Control", "private, no-store")
    response.headers.setdefault("X-Frame-Options", "DENY")
    response.headers.setdefault("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'; "
                                "form-action 'self'; base-uri 'none'; object-src 'none'")
    response.headers.setdefault("Referrer-Policy", "same-origin")
    return response


def require_user() -> dict:
    """The signed-in user, or: a sign-in redirect for a browser; 401 for a client that sent a token (account pages
    are for people in a browser, never for tokens)."""
    user = current_user()
    if user is not None:
        return user
    if request.headers.get("Authorization") or request.args.get("access_token"):
        raise Unauthorized("Account pages need a signed-in browser session; an access token cannot open them.")
    go_to_sign_in()


def go_to_sign_in() -> NoReturn:
    target = request.full_path if request.query_string else request.path
    abort(redirect(urls.sign_in_html("", safe_next(target))))


@bp.record_once
def _install_link_builder(state: Any) -> None:
    """Templates build every link with repository/urls.py, the `urls` global: `{{ urls.record_html('', r.id) }}`."""
    state.app.jinja_env.globals["urls"] = urls


@bp.app_template_global()
def form_csrf() -> Markup:
    """The hidden CSRF field every form of a page carries."""
    return Markup(f'<input type="hidden" name="csrf_token" value="{escape(generate_csrf())}">')


ERROR_TITLES = {400: "The request is not right", 401: "Sign-in needed", 403: "Not allowed", 404: "Not found",
                405: "Not possible here", 409: "A conflict", 410: "Gone", 413: "Too large", 429: "Too many requests",
                500: "Something went wrong", 503: "Not available right now", 507: "No space left"}  # fmt: skip
ERROR_MESSAGES = {404: "The page was not found.",
                  405: "This address does not take that kind of request.",
                  500: "Something went wrong on our side; it has been logged. Please try again later.",
                  503: "The service is not available right now. Please try again in a few minutes."}  # fmt: skip
# What an error page keeps of the error's headers: the wait of a 429 or 503, a 405's methods, a 401's challenge.
ERROR_HEADERS = ("Retry-After", "Allow", "WWW-Authenticate")


def error_page(status: int, message: str = "", errors: list | None = None,
               headers: Iterable[tuple[str, str]] = (), as_guest: bool = False) -> Response:
    """The site's error page for `status`: its title, `message` (a standard one for some statuses), the field
    errors, and the wait in words when `headers` hold a Retry-After in seconds. `as_guest`: the layout without
    looking up who is signed in (which needs the database)."""
    kept = {name: value for name, value in headers if name in ERROR_HEADERS}
    wait = kept.get("Retry-After", "")
    layout: dict[str, Any] = {"current_user": lambda: None} if as_guest else {}
    page = render_page("error.html", status, status=status, title=ERROR_TITLES.get(status, "Error"),
                       message=message or ERROR_MESSAGES.get(status, ""), errors=errors or [],
                       wait=wait if wait.isdigit() else "", **layout)  # fmt: skip
    page.headers.update(kept)
    return page


@bp.errorhandler(ApiError)
def api_error_page(exc: ApiError) -> Response:
    return error_page(exc.status, exc.message, exc.errors, exc.headers.items())


@bp.errorhandler(HTTPException)
def http_error_page(exc: HTTPException) -> Response:
    status = exc.code or 500
    message = ERROR_MESSAGES.get(status) or exc.description or exc.name
    return error_page(status, message, headers=exc.get_headers())

