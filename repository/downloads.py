"""Sending stored files: Range and conditional requests, and the defensive headers for untrusted content."""

from __future__ import annotations

import logging
import os

from flask import Response, send_file

from repository.errors import ServiceUnavailable
from repository.files import FileStore

log = logging.getLogger("repository.downloads")

# Only these types are served as what they are; anything that a browser could run or render becomes plain text
# or an attachment (reference §7).
SAFE_TYPES = {
    "image/gif", "image/jpeg", "image/png", "image/tiff",
    "audio/mpeg", "audio/ogg", "audio/wav", "audio/webm",
    "text/plain",
}
AS_TEXT = {
    "text/html", "application/javascript", "text/javascript", "application/json", "application/xml", "text/xml",
    "application/xhtml+xml", "text/css", "text/csv", "image/svg+xml",
}


def safe_mimetype(mimetype: str) -> str:
    if mimetype in SAFE_TYPES:
        return mimetype
    if mimetype in AS_TEXT or mimetype.startswith("text/"):
        return "text/plain"
    return "application/octet-stream"


def send_object(store: FileStore, obj: dict, as_attachment: bool) -> Response:
    """The object's bytes as stored (a .gz file is never sent with Content-Encoding), with Range support."""
    path = store.path(obj["uri"])
    if not os.path.isfile(path):
        # The database knows the file but the disk lost it (a restore gone wrong, a volume not mounted): say so
        # clearly instead of failing inside the file sender.
        log.error("file %s of bucket %s is missing on disk at %s", obj["key"], obj["bucket_id"], path)
        raise ServiceUnavailable("The file's contents are unavailable at the moment; the operators have been told.")
    mimetype = safe_mimetype(obj["mimetype"])
    response = send_file(
        path,
        mimetype=mimetype,
        as_attachment=as_attachment or mimetype == "application/octet-stream",
        download_name=obj["key"],
        conditional=True,
        etag=obj["checksum"],
        last_modified=obj["updated"],
        max_age=0,
    )
    response.headers["Content-MD5"] = obj["checksum"].removeprefix("md5:")
    response.headers["Content-Security-Policy"] = "default-src 'none';"
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["X-Download-Options"] = "noopen"
    response.headers["X-Frame-Options"] = "deny"
    response.headers["X-Permitted-Cross-Domain-Policies"] = "none"
    if mimetype.startswith("text/"):
        response.headers["Content-Type"] = f"{mimetype}; charset=utf-8"
    return response
