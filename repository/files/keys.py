"""The rules for file names (keys) in a bucket: normalised, no path tricks or bidirectional controls, within a
file name's length; and the media type a name suggests."""

from __future__ import annotations

import mimetypes
import unicodedata

from repository.errors import (
    BadRequest,
)

MAX_NAME_BYTES = 255  # NAME_MAX of common file systems: a bucket PUT stores one name (the key column holds 1000)


# Bidirectional embeddings, overrides and isolates: `gpj.exe` shown reversed as `exe.jpg`.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def normalise_key(key: str) -> str:
    """The key in Unicode NFC, so that two names that look the same (a precomposed `é` and `e` plus a combining
    accent, as macOS sends them) are one file."""
    return unicodedata.normalize("NFC", key)


def check_key(key: str) -> str:
    """A stored file name, normalised to NFC; BadRequest unless it is one path segment of 1 to 255 bytes in
    UTF-8 (what file systems allow, so a downloader can save it), not `.` or `..`, without `/` or `\\` (a path
    separator for Windows downloaders) and without control characters, bidirectional overrides (names that
    show reversed) or U+FFFD (left by invalid UTF-8 in the URL). Keys never become paths on our disk."""
    key = normalise_key(key)
    field = [{"field": "key", "message": "Invalid file name."}]
    if not key:
        raise BadRequest("Invalid file name: it is empty.", errors=field)
    if key in (".", ".."):
        raise BadRequest(f"Invalid file name: {key!r} is not a file name.", errors=field)
    if len(key.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        raise BadRequest(f"Invalid file name: it is longer than {MAX_NAME_BYTES} bytes in UTF-8.", errors=field)
    bad = next((c for c in key if c in "/\\" or c in _BIDI_CONTROLS or c == "\ufffd"
                or unicodedata.category(c) in ("Cc", "Cs")), None)
    if bad is not None:
        raise BadRequest(f"Invalid file name: it contains the character U+{ord(bad):04X}, which is not allowed.",
                         errors=field)
    return key


def upload_key(path: str) -> str:
    """The file name a bucket PUT to `path` stores: its last path segment (the specification), checked by
    `check_key`; BadRequest when any segment is `.` or `..` or the path ends with a `/`."""
    segments = normalise_key(path).split("/")
    if any(segment in (".", "..") for segment in segments):
        raise BadRequest("Invalid file name: `.` and `..` segments are not allowed.",
                         errors=[{"field": "key", "message": "Invalid file name."}])
    if not segments[-1]:
        raise BadRequest("Invalid file name: the path ends with `/`; name the file after the last `/`.",
                         errors=[{"field": "key", "message": "Invalid file name."}])
    return check_key(segments[-1])


def guess_mimetype(key: str) -> str:
    return mimetypes.guess_type(key, strict=False)[0] or "application/octet-stream"
