"""`/api/records/<id>/files-archive` (InvenioRDM's name): every file of a record the caller may read, as one zip
streamed while it is made (`repository.files.archive`), as a BagIt bag with `?format=bagit`, or as an RO-Crate
(`ro-crate-metadata.json` at the root beside the files) with `?format=rocrate`."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from flask import Blueprint, Response, redirect, request
from werkzeug.wrappers import Response as BaseResponse

import serializers
from repository import urls
from repository.errors import BadRequest, Conflict
from repository.files import archive
from repository.files.buckets import ObjectRow
from repository.records import read
from repository.records.access import row_files_open
from repository.records.file_details import with_file_details
from repository.records.render_context import render_context
from repository.web.openapi import doc
from repository.web.request import identity, services
from repository.web.usage import visit
from serializers import rocrate

bp = Blueprint("archive", __name__, url_prefix="/api/records")

FORMATS = ("zip", "bagit", "rocrate")


def _record(recid: int) -> dict[str, Any]:
    """The record as the caller may read it (its files included: the archive is answered to readers of them)."""
    s = services()
    found = read.read_record(s.db, s.settings, s.search, s.record_cache, s.stats, recid, identity())  # not a view
    assert found.record is not None  # no ETag to match: always read
    return found.record


def _bag_metadata(recid: int) -> dict[str, bytes]:
    """The record as DataCite XML and as the API's JSON, for the bag's metadata/ directory."""
    s = services()
    record = _record(recid)
    context = render_context(s.settings, s.db)
    return {"datacite.xml": serializers.REGISTRY["datacite"].render(record, context),
            "record.json": serializers.REGISTRY["v1"].render(record, context)}


def _crate_metadata(recid: int, objs: list[ObjectRow]) -> dict[str, bytes]:
    """The RO-Crate's `ro-crate-metadata.json`, describing the files the archive holds (`objs`) at its root.
    409 when a file of the record has that name itself: the crate could not hold both."""
    if any(obj["key"] == rocrate.METADATA_NAME for obj in objs):
        raise Conflict(f"This record has a file named {rocrate.METADATA_NAME}: its files cannot be packaged as an "
                       "RO-Crate, whose metadata file has that name. Download them as a zip or a BagIt bag.")
    s = services()
    record = with_file_details(s.db, s.files, _record(recid))
    return {rocrate.METADATA_NAME: rocrate.render_packaged(record, render_context(s.settings, s.db))}


@bp.get("/<int:recid>/files-archive")
@doc(
    parameters=[{"name": "format", "in": "query", "schema": {"type": "string", "enum": list(FORMATS)},
                 "description": "zip (the default): the files at the archive's root; bagit: a BagIt bag (RFC 8493) "
                                "with MD5 and SHA-256 manifests and the record's DataCite XML and JSON; rocrate: "
                                "an RO-Crate 1.1, the files with ro-crate-metadata.json at the root"}],
    responses={
        "200": {"description": "A zip of the record's files (stored, ZIP64 when large; Content-Length known)",
                "content": {"application/zip": {"schema": {"type": "string", "format": "binary"}}}},
        "301": {"description": "Concept id: the archive of its latest version"},
        "400": {"description": "Unknown format"},
        "409": {"description": "rocrate: a file of the record is named ro-crate-metadata.json"},
        "404": {"description": "No such record, or its files are not available to the caller"},
        "410": {"description": "The record was deleted"},
        "503": {"description": "A file's contents are missing on disk"},
    },
)
def files_archive(recid: int) -> BaseResponse:
    """All the files of a record the caller may read, as one zip built while it is sent: 404 to a caller who may
    not read them (as a file download answers), 410 once deleted, 301 from a concept id, 400 for an unknown
    `format`, 409 for an RO-Crate of a record with a file named as the crate's metadata file. A GET counts one download of each file it holds (usage statistics); a HEAD counts nothing."""
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
    beside = _crate_metadata(recid, objs) if form == "rocrate" else None
    built = archive.record_archive(s.files, row, objs, bag=bag, source=s.settings.REPOSITORY_NAME, beside=beside)
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
