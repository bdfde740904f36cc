"""Sending stored files: Range and conditional requests, and the defensive headers for untrusted content."""

from __future__ import annotations

import base64
import datetime as dt
import io
import logging
import os
import re
from collections.abc import Callable, Iterator

from flask import Response, request, send_file
from werkzeug.http import parse_date, parse_etags

from repository.errors import ApiError, ServiceUnavailable
from repository.files.buckets import ObjectRow
from repository.files.store import CHUNK, FileStore

log = logging.getLogger("repository.web.downloads")

# Only these types are served as what they are; anything that a browser could run or render becomes plain text
# or an attachment (docs/reference-behaviour.md#file-downloads).
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


def send_object(store: FileStore, obj: ObjectRow, as_attachment: bool, presigned: bool = False) -> Response:
    """The object's bytes as stored (a .gz file is never sent with Content-Encoding), with the conditional
    requests and the single byte ranges of RFC 9110 (§13.2.2 order: If-Match, If-Unmodified-Since, If-None-Match,
    If-Modified-Since, then Range with If-Range): 412 and 416 are error objects, 304 has no body. With `presigned`
    (S3_PRESIGNED_DOWNLOADS, a store that has them) the answer is a redirect to a short-lived URL of the store
    itself, which serves the bytes and the ranges (docs/operators/object-storage.md#presigned-downloads)."""
    try:
        size = store.size(obj["uri"])
    except FileNotFoundError:
        # The database knows the file but the store lost it (a restore gone wrong, a volume not mounted): say so
        # clearly instead of failing inside the file sender.
        log.error("file %s of bucket %s is missing from the store at %s", obj["key"], obj["bucket_id"], obj["uri"])
        raise ServiceUnavailable("The file's contents are unavailable at the moment; the operators have been told.")\
            from None
    mimetype = safe_mimetype(obj["mimetype"])
    attachment = as_attachment or mimetype == "application/octet-stream"
    url = store.presigned_url(obj["uri"], obj["key"], mimetype, attachment) if presigned else None
    if url is not None and not _preconditions(obj["checksum"], _seconds(obj["updated"])):
        response = Response(status=302, headers={"Location": url})
        # The URL is for this caller only (a restricted file's reader): no cache keeps it.
        response.headers["Cache-Control"] = "no-store"
        return response
    return send_stream(size, lambda start, length: store.read(obj["uri"], start, length), obj["key"],
                       obj["mimetype"], obj["checksum"], obj["updated"], as_attachment, obj.get("sha256"))


def send_path(path: str, name: str, mimetype: str, etag: str, updated: dt.datetime, as_attachment: bool,
              sha256: str | None = None) -> Response:
    """The file at `path` as `send_object` sends a stored object: `etag` its strong entity tag (`md5:<hex>` also
    gives Content-MD5), `updated` its Last-Modified, `sha256` (hex) its Content-Digest."""
    return send_stream(os.path.getsize(path), lambda start, length: _file_range(path, start, length), name,
                       mimetype, etag, updated, as_attachment, sha256)


def send_stream(size: int, read: Callable[[int, int], Iterator[bytes]], name: str, mimetype: str, etag: str,
                updated: dt.datetime, as_attachment: bool, sha256: str | None = None) -> Response:
    """`size` bytes that `read(start, length)` streams, as `send_path` sends a file."""
    modified = _seconds(updated)
    not_modified = _preconditions(etag, modified)
    byte_range = None if not_modified else _requested_range(etag, modified, size)
    mimetype = safe_mimetype(mimetype)
    response = send_file(
        io.BytesIO(b""),
        mimetype=mimetype,
        as_attachment=as_attachment or mimetype == "application/octet-stream",
        download_name=name,
        conditional=False,
        etag=etag,
        last_modified=modified,
        max_age=0,
    )
    response.accept_ranges = "bytes"
    if not_modified:
        response.close()
        response.response = []
        response.status_code = 304
        for name in ("Content-Length", "Content-Type", "Content-Disposition"):
            response.headers.pop(name, None)
    elif byte_range is not None:
        start, stop = byte_range
        response.close()  # the whole file's wrapper; a seekable one serves the range without reading up to it
        response.response = read(start, stop - start)
        response.status_code = 206
        response.content_length = stop - start
        response.headers["Content-Range"] = f"bytes {start}-{stop - 1}/{size}"
    else:
        # werkzeug's file wrapper reads 8 KiB at a time; 1 MiB reads with the read-ahead advice send a large file
        # about a third faster over TLS (bench/archive_bench.py, the files downloaded one by one).
        response.close()
        response.response = read(0, size)
        response.content_length = size
        # The reference's hex form; only on whole files (a checksum of the whole is wrong for a part).
        if etag.startswith("md5:"):
            response.headers["Content-MD5"] = etag.removeprefix("md5:")
        if sha256:  # RFC 9530, as uploads accept it
            digest = base64.b64encode(bytes.fromhex(sha256)).decode()
            response.headers["Content-Digest"] = f"sha-256=:{digest}:"
    response.headers["Content-Security-Policy"] = "default-src 'none';"
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["X-Download-Options"] = "noopen"
    response.headers["X-Frame-Options"] = "deny"
    response.headers["X-Permitted-Cross-Domain-Policies"] = "none"
    if mimetype.startswith("text/") and response.status_code != 304:
        response.headers["Content-Type"] = f"{mimetype}; charset=utf-8"
    return response


