"""The site's error pages for people: a browser that asks for a URL outside the machine interfaces (the API, OAI-PMH,
the probes and metrics) gets an HTML page with the site's header for every error status, whatever produced it: an
unknown URL or method (Werkzeug's routing, answered as error objects by repository.web.request), a rate limit (the
wait in words and in `Retry-After`), a database that is down (503), an unexpected failure (500). Clients that do not
prefer HTML, and every URL of the machine interfaces, keep the JSON error objects (the specification's).

The page replaces an error answer in an after-request hook, the one place every error answer passes: the pages'
own errors are HTML already and stay as they are. Rendering may itself fail (the database that made the 503 is
needed for the signed-in user): it is then rendered as a guest's page, and should that fail too the original answer
is kept."""

from __future__ import annotations

import json
import logging

from flask import Flask, Response, request

from repository.pages.base import ERROR_MESSAGES, error_page

log = logging.getLogger(__name__)

MACHINE_PREFIXES = ("/api/", "/oai2d", "/metrics", "/healthz", "/readyz", "/.well-known/")


def install(app: Flask) -> None:
    app.after_request(html_error_page)


def wants_page() -> bool:
    """A person's browser asking for a page: HTML preferred to JSON, on a URL outside the machine interfaces."""
    if request.path.startswith(MACHINE_PREFIXES) or request.path == "/api":
        return False
    return request.accept_mimetypes.best_match(["application/json", "text/html"]) == "text/html"


def html_error_page(response: Response) -> Response:
    """`response` as the site's error page when it is an error object (or an empty 500) answered to a browser."""
    if response.status_code < 400 or not wants_page():
        return response
    is_object = response.mimetype == "application/json"
    if not is_object and response.calculate_content_length() != 0:
        return response  # a page already (the pages' own errors), or a download's or a format's answer
    message = ""
    if is_object and response.status_code not in ERROR_MESSAGES:
        try:
            message = str(json.loads(response.get_data()).get("message") or "")
        except (ValueError, AttributeError):
            message = ""
    page = None
    for as_guest in (False, True):  # the guest's layout when who is signed in cannot be looked up (no database)
        try:
            page = error_page(response.status_code, message, headers=response.headers.items(), as_guest=as_guest)
            break
        except Exception:  # noqa: BLE001 - tried once more as a guest's page, else the error object stays
            log.warning("error page %s not rendered (as a guest: %s)", response.status_code, as_guest, exc_info=True)
    if page is None:
        return response
    page.headers["Vary"] = "Accept"
    return page
