"""The usage-statistics view of a request (`repository.records.stats`): who made it and when, and whether a file
response starts a download (COUNTER counts a request, not each piece of it)."""

from __future__ import annotations

from flask import Response, request

from repository.records.stats import Visit
from repository.web.request import identity, services


def visit() -> Visit:
    """This request's visitor: the signed-in user (token or browser session), else its address and user agent."""
    who = identity()
    return Visit(who.user_id if who is not None else None, request.remote_addr or "", request.user_agent.string,
                 services().clock())  # fmt: skip


def reader_visit() -> Visit | None:
    """The visitor of a record read, None for a HEAD (no content sent: not a use of the record)."""
    return visit() if request.method == "GET" else None


def starts_a_download(response: Response) -> bool:
    """Whether a file response is a new request: a GET answered in full, or a Range from byte 0. A HEAD sends no
    file; a Range starting further on continues a download (a resumed or parallel one), already counted."""
    if request.method != "GET":
        return False
    if response.status_code == 200:
        return True
    if response.status_code == 302:  # a presigned download: the store sends the bytes (S3_PRESIGNED_DOWNLOADS)
        wanted = request.headers.get("Range", "").replace(" ", "")
        return not wanted.startswith("bytes=") or wanted.startswith("bytes=0-")
    return response.status_code == 206 and response.content_range is not None and response.content_range.start == 0
