"""`/api/records/<id>/files-archive` (InvenioRDM's name): every file of a record the caller may read, as one zip
streamed while it is made (`repository.files.archive`), or as a BagIt bag with `?format=bagit`."""

from __future__ import annotations

from urllib.parse import urlencode

from flask import Blueprint, Response, redirect, request
from werkzeug.wrappers import Response as BaseResponse

import serializers
from repository import urls
from repository.errors import BadRequest
from repository.files import archive
from repository.records import read
from repository.records.access import row_files_open
from repository.records.render_context import render_context
from repository.web.openapi import doc
from repository.web.request import identity, services
from repository.web.usage import visit

bp = Blueprint("archive", __name__, url_prefix="/api/records")

FORMATS = ("zip", "bagit")


def _bag_metadata(recid: int) -> dict[str, bytes]:
    """The record as DataCite XML and as the API's JSON, for the bag's metadata/ directory."""
    s = services()
    found = read.read_record(s.db, s.settings, s.search, s.record_cache, s.stats, recid, identity())  # not a view
    assert found.record is not None  # no ETag to match: always read
    context = render_context(s.settings, s.db)
    return {"datacite.xml": serializers.REGISTRY["datacite"].render(found.record, context),
            "record.json": serializers.REGISTRY["v1"].render(found.record, context)}


@bp.get("/<int:recid>/files-archive")
@doc(
    parameters=[{"name": "format", "in": "query", "schema": {"type": "string", "enum": list(FORMATS)},
                 "description": "zip (the default): the files at the archive's root; bagit: a BagIt bag (RFC 8493) "
                                "with MD5 and SHA-256 manifests and the record's DataCite XML and JSON"}],
    responses={
        "200": {"description": "A zip of the record's files (stored, ZIP64 when large; Content-Length known)",
                "content": {"application/zip": {"schema": {"type": "string", "format": "binary"}}}},
        "301": {"description": "Concept id: the archive of its latest version"},
        "400": {"description": "Unknown format"},
        "404": {"description": "No such record, or its files are not available to the caller"},
        "410": {"description": "The record was deleted"},
        "503": {"description": "A file's contents are missing on disk"},
    },
)
def files_archive(recid: int) -> BaseResponse:
    """All the files of a record the caller may read, as one zip built while it is sent: 404 to a caller who may
    not read them (as a file download answers), 410 once deleted, 301 from a concept id, 400 for an unknown
    `format`. A GET counts one download of each file it holds (usage statistics); a HEAD counts nothing."""
    form = request.args.get("format", "zip")
    if form not in FORMATS:
        raise BadRequest(f"Unknown archive format {form!r}: expected one of {', '.join(FORMATS)}.",
                         errors=[{"field": "format", "message": f"Expected one of {', '.join(FORMATS)}."}])
    s = services()
    try:
        row, objs = read.readable_files(s.db, s.settings, recid, identity())
    except read.Moved as moved:
        query = f"?{urlencode(request.args)}" if request.args else ""
        return redirect(urls.record_archive(s.settings.BASE_URL, moved.recid, query), 301)
    bag = _bag_metadata(recid) if form == "bagit" else None
    built = archive.record_archive(s.files, row, objs, bag=bag, source=s.settings.REPOSITORY_NAME)
    response = Response(built.chunks(), mimetype="application/zip", direct_passthrough=True)
    response.content_length = built.size
    response.headers["Content-Disposition"] = f'attachment; filename="{built.name}"'
    response.headers["X-Content-Type-Options"] = "nosniff"
    if row_files_open(row):
        response.cache_control.public = True
        response.cache_control.max_age = 0
    else:
        # Only this caller may read it (an owner, a grant holder): never kept by a shared cache.
        response.cache_control.private = True
        response.vary.add("Authorization")
        response.vary.add("Cookie")
    if request.method == "GET":
        # As many requests as files, with their bytes as volume: what downloading each of them would count.
        who = visit()
        for obj in built.files:
            s.stats.download(row, obj["key"], obj["size"], who)
    return response
