"""`/api/files/<bucket>`: the bucket interface — streamed uploads of any size, listing, download, delete.

A deposit's bucket is its owner's; a record's bucket is locked and readable as the record's access rules say.
Anyone else gets 404, so the existence of a hidden file never shows.
"""

from __future__ import annotations

import re

from flask import Blueprint, Response, request
from werkzeug.routing import PathConverter

from repository.datadesc import checks
from repository.deposits.representation import object_json
from repository.errors import BadRequest, Forbidden, NotFound
from repository.files import buckets, digests, owners
from repository.files.downloads import send_object
from repository.records.access import files_open
from repository.timeutil import isoformat
from repository.web.openapi import doc
from repository.web.request import caller, identity, json_response, require_scope, services
from repository.web.usage import starts_a_download, visit

bp = Blueprint("files", __name__, url_prefix="/api/files")


class KeyConverter(PathConverter):
    """`path` matching line breaks too, so a key holding one gets the 400 of `check_key`, not a routing 404."""

    regex = "[^/][\\s\\S]*?"


def _version(obj: buckets.ObjectRow) -> buckets.ObjectRow:
    """`obj` unless `?versionId=` names another version: a replaced version is not kept, so that is a 404 (never
    other bytes under a version id)."""
    wanted = request.args.get("versionId")
    if wanted is not None and wanted != obj["version_id"]:
        raise NotFound("This version of the file does not exist (it was replaced or deleted).")
    return obj


@bp.put("/<bucket_id>/<key:key>")
@require_scope("deposit:write")
@doc(
    request={"content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}},
    responses={"200": {"description": "The bucket file object."}},
)
def put_object(bucket_id: str, key: str) -> Response:
    """Upload the raw body as the last segment of `key` (streamed, any size; a second PUT replaces the file).

    400 for a bad name, a `Content-Range` (a partial body is never stored as a whole file: RFC 9110 §14.4) or a
    `Content-MD5`/`Content-Digest` that is malformed or differs from the bytes received (nothing is stored);
    403 once locked."""
    key = buckets.upload_key(key)
    if "Content-Range" in request.headers:
        raise BadRequest(
            "A PUT stores a whole file: Content-Range (a partial body) is not accepted. Send the whole file.",
            errors=[{"field": "Content-Range", "message": "Not accepted on a PUT."}],
        )
    if not re.fullmatch(r"\d{0,18}", request.headers.get("Content-Length", "")):
        # Werkzeug would read such a body as empty: an acknowledged upload must never be other bytes.
        raise BadRequest("Malformed Content-Length header.", errors=[{"field": "Content-Length", "message": "Invalid."}])
    expected = digests.expected_digests(request.headers)
    store = services().files
    with services().db.read() as conn:
        owners.writable_deposit(conn, bucket_id, caller())
        if buckets.get_bucket(conn, bucket_id)["locked"]:
            raise Forbidden("Bucket is locked for modifications.")
    body = digests.HashingReader(request.stream, list(expected)) if expected else request.stream
    stored = store.write(body)
    try:
        digests.verify(expected, stored.checksum.removeprefix("md5:"), body)
        with services().db.write() as conn:
            obj, replaced = buckets.put_object(conn, bucket_id, key, stored)
            if replaced:
                buckets.release_files(conn, store, [replaced])
            checks.file_changed(conn, store, bucket_id, key)
    except BaseException:
        store.remove(stored.uri)
        raise
    return json_response(object_json(services().settings.BASE_URL, bucket_id, obj))


@bp.get("/<bucket_id>")
@doc(responses={"200": {"description": "The bucket and its contents."}})
def get_bucket(bucket_id: str) -> Response:
    """The bucket with its file objects (`contents`)."""
    base = services().settings.BASE_URL
    with services().db.read() as conn:
        owners.readable_record(conn, bucket_id, identity())
        bucket = buckets.get_bucket(conn, bucket_id)
        objs = buckets.list_objects(conn, bucket_id)
    url = f"{base}/api/files/{bucket_id}"
    return json_response(
        {
            "id": bucket_id,
            "size": sum(o["size"] for o in objs),
            "locked": bucket["locked"],
            "created": isoformat(bucket["created"]),
            "updated": isoformat(bucket["updated"]),
            "links": {"self": url, "versions": f"{url}?versions", "uploads": f"{url}?uploads"},
            "contents": [object_json(base, bucket_id, o) for o in objs],
        }
    )


@bp.get("/<bucket_id>/<key:key>")
@doc(
    parameters=[
        {"name": "download", "in": "query", "schema": {"type": "string"}, "description": "as attachment"},
        {"name": "versionId", "in": "query", "schema": {"type": "string"}, "description": "only this version"},
    ],
    responses={
        "200": {"description": "The file's bytes (Range and conditional requests supported)."},
        "206": {"description": "The range asked for."},
        "304": {"description": "Not modified."},
        "412": {"description": "A precondition (If-Match, If-Unmodified-Since) failed."},
        "416": {"description": "The range cannot be satisfied."},
    },
)
def download(bucket_id: str, key: str) -> Response:
    """Download a file; open records to everyone, others to their owner and grant holders only (404 to the rest,
    `Cache-Control: private`). With
    `?versionId=` only that version's bytes, 404 once it is no longer kept."""
    with services().db.read() as conn:
        record = owners.readable_record(conn, bucket_id, identity())
        obj = _version(buckets.get_object(conn, bucket_id, key))
    response = send_object(services().files, obj, as_attachment="download" in request.args)
    if record is None or not files_open(record["metadata"]):
        # Only this caller may read it (an owner, a grant holder): never kept by a shared cache.
        response.cache_control.public = False
        response.cache_control.private = True
        response.vary.add("Authorization")
    if record is not None and starts_a_download(response):
        services().stats.download(record, obj["key"], obj["size"], visit())
    return response


@bp.delete("/<bucket_id>/<key:key>")
@require_scope("deposit:write")
@doc(responses={"204": {"description": "Deleted."}})
def delete_object(bucket_id: str, key: str) -> Response:
    """Remove a file from a draft's bucket: 204; 403 once locked; 404 if absent (or `?versionId=` names a
    version that is not the current one)."""
    store = services().files
    with services().db.write() as conn:
        owners.writable_deposit(conn, bucket_id, caller())
        key = _version(buckets.get_object(conn, bucket_id, key))["key"]
        freed = buckets.delete_object(conn, bucket_id, key)
        buckets.release_files(conn, store, [freed])
        checks.file_changed(conn, store, bucket_id, key)
    return Response(status=204)
