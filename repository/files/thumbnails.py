"""Thumbnails of image records: made once per file and size with Pillow, kept under INSTANCE_PATH/thumbnails.

Decoding is the costly part and is bounded three ways (issue 14.6): the image's size is read from its header and
an image that would decode to more than `max_pixels` pixels is refused before any pixel is decoded; a JPEG is
decoded at a reduced scale (1/2 to 1/8) when the thumbnail is small enough, and only that reduced size counts; and
at most `concurrency` decodings run at once on the machine (a lock file per slot, shared by every process), a
request finding every slot busy being refused with 503. So the memory thumbnails take is at most about
concurrency x max_pixels x 4 bytes, whatever is uploaded. A thumbnail made once is served from disk.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager

from PIL import Image, UnidentifiedImageError

from repository.errors import NotFound, ServiceUnavailable, UnprocessableEntity

SIZES = (10, 50, 100, 250, 750, 1200)
# The formats decoded, whatever the file's name says: Pillow tells a format by its content, and some it knows
# run other programs (EPS runs Ghostscript) or are rarely exercised decoders.
FORMATS = ("PNG", "JPEG", "GIF", "WEBP", "TIFF", "BMP")
# Pillow only warns up to twice its own limit, and counts pixels before any reduced-scale decoding: the explicit
# bound of `thumbnail()` replaces it (Pillow opens no other image in this service).
Image.MAX_IMAGE_PIXELS = None
# How long a request waits for a free decoding slot before the 503.
SLOT_WAIT_SECONDS = 2.0
RETRY_AFTER_SECONDS = 5


class TooLarge(UnprocessableEntity):
    """The image is too large to be decoded for a preview."""


def thumbnail(
    source: str, file_id: str, size: int, directory: str, *, max_pixels: int, concurrency: int
) -> str:
    """The path of the PNG thumbnail (at most `size` pixels wide) of the image at `source`, made if missing.

    NotFound for an unknown size or an unreadable image, TooLarge (422) past `max_pixels`, ServiceUnavailable
    (503, Retry-After) while `concurrency` thumbnails are being made."""
    if size not in SIZES:
        raise NotFound(f"No thumbnail of size {size}: sizes are {', '.join(map(str, SIZES))}.")
    target = os.path.join(directory, f"{file_id}-{size}.png")
    if os.path.exists(target):
        return target
    os.makedirs(directory, exist_ok=True)
    try:
        with Image.open(source, formats=FORMATS) as image:
            # Only JPEG (and MPO) decode at a reduced scale: to twice the thumbnail's size at least, as
            # Image.thumbnail() would, but from the thumbnail's own size rather than its tall bounding box.
            scale = min(size / image.width, size * 4 / image.height, 1.0)
            image.draft(None, (max(1, round(image.width * scale)) * 2, max(1, round(image.height * scale)) * 2))
            width, height = image.size
            if width * height > max_pixels:
                raise TooLarge(
                    f"The image is too large for a preview: {width} x {height} pixels, the limit is "
                    f"{max_pixels:,} pixels. Download the file itself."
                )
            with decoding_slot(directory, concurrency):
                image.thumbnail((size, size * 4))
                small = image.convert("RGBA" if image.mode in ("RGBA", "LA", "P", "PA") else "RGB")
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError, SyntaxError):
        # SyntaxError and ValueError: Pillow's own words for some broken files.
        raise NotFound("The record's image cannot be shown as a thumbnail.") from None
    handle, tmp = tempfile.mkstemp(dir=directory, suffix=".png")
    try:
        with os.fdopen(handle, "wb") as out:
            small.save(out, "PNG")
        os.replace(tmp, target)  # two requests racing both write whole files; the last rename wins
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


@contextmanager
def decoding_slot(directory: str, concurrency: int) -> Iterator[None]:
    """Hold one of `concurrency` decoding slots of the machine (an flock on a file per slot, so that threads and
    processes count alike); ServiceUnavailable when none frees up within SLOT_WAIT_SECONDS."""
    os.makedirs(directory, exist_ok=True)
    deadline = time.monotonic() + SLOT_WAIT_SECONDS
    while True:
        for slot in range(concurrency):
            fd = os.open(os.path.join(directory, f".slot-{slot}.lock"), os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            try:
                yield
            finally:
                os.close(fd)  # closing releases the lock
            return
        if time.monotonic() >= deadline:
            raise ServiceUnavailable(
                "Thumbnails are being made for other requests: retry in a few seconds.",
                headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
            )
        time.sleep(0.05)
