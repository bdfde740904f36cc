"""What every request shares: HTTPS, the caller's identity, JSON bodies, scopes and the error object.

Views stay thin: they call `json_body()`, `require_scope()` and a domain function, then `json_response()`.
"""

from __future__ import annotations

import functools
import logging
import ssl
import uuid
from collections.abc import Callable
from typing import Any, NoReturn

import orjson
from flask import Flask, Request, Response, abort, current_app, flash, g, redirect, request
from sqlalchemy.exc import IntegrityError, OperationalError, SQLAlchemyError
from werkzeug.exceptions import HTTPException

from repository import urls
from repository.accounts import audit
from repository.accounts.tokens import Identity, authenticate, note_use, scopes_for
from repository.errors import (
    ApiError,
    BadRequest,
    Conflict,
    Forbidden,
    InsufficientStorage,
    PayloadTooLarge,
    ServiceUnavailable,
    Unauthorized,
    UnsupportedMediaType,
    disk_full,
    library_errors,
)
from repository.jsonlimits import ShapeError, check_shape
from repository.services import Services
from repository.web.session import check_csrf, current_user, needs_csrf, safe_next, session_ended

log = logging.getLogger("repository")


def services() -> Services:
    """The services of this application (built by `build_services` in create_app)."""
    services_: Services = current_app.extensions["repository"]
    return services_


def identity() -> Identity | None:
    """The authenticated caller of this request, or None for a guest."""
    return resolve_identity()


def caller() -> Identity:
    """The authenticated caller, in a view that `require_scope` guards (401 without one, as that answers)."""
    who = identity()
    if who is None:
        raise Unauthorized()
    return who


def resolve_identity() -> Identity | None:
    """The caller, looked up once per request: the token's identity; without a token, the signed-in browser
    session's (every scope; its writes need the CSRF token); None for a guest or an invalid token."""
    if "identity" not in g:
        found = None
        token = _token_from_request()
        if token is not None:
            # Set nothing before the lookup succeeds: a dead database must not turn the caller into a guest.
            with services().db.read() as conn:
                found = authenticate(conn, token)
            if found is not None and found.token_id is not None and found.use_unnoted():
                _note_use(found.token_id)
        else:
            user = current_user()  # a signed-in browser: every scope, writes need the CSRF token
            if user is not None:
                found = Identity(user["id"], user["email"], frozenset(scopes_for(user)), None, session=True)
        g.bad_token = token is not None and found is None
        g.identity = found
    return g.identity


def _note_use(token_id: int) -> None:
    """Record the token's use (`last_used`, at most once a minute) in a short write of its own, after the read that
    authenticated it, waiting briefly for a lock: a failure (a busy or read-only database) is logged and never fails
    or holds up the request."""
    try:
        with services().db.brief_write() as conn:
            note_use(conn, token_id)
    except SQLAlchemyError as exc:
        log.warning("could not record the use of token %s: %s", token_id, exc)


def is_page_request() -> bool:
    """Whether the request is for a web page (a blueprint under `pages`): errors are then pages, forms need CSRF."""
    return "pages" in request.blueprints


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """Compact UTF-8 JSON (pretty with ?prettyprint=1, as the reference allows)."""
    option = orjson.OPT_INDENT_2 if request.args.get("prettyprint") in {"1", "true"} else 0
    return Response(orjson.dumps(body, option=option), status=status, headers=headers, mimetype="application/json")


def json_body() -> Any:
    """The request's JSON body: 415 without `Content-Type: application/json`, 400 when malformed."""
    mimetype = request.mimetype
    if mimetype != "application/json" and not (mimetype.startswith("application/") and mimetype.endswith("+json")):
        shown = request.content_type or "none"
        raise UnsupportedMediaType(f'Unsupported media type "{shown}": send the body as application/json.')
    limit = services().settings.MAX_JSON_BYTES
    if request.content_length is not None and request.content_length > limit:
        raise PayloadTooLarge(f"The JSON body is larger than {limit} bytes.")
    raw = request.get_data(cache=True)
    if len(raw) > limit:
        raise PayloadTooLarge(f"The JSON body is larger than {limit} bytes.")
    try:
        body = orjson.loads(raw)
        check_shape(body)  # nothing that walks the body later can then run out of stack
    except orjson.JSONDecodeError as exc:
        if "depth limit" in str(exc):  # orjson's own bound (1,024), far past ours
            raise BadRequest(f"The JSON body is {ShapeError.too_deep()}.") from None
        raise BadRequest(f"The body is not valid JSON: {exc}.") from None
    except ShapeError as exc:
        raise BadRequest(f"The JSON body is {exc}.") from None
    return body


def require_scope(scope: str | None = None) -> Callable:
    """Decorator: 401 without a valid token; 403 when the token lacks `scope`."""

    def decorator(view: Callable) -> Callable:
        @functools.wraps(view)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            who = identity()
            if who is None:
                raise Unauthorized()
            if scope and not who.has_scope(scope):
                raise Forbidden(f"The access token lacks the scope {scope!r} needed for this request.")
            return view(*args, **kwargs)

        wrapper.__dict__.update(required_scope=scope, requires_auth=True)  # read by the OpenAPI description
        return wrapper

    return decorator


def _token_from_request() -> str | None:
    header = request.headers.get("Authorization", "")
    if header:
        kind, _, value = header.partition(" ")
        # A malformed header counts as an invalid token (401), never as a guest.
        return value.strip() if kind.lower() == "bearer" and value.strip() else header
    return request.args.get("access_token") or None


