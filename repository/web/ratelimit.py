"""Rate limits: per user when authenticated, per address for guests, counted over every endpoint together (the
specification's figures), plus a blueprint's own limit where one is set (OAI-PMH, thumbnails).

Counters live where RATELIMIT_STORAGE_URI says, through the `limits` library's storages: a file shared by the
machine's server processes (embedded shape, repository/web/ratelimit_store.py), Redis (scaled shape) or each process's
memory. The checks are a before/after-request pair over `limits` rather than flask-limiter's middleware, which
resolved and parsed every limit on every request: about 330 us of CPU a request in the test client, where these
hooks take about 30 us (two counters in one locked step of the file store, three headers). `bench/bench.py
--parts ratelimit` measures the ceiling endpoint with limits on against off.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flask import Blueprint, Flask, Response, g, request
from limits import RateLimitItem, parse_many
from limits.storage import MemoryStorage, Storage, storage_from_string
from werkzeug.exceptions import TooManyRequests

from repository.config import Settings
from repository.errors import ApiError
from repository.web import ratelimit_store
from repository.web.cors import is_preflight

log = logging.getLogger("repository.web.ratelimit")
PREFIX = "repository"
EXTENSION = "repository.ratelimit"  # the app's RateLimiter, under app.extensions (`limiter_of`)
FALLBACK_SECONDS = 30  # after a storage failure, per-process counters for this long before trying it again


@dataclass(slots=True)
class Hit:
    """One limit counted for this request: its new count and the end of its window."""

    item: RateLimitItem
    key: str
    count: int
    expires: float | None  # None: not known yet (read from the storage when the headers need it)

    @property
    def remaining(self) -> int:
        return max(0, self.item.amount - self.count)


class RateLimiter:
    """The app's limits; `resolve_identity()` gives the caller (or None) for the current request."""

    def __init__(self, app: Flask, settings: Settings, resolve_identity: Callable[[], Any]) -> None:
        self.enabled = settings.RATELIMIT_ENABLED
        self.resolve_identity = resolve_identity
        self.guest = parse_many(settings.RATELIMIT_GUEST)
        self.user = parse_many(settings.RATELIMIT_USER)
        # An `async+` URI would give an async storage: RATELIMIT_STORAGE_URI names a sync one (memory, redis, file).
        self.storage: Storage = storage_from_string(settings.RATELIMIT_STORAGE_URI)  # type: ignore[assignment]
        self.fallback = MemoryStorage()
        self.failed_until = 0.0
        self.blueprint_limits: dict[str, list[RateLimitItem]] = {}
        self.exempt_blueprints: set[str] = set()
        self._plans: dict[tuple[str, bool], list[tuple[RateLimitItem, str, str, int]]] = {}
        app.extensions[EXTENSION] = self
        if self.enabled:
            app.before_request(self.check)
            app.after_request(self.add_headers)

    # configuration, as blueprints declare it
    def limit(self, limits: str) -> Callable[[Blueprint], Blueprint]:
        """`limiter.limit("20/minute")(bp)`: the blueprint's own limit, besides the application-wide ones."""

        def apply(blueprint: Blueprint) -> Blueprint:
            self.blueprint_limits.setdefault(blueprint.name, []).extend(parse_many(limits))
            return blueprint

        return apply

    def exempt(self, blueprint: Blueprint) -> None:
        """Take the blueprint out of the application-wide limits (its own limit still applies)."""
        self.exempt_blueprints.add(blueprint.name)

    def count(self, key: str, limits: list[RateLimitItem]) -> int | None:
        """Count one attempt of `key` (e.g. sign-in attempts for an address) against `limits`, apart from the
        request-wide limits and in the same storage; the seconds to wait when one is now exceeded, else None."""
        if not self.enabled:
            return None
        plan = [(item, f"LIMITER/{PREFIX}/", f"/{item.amount}/{item.multiples}/{item.GRANULARITY.name}",
                 item.get_expiry()) for item in limits]
        breached = [hit for hit in self._hit_all(key, plan) if hit.count > hit.item.amount]
        return max(self._retry_after(hit) for hit in breached) if breached else None

    # the request hooks
    def check(self) -> None:
        """Count this request against every limit that applies; 429 when one is exceeded."""
        # One proxy lookup, not five; flask types `request` as the Request, not as the LocalProxy it is.
        current = request._get_current_object()  # type: ignore[attr-defined]
        endpoint = current.endpoint or ""
        if is_preflight(current) or endpoint == "static" or endpoint.endswith(".static") or endpoint.startswith("assets."):
            return  # a browser's preflight is not a request of its own; static files are free
        who = self.resolve_identity()
        key = f"user:{who.user_id}" if who is not None else f"addr:{current.remote_addr}"
        plan = self._plan(current.blueprint or "", who is not None)
        if not plan:
            return
        hits = self._hit_all(key, plan)
        # The headers describe the limit closest to refusing (the shortest window on a tie), or the one refusing.
        shown = hits[0]
        for hit in hits[1:]:
            if (hit.remaining, hit.item.get_expiry()) < (shown.remaining, shown.item.get_expiry()):
                shown = hit
        g.ratelimit = shown
        breached = [hit for hit in hits if hit.count > hit.item.amount]
        if breached:
            hit = min(breached, key=lambda hit: hit.item.get_expiry())
            g.ratelimit = hit
            raise TooManyRequests(description=str(hit.item), retry_after=self._retry_after(hit))

    def _plan(self, blueprint: str, user: bool) -> list[tuple[RateLimitItem, str, str, int]]:
        """The limits of a request to `blueprint` by a user or a guest, each with its storage key's prefix and
        suffix (the key item.key_for() builds) and its window, worked out once."""
        found = self._plans.get((blueprint, user))
        if found is None:
            limits = [] if blueprint in self.exempt_blueprints else [("global", item)
                                                                     for item in (self.user if user else self.guest)]
            limits += [(blueprint, item) for item in self.blueprint_limits.get(blueprint, ())]
            found = self._plans[(blueprint, user)] = [
                (item, f"LIMITER/{PREFIX}/{scope}/", f"/{item.amount}/{item.multiples}/{item.GRANULARITY.name}",
                 item.get_expiry()) for scope, item in limits]
        return found

    def add_headers(self, response: Response) -> Response:
        hit = g.pop("ratelimit", None)
        if hit is not None:
            headers = response.headers
            headers.add("X-RateLimit-Limit", str(hit.item.amount))
            headers.add("X-RateLimit-Remaining", str(hit.remaining))
            headers.add("X-RateLimit-Reset", str(int(self._expires(hit))))
        return response

    # counting
    def _hit_all(self, key: str, plan: list[tuple[RateLimitItem, str, str, int]]) -> list[Hit]:
        storage = self._storage()
        try:
            return self._hit(storage, key, plan)
        except storage.base_exceptions as exc:
            if storage is self.fallback:
                raise
            # A dead Redis must not take the API down with it: per-process counters until it is back.
            log.warning("rate-limit storage failed (%s): counting in memory for %d s", exc, FALLBACK_SECONDS)
            self.failed_until = time.monotonic() + FALLBACK_SECONDS
            return self._hit(self.fallback, key, plan)

    def _storage(self) -> Storage:
        return self.fallback if time.monotonic() < self.failed_until else self.storage

    @staticmethod
    def _hit(storage: Storage, key: str, plan: list[tuple[RateLimitItem, str, str, int]]) -> list[Hit]:
        names = [(prefix + key + suffix, expiry) for _item, prefix, suffix, expiry in plan]
        if isinstance(storage, ratelimit_store.FileStorage):  # every counter and its window in one locked step
            counted = storage.incr_windows(names)
            return [Hit(item, name, count, expires)
                    for (item, *_), (name, _), (count, expires) in zip(plan, names, counted, strict=True)]
        return [Hit(item, name, storage.incr(name, expiry), None)
                for (item, *_), (name, expiry) in zip(plan, names, strict=True)]

    def _expires(self, hit: Hit) -> float:
        if hit.expires is None:
            storage = self._storage()
            try:
                hit.expires = storage.get_expiry(hit.key)
            except storage.base_exceptions:
                hit.expires = time.time() + hit.item.get_expiry()
        return hit.expires

    def _retry_after(self, hit: Hit) -> int:
        return max(1, math.ceil(self._expires(hit) - time.time()))


