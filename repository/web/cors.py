"""Cross-origin requests: a page on any origin may call the API with a bearer token.

Every response says `Access-Control-Allow-Origin: *` and exposes the headers clients read (rate limits, ETag,
Link, Content-Range...). A preflight (`OPTIONS` with `Access-Control-Request-Method`) is answered in full — the
methods, the request headers the API understands, and how long a browser may cache the answer — and is exempt from
rate limits (ratelimit.py). No cookie is ever honoured cross-origin: the wildcard origin forbids credentials mode,
so a page must hold a token to act for someone.

Fixed headers from one after-request hook: flask-cors did the same work for about 45 us of CPU a request (a tenth
of the ceiling endpoint's), matching origins and request headers that a wildcard policy never refuses.
"""

from __future__ import annotations

from flask import Flask, Request, Response, request

METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS"]
ALLOW_HEADERS = [
    "Authorization", "Content-Type", "Accept", "Accept-Language", "If-Match", "If-None-Match", "If-Modified-Since",
    "If-Unmodified-Since", "If-Range", "Range", "Content-MD5", "Content-Digest", "Content-Range", "X-Request-ID",
]
EXPOSE_HEADERS = [
    "Content-Type", "Content-Length", "Content-Range", "Content-Disposition", "Accept-Ranges", "ETag", "Last-Modified",
    "Link", "Location", "X-Request-ID", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset",
    "Retry-After",
]
MAX_AGE = 7200  # seconds a browser may reuse a preflight's answer (two hours: Chromium's cap)


EVERY_RESPONSE = {"Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": ", ".join(EXPOSE_HEADERS)}
PREFLIGHT = {
    "Access-Control-Allow-Methods": ", ".join(METHODS),
    "Access-Control-Allow-Headers": ", ".join(ALLOW_HEADERS),
    "Access-Control-Max-Age": str(MAX_AGE),
}


def install_cors(app: Flask) -> None:
    """Answer preflights and add the CORS headers to every response, errors included."""

    @app.after_request
    def cors_headers(response: Response) -> Response:
        response.headers.update(EVERY_RESPONSE)
        if is_preflight(request):
            response.headers.update(PREFLIGHT)
        return response


def is_preflight(request: Request) -> bool:
    """A CORS preflight: the browser asking whether it may send the real request (no token, no work done)."""
    return request.method == "OPTIONS" and "Access-Control-Request-Method" in request.headers