def _is_secure() -> bool:
    """Whether the request came over HTTPS. With TRUSTED_PROXIES, ProxyFix (create_app) has applied the proxies'
    X-Forwarded-Proto; without, no forwarded header counts, even one a server applied itself (gunicorn's own
    workers believe X-Forwarded-Proto from 127.0.0.1 unless configured not to): then only a TLS socket is HTTPS."""
    if request.scheme != "https":
        return False
    sock = request.environ.get("gunicorn.socket")
    return bool(services().settings.TRUSTED_PROXIES) or sock is None or isinstance(sock, ssl.SSLSocket)


def install_checks(app: Flask) -> None:
    """Register the per-request checks (after the rate limiter's, so refusals are counted and carry its headers)."""

    @app.before_request
    def start_request() -> None:
        g.request_id = request.headers.get("X-Request-ID") or uuid.uuid4().hex
        audit.ORIGIN.set(request.remote_addr or "")  # where the owners' actions recorded in the audit log come from
        settings = services().settings
        if not settings.ALLOW_HTTP and not _is_secure():
            raise Forbidden("Plain HTTP is not accepted: use HTTPS (" + settings.BASE_URL + ").")
        who = resolve_identity()
        if g.bad_token:
            raise Unauthorized("The access token is invalid or has been revoked.")
        if needs_csrf(is_page_request(), who is not None and who.session):
            try:
                check_csrf()
            except BadRequest:
                if who is None and is_page_request() and session_ended():
                    _sign_in_again()
                raise


def _sign_in_again() -> NoReturn:
    """A form sent after its sign-in ended (see session_ended) cannot carry a valid token any more: the person is sent
    to sign in, coming back to the form's page, rather than shown an error. (A forged form gains nothing by this.)"""
    flash("Your session has ended: sign in again, then send the form again.", "error")
    abort(redirect(urls.sign_in_html("", safe_next(request.path)), 303))


class UploadRequest(Request):
    """A request that closes every file its form parser opened, also those of a parse that failed half-way (a full
    disk, a body past the limit): werkzeug closes only the files of a parse that finished."""

    def _get_file_stream(self, *args: Any, **kwargs: Any) -> Any:
        stream = super()._get_file_stream(*args, **kwargs)
        self.__dict__.setdefault("_parser_streams", []).append(stream)
        return stream

    def close(self) -> None:
        super().close()
        for stream in self.__dict__.get("_parser_streams", ()):
            stream.close()


def install(app: Flask) -> None:
    """Register the response hook and error handlers (before the rate limiter, so ours runs after its own)."""
    app.request_class = UploadRequest

    @app.after_request
    def finish_request(response: Response) -> Response:
        response.headers.setdefault("X-Request-ID", g.get("request_id", ""))
        hsts = services().settings.HSTS_MAX_AGE
        if hsts and _is_secure():
            response.headers.setdefault("Strict-Transport-Security", f"max-age={hsts}")
        return response

    @app.errorhandler(ApiError)
    def api_error(exc: ApiError) -> Response:
        return json_response(exc.body(), exc.status, exc.headers)

    for library_type, to_api_error in library_errors().items():
        app.register_error_handler(library_type, lambda exc, convert=to_api_error: api_error(convert(exc)))

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException) -> Response:
        # Werkzeug's own errors (unknown route, wrong method, rate limit...) become the error object too.
        status = exc.code or 500
        if status >= 500:
            return internal_error(exc)
        message = exc.description if status == 429 else (exc.description or exc.name)
        if status == 404:
            message = "The requested URL was not found on the server."
        if status == 429:
            message = f"Rate limit exceeded: {exc.description}."
        response = json_response({"message": message, "status": status}, status)
        for name, value in (exc.get_headers() or []):
            if name.lower() not in {"content-type", "content-length"}:
                response.headers[name] = value
        return response

    @app.errorhandler(OperationalError)
    def database_down(exc: OperationalError) -> Response:
        log.error("database error (request %s): %s", g.get("request_id"), exc)
        if _database_full(exc):
            return api_error(InsufficientStorage("The database's storage is full: nothing was stored. Retry later."))
        return json_response(ServiceUnavailable("The database is not available; retry later.").body(), 503)

    @app.errorhandler(IntegrityError)
    def integrity_conflict(exc: IntegrityError) -> Response:
        # A safety net: writes lock or upsert so that a simultaneous one gets a defined answer; should a race
        # still reach a constraint, the caller gets a conflict to retry rather than a 500.
        log.warning("integrity conflict (request %s): %s", g.get("request_id"), exc)
        return api_error(Conflict("The request conflicted with a simultaneous change: nothing was changed. Retry."))

    @app.errorhandler(OSError)
    def os_error(exc: OSError) -> Response:
        full = disk_full(exc)  # a full disk (files, temporary files of a form) is 507 wherever it happens
        if full is None:
            return internal_error(exc)
        log.error("disk full (request %s): %s", g.get("request_id"), exc)
        return api_error(full)

    @app.errorhandler(Exception)
    def internal_error(exc: Exception) -> Response:
        # No details in the body (the specification: a 500 has no error body); the log has them.
        log.exception("unhandled error (request %s)", g.get("request_id"), exc_info=exc)
        return Response(b"", status=500, headers={"X-Request-ID": g.get("request_id", "")})


def _database_full(exc: OperationalError) -> bool:
    """SQLite's SQLITE_FULL or PostgreSQL's disk_full (53100)."""
    orig = exc.orig
    return getattr(orig, "sqlite_errorcode", None) == 13 or getattr(orig, "sqlstate", None) == "53100"
