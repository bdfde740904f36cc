"""Thumbnails of image records: made once per file and size with Pillow, kept under INSTANCE_PATH/thumbnails."""

from __future__ import annotations

import os
import tempfile

from PIL import Image, UnidentifiedImageError

from repository.errors import NotFound

SIZES = (10, 50, 100, 250, 750, 1200)
# Decompression bombs: refuse images that would expand beyond this many pixels.
Image.MAX_IMAGE_PIXELS = 100_000_000


def thumbnail(source: str, file_id: str, size: int, directory: str) -> str:
    """The path of the PNG thumbnail (at most `size` pixels wide) of the image at `source`, made if missing."""
    if size not in SIZES:
        raise NotFound(f"No thumbnail of size {size}: sizes are {', '.join(map(str, SIZES))}.")
    target = os.path.join(directory, f"{file_id}-{size}.png")
    if os.path.exists(target):
        return target
    os.makedirs(directory, exist_ok=True)
    try:
        with Image.open(source) as image:
            image.thumbnail((size, size * 4))
            handle, tmp = tempfile.mkstemp(dir=directory, suffix=".png")
            with os.fdopen(handle, "wb") as out:
                image.convert("RGBA" if image.mode in ("RGBA", "LA", "P") else "RGB").save(out, "PNG")
    except (UnidentifiedImageError, OSError, Image.DecompressionBombError):
        raise NotFound("The record's image cannot be shown as a thumbnail.") from None
    os.replace(tmp, target)  # two requests racing both write whole files; the last rename wins
    return target