def throttle_mailing(app: Flask, settings: Settings, kind: str, address: object) -> None:
    """Count a guest's request that makes the service mail `address` (an access request's confirmation link) against
    RATELIMIT_SIGNIN, as sign-ups are, per client address and per address mailed (keys of their own: nobody's
    sign-in is locked by it); ApiError 429 with Retry-After once either has had too many."""
    limits = parse_many(settings.RATELIMIT_SIGNIN)
    keys = [f"{kind}/client/{request.remote_addr or '-'}"]
    if isinstance(address, str) and address.strip():
        keys.append(f"{kind}/email/{address.strip().lower()[:254]}")
    waits = [wait for key in keys if (wait := limiter_of(app).count(key, limits)) is not None]
    if waits:
        wait = max(waits)
        raise ApiError(f"Too many requests from here or for this address: retry in {wait} s.", status=429,
                       headers={"Retry-After": str(wait)})


def limiter_of(app: Flask) -> RateLimiter:
    """The rate limiter `install_limiter` gave `app`."""
    limiter: RateLimiter = app.extensions[EXTENSION]
    return limiter


def install_limiter(app: Flask, settings: Settings, resolve_identity: Callable[[], Any]) -> RateLimiter:
    """Create the app's rate limiter and register its hooks (call before the other per-request checks, so that
    their refusals are counted and carry the headers)."""
    return RateLimiter(app, settings, resolve_identity)
