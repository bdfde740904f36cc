"""Rate limits with flask-limiter: per user when authenticated, per address for guests; counters in memory or Redis."""

from __future__ import annotations

from flask import Flask, request
from flask_limiter import Limiter

from repository.config import Settings


def install_limiter(app: Flask, settings: Settings, resolve_identity) -> Limiter:  # type: ignore[no-untyped-def]
    """Create the app's limiter; `resolve_identity()` gives the caller (or None) for the current request."""

    def key() -> str:
        who = resolve_identity()
        # Authenticated users are counted per user, wherever they call from; guests per address.
        return f"user:{who.user_id}" if who is not None else f"addr:{request.remote_addr}"

    # Application-wide limits: the specification's figures count all endpoints together, not each route.
    def default_limit() -> str:
        return settings.RATELIMIT_USER if resolve_identity() is not None else settings.RATELIMIT_GUEST

    return Limiter(
        key_func=key,
        app=app,
        application_limits=[default_limit],
        headers_enabled=True,
        storage_uri=settings.RATELIMIT_STORAGE_URI,
        strategy="fixed-window",
        enabled=settings.RATELIMIT_ENABLED,
        # A dead Redis must not take the API down with it: fall back to per-process counters.
        in_memory_fallback_enabled=True,
        key_prefix="repository",
        # Unmatched URLs (404s) count too: give them an identity instead of none.
        request_identifier=lambda: request.endpoint or "unmatched",
    )
