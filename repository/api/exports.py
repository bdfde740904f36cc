"""`/api/exports/`: the latest full public exports and their files (docs/api/exports.md)."""

from __future__ import annotations

from flask import Blueprint, Response

from repository import urls
from repository.errors import NotFound
from repository.exports import folder
from repository.web.downloads import send_path
from repository.web.openapi import doc
from repository.web.request import json_response, services

bp = Blueprint("exports", __name__, url_prefix="/api/exports")

MEDIA_TYPES = {folder.JSONL: "application/gzip", folder.DATACITE: "application/gzip",
               folder.MANIFEST: "application/json"}


@bp.get("/")
@doc(responses={"200": {"description": "The latest full public exports, newest first, with their manifests and "
                                       "the links to their files."}})
def list_exports() -> Response:
    """The latest complete exports, newest first (an empty list before the first one): 200."""
    settings = services().settings
    return json_response({"exports": folder.listing(settings.EXPORTS_ROOT, settings.BASE_URL),
                          "links": {"self": urls.exports_api(settings.BASE_URL)}})


@bp.get("/<export_id>/<name>")
@doc(responses={"200": {"description": "The file, whole."}, "206": {"description": "One byte range of it."},
                "304": {"description": "Not modified (If-None-Match, If-Modified-Since)."},
                "404": {"description": "No such export or file."}, "412": {"description": "A precondition failed."},
                "416": {"description": "The range cannot be satisfied."}})
def download(export_id: str, name: str) -> Response:
    """One file of a complete export, with Range and conditional requests (its ETag is its SHA-256, as the
    manifest gives it): 200, 206, 304, 404 for an unknown export or file, 412, 416."""
    root = services().settings.EXPORTS_ROOT
    path = folder.file_path(root, export_id, name)
    if path is None:
        raise NotFound("No such export file: the list at /api/exports/ names the files of the latest exports.")
    manifest = folder.manifest(root, export_id) or {}
    sha256 = manifest.get("files", {}).get(name, {}).get("sha256")
    etag = f"sha256:{sha256}" if sha256 else f"{export_id}-{name}"
    try:
        return send_path(path, name, MEDIA_TYPES[name], etag, folder.taken_at(export_id), as_attachment=True,
                         sha256=sha256)
    except FileNotFoundError as exc:  # pruned between the look-up and the opening
        raise NotFound("That export was removed meanwhile: /api/exports/ lists the latest.") from exc
