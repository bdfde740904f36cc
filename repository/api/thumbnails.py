"""`/api/records/<id>/thumb<size>`: thumbnails of image records (rate-limited: 20 a minute by default)."""

from __future__ import annotations

import os

from flask import Blueprint, Response, send_file

from repository.config import Settings
from repository.errors import NotFound
from repository.files.thumbnails import thumbnail
from repository.records import read
from repository.records.access import can_read_files
from repository.web.openapi import doc
from repository.web.ratelimit import RateLimiter
from repository.web.request import identity, services

bp = Blueprint("thumbnails", __name__, url_prefix="/api/records")


@bp.get("/<int:recid>/thumb<int:size>")
@doc(responses={
    "200": {"description": "A PNG thumbnail of the record's first image (`Cache-Control: private` unless the record's "
                           "files are open to everyone)."},
    "422": {"description": "The image is too large to be decoded for a preview (THUMBNAIL_MAX_PIXELS)."},
    "503": {"description": "Every thumbnail decoding slot is busy (THUMBNAIL_CONCURRENCY): retry after Retry-After."},
})
def record_thumbnail(recid: int, size: int) -> Response:
    """A PNG thumbnail (sizes 10, 50, 100, 250, 750, 1200) of an image record's first image file; 404 to those
    who may not read its files, 422 for an image too large to decode, 503 while the decoding slots are busy."""
    row, objs = read.readable_files(services().db, services().settings, recid, identity())
    images = [o for o in objs if o["mimetype"].startswith("image/")]
    if not images:
        raise NotFound("The record has no image to show.")
    settings, store = services().settings, services().files
    path = thumbnail(store.path(images[0]["uri"]), images[0]["file_id"], size,
                     os.path.join(settings.INSTANCE_PATH, "thumbnails"),
                     max_pixels=settings.THUMBNAIL_MAX_PIXELS, concurrency=settings.THUMBNAIL_CONCURRENCY)  # fmt: skip
    response = send_file(path, mimetype="image/png", conditional=True, max_age=86400)
    if not can_read_files(row, None):
        # Restricted, closed or still embargoed: only this caller may see it, so no shared cache may keep it, and
        # a browser asks again (a cheap 304 while it may) so that a withdrawn access is noticed.
        response.cache_control.public = False
        response.cache_control.max_age = None
        response.cache_control.private = True
        response.cache_control.no_cache = True
        response.vary.add("Authorization")
    return response


def install_limits(limiter: RateLimiter, settings: Settings) -> None:
    """Thumbnails have their own limit besides the application-wide one (call after registering)."""
    limiter.limit(settings.RATELIMIT_THUMBNAILS)(bp)
