"""`/healthz`, `/readyz` and `/metrics`: what an orchestrator and Prometheus ask. Free of rate limits, and never a
500: a failing dependency is a 503 naming the check that failed."""

from __future__ import annotations

import hmac
import logging

from flask import Blueprint, Flask, Response, current_app, g, request
from limits import parse_many

from repository.errors import ApiError, NotFound, ServiceUnavailable, Unauthorized
from repository.web import metrics
from repository.web.health import public_view, readiness
from repository.web.openapi import doc
from repository.web.ratelimit import limiter_of
from repository.web.request import json_response, services

bp = Blueprint("health", __name__)
log = logging.getLogger(__name__)
SCRAPE_LIMITS = parse_many("60/minute")  # per client address, whatever the token

CHECK = {"type": "object", "properties": {"ok": {"type": "boolean"}, "ms": {"type": "number"},
                                          "error": {"type": "string"}}}
READY = {"type": "object", "required": ["status", "checks"], "properties": {
    "status": {"type": "string", "enum": ["ready", "not ready"]},
    "checks": {"type": "object", "properties": {name: CHECK for name in
                                                ("database", "search", "files", "disk", "outbox")}}}}


def install(app: Flask) -> None:
    """Register the blueprint and its hook; call before the rate limiter and the per-request checks. These
    requests have no caller: an Authorization header here carries METRICS_TOKEN, not an API token, and no
    database is asked who is calling (a probe must answer while it is down)."""

    @app.before_request
    def no_caller() -> None:
        if request.blueprint == bp.name:
            g.identity, g.bad_token = None, False

    app.register_blueprint(bp)


@bp.get("/healthz")
@doc(responses={"200": {"description": "The process answers.", "content": {"application/json": {"schema": {
    "type": "object", "properties": {"status": {"type": "string", "enum": ["ok"]}}}}}}})
def healthz() -> Response:
    """Liveness: the process answers (nothing else is checked)."""
    return json_response({"status": "ok"}, headers={"Cache-Control": "no-store"})


@bp.get("/readyz")
@doc(responses={
    "200": {"description": "Every check passed.", "content": {"application/json": {"schema": READY}}},
    "503": {"description": "A check failed: its `error` says which and why.",
            "content": {"application/json": {"schema": READY}}},
})
def readyz() -> Response:
    """Readiness: the database and the search engine answer, FILES_ROOT is writable, the disk has
    READY_MIN_FREE_BYTES free and the outbox's oldest entry is younger than READY_MAX_OUTBOX_AGE_SECONDS; 503
    otherwise."""
    ready, checks = readiness(services())
    # The details need METRICS_TOKEN, whose tries count as scrapes do (/readyz is no way round that limit); past
    # it, the probe still gets its answer, without the details.
    if not (request.headers.get("Authorization") and _scrape_allowed() and _is_operator()):
        checks = public_view(checks)
    return json_response({"status": "ready" if ready else "not ready", "checks": checks}, 200 if ready else 503,
                         headers={"Cache-Control": "no-store"})


def _scrape_wait() -> int | None:
    """Count an attempt with METRICS_TOKEN from this address; the seconds to wait once past SCRAPE_LIMITS."""
    return limiter_of(current_app).count(f"metrics/client/{request.remote_addr or '-'}", SCRAPE_LIMITS)


def _scrape_allowed() -> bool:
    return bool(services().settings.METRICS_TOKEN) and _scrape_wait() is None


def _is_operator() -> bool:
    """The request carries `Authorization: Bearer <METRICS_TOKEN>` (and METRICS_TOKEN is set)."""
    token = services().settings.METRICS_TOKEN
    kind, _, given = request.headers.get("Authorization", "").partition(" ")
    return bool(token) and kind.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())


@bp.get("/metrics")
@doc(responses={"200": {"description": "Prometheus text exposition.", "content": {"text/plain": {}}},
                "401": {"description": "No bearer token, or not METRICS_TOKEN."},
                "429": {"description": "More than 60 scrapes a minute from the address, whatever the token."},
                "404": {"description": "Metrics are off (METRICS_TOKEN is empty)."}})
def metrics_view() -> Response:
    """Prometheus metrics of every server process; needs `Authorization: Bearer <METRICS_TOKEN>` (404 while
    METRICS_TOKEN is empty, 401 without the token)."""
    token = services().settings.METRICS_TOKEN
    if not token:
        raise NotFound("The requested URL was not found on the server.")
    # Every scrape counts before the token is compared (a refused guesser cannot tell a right guess by its answer):
    # a Prometheus scrapes a few times a minute; a guesser gets no further than this.
    wait = _scrape_wait()
    if wait is not None:
        raise ApiError(f"Too many scrapes from this address: retry in {wait} s.", status=429,
                       headers={"Retry-After": str(wait)})
    if not _is_operator():
        raise Unauthorized("Scraping /metrics needs the bearer token METRICS_TOKEN.",
                           headers={"WWW-Authenticate": 'Bearer realm="metrics"'})
    try:
        return metrics.exposition(services())
    except Exception:  # noqa: BLE001 - e.g. an unreadable file of PROMETHEUS_MULTIPROC_DIR: never a 500
        log.exception("the metrics could not be gathered")
        raise ServiceUnavailable("The metrics could not be gathered; the log has the details.") from None
