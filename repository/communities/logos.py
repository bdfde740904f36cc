"""Community logos (docs/researchers/index.md#community-logos): an image the community's owner uploads, checked
(size, type, dimensions) and kept as one PNG thumbnail in the community's row."""

from __future__ import annotations

import hashlib
import io
import warnings

from PIL import Image, UnidentifiedImageError
from sqlalchemy import select, update
from sqlalchemy.engine import Connection

from repository.communities.store import get
from repository.errors import Forbidden, NotFound, ValidationError, field_error
from repository.storage.tables.communities import communities
from repository.timeutil import utcnow

MAX_BYTES = 2 * 1024 * 1024  # an upload larger than this is refused before it is decoded
MAX_PIXELS = 25_000_000  # and one whose header promises more pixels (a decompression bomb) before it is decoded
SIDE = 240  # the thumbnail fits in SIDE x SIDE, its proportions kept
FORMATS = {"PNG": "PNG", "JPEG": "JPEG", "GIF": "GIF", "WEBP": "WebP"}


def _refused(message: str) -> ValidationError:
    return ValidationError(errors=[field_error("logo", message)])


def thumbnail(data: bytes) -> bytes:
    """The PNG thumbnail of an uploaded image; ValidationError (field `logo`) for an empty or too large upload, a
    file that is not a PNG, JPEG, GIF or WebP image, or one too large in pixels."""
    if not data:
        raise _refused("Choose an image file.")
    if len(data) > MAX_BYTES:
        raise _refused(f"The image is larger than {MAX_BYTES // (1024 * 1024)} MiB.")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                if image.format not in FORMATS:
                    raise _refused(f"Use a PNG, JPEG, GIF or WebP image (this is {image.format or 'unknown'}).")
                if image.width * image.height > MAX_PIXELS:
                    raise _refused(f"The image has more than {MAX_PIXELS:,} pixels.")
                image.seek(0)  # the first frame of an animation
                image.thumbnail((SIDE, SIDE))
                converted = image.convert("RGBA")
                out = io.BytesIO()
                converted.save(out, "PNG", optimize=True)
                return out.getvalue()
    except (UnidentifiedImageError, Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise _refused("This file is not an image of a kind logos may be (PNG, JPEG, GIF or WebP).") from None
    except (OSError, ValueError, SyntaxError, EOFError):
        raise _refused("This image cannot be read: it is damaged or incomplete.") from None


def set_logo(conn: Connection, identifier: str, user_id: int, png: bytes | None) -> None:
    """Store (or, with None, remove) a community's logo: 404 for an unknown community, 403 unless `user_id` owns it."""
    row = get(conn, identifier)
    if row.owner_id != user_id:
        raise Forbidden("Only the owner of a community may change its logo.")
    conn.execute(update(communities).where(communities.c.identifier == identifier).values(logo=png, updated=utcnow()))


def logo(conn: Connection, identifier: str) -> tuple[bytes, str]:
    """A community's logo (PNG) and its ETag; NotFound when it has none."""
    found = conn.execute(select(communities.c.logo).where(communities.c.identifier == identifier)).scalar()
    if not found:
        raise NotFound("This community has no logo.")
    data = bytes(found)
    return data, hashlib.sha256(data).hexdigest()[:16]