def _file_range(path: str, start: int, length: int) -> Iterator[bytes]:
    """`length` bytes from `start`, in chunks; the file closes when the server closes the iterable. The kernel is told
    the range is read in order (a larger read-ahead: a cold disk is read while the chunk before is sent; see
    repository/files/archive.py `_read` for the figures)."""
    with open(path, "rb") as handle:
        if length > CHUNK and hasattr(os, "posix_fadvise"):  # not on macOS
            os.posix_fadvise(handle.fileno(), start, length, os.POSIX_FADV_SEQUENTIAL)
        handle.seek(start)
        while length > 0 and (chunk := handle.read(min(CHUNK, length))):
            length -= len(chunk)
            yield chunk


def _seconds(value: dt.datetime) -> dt.datetime:
    """An aware UTC time at the one-second resolution of HTTP dates (stored times are naive UTC)."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return value.replace(microsecond=0)


def _preconditions(etag: str, modified: dt.datetime) -> bool:
    """True when the answer is 304 Not Modified; ApiError 412 when If-Match or If-Unmodified-Since fails.
    An unparsable date is ignored, as RFC 9110 says."""
    headers = request.headers
    if "If-Match" in headers:
        if not parse_etags(headers["If-Match"]).contains(etag):  # strong comparison; `*` matches
            raise _precondition_failed("If-Match")
    elif "If-Unmodified-Since" in headers:
        since = parse_date(headers["If-Unmodified-Since"])
        if since is not None and modified > since:
            raise _precondition_failed("If-Unmodified-Since")
    if "If-None-Match" in headers:
        return parse_etags(headers["If-None-Match"]).contains_weak(etag)  # weak comparison
    if "If-Modified-Since" in headers:
        since = parse_date(headers["If-Modified-Since"])
        return since is not None and modified <= since
    return False


def _precondition_failed(header: str) -> ApiError:
    return ApiError(f"Precondition failed: the file does not satisfy {header}.", status=412,
                    errors=[{"field": header, "message": "Precondition failed."}])


def _requested_range(etag: str, modified: dt.datetime, size: int) -> tuple[int, int] | None:
    """(start, stop) of the one byte range to send as 206, or None for the whole file: Range only on GET, only
    while If-Range matches, only in bytes (another unit is ignored), only one range (several are answered with the
    whole file, which RFC 9110 allows), never on an empty file. A suffix longer than the file is the whole file.
    ApiError 416 for a malformed or unsatisfiable bytes range."""
    header = request.headers.get("Range")
    if header is None or request.method != "GET" or size == 0 or not _if_range_matches(etag, modified):
        return None
    unit, equals, ranges = header.partition("=")
    if not equals or unit.strip().lower() != "bytes":
        return None
    specs = [spec.strip() for spec in ranges.split(",") if spec.strip()]
    parsed = [match for match in map(_RANGE_SPEC.match, specs) if match is not None]
    if not specs or len(parsed) != len(specs):
        raise _not_satisfiable(size, "The Range header is malformed: expected bytes=<first>-[<last>] or bytes=-<n>.")
    if len(specs) > 1:
        return None
    first, last, suffix = parsed[0].groups()
    last = last or None  # `bytes=5-`: to the end
    if suffix:
        length = _number(suffix)
        if length == 0:
            raise _not_satisfiable(size, "A range of the last 0 bytes is empty.")
        return max(size - length, 0), size
    start = _number(first)
    if last is not None and _number(last) < start:
        raise _not_satisfiable(size, "The Range header is malformed: its last byte comes before its first.")
    if start >= size:
        raise _not_satisfiable(size, f"The range starts past the end of the file ({size} bytes).")
    return start, size if last is None else min(_number(last) + 1, size)


_RANGE_SPEC = re.compile(r"^(?:(\d+)-(\d*)|-(\d+))$")


def _number(digits: str) -> int:
    """Digits as an int; anything longer than any file is capped (int() refuses over 4,300 digits)."""
    return int(digits) if len(digits) <= 18 else 10**18


def _if_range_matches(etag: str, modified: dt.datetime) -> bool:
    """No If-Range, or one naming the current file: a strong entity tag, or exactly its Last-Modified date."""
    value = request.headers.get("If-Range")
    if value is None:
        return True
    value = value.strip()
    if value.startswith(('"', "W/")):
        return value == f'"{etag}"'
    return parse_date(value) == modified


def _not_satisfiable(size: int, message: str) -> ApiError:
    return ApiError(message, status=416, headers={"Content-Range": f"bytes */{size}"},
                    errors=[{"field": "Range", "message": message}])
