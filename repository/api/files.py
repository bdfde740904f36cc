"""`/api/files/<bucket>`: the bucket interface — streamed uploads of any size, multipart uploads (the same URLs with
`?uploads`, `?uploadId=`, `?partNumber=`: repository.files.multipart), listing, download, delete.

A deposit's bucket is its owner's; a record's bucket is locked and readable as the record's access rules say.
Anyone else gets 404, so the existence of a hidden file never shows.
"""

from __future__ import annotations

import re

from flask import Blueprint, Response, request
from werkzeug.routing import PathConverter

from repository import urls
from repository.accounts.tokens import Identity
from repository.datadesc import checks
from repository.deposits import filefix
from repository.deposits.representation import object_json
from repository.errors import BadRequest, Forbidden, NotFound, PayloadTooLarge
from repository.files import buckets, digests, multipart, owners, quotas, upload_rows
from repository.files.keys import upload_key
from repository.records.access import readable_record, row_files_open
from repository.storage import Connection
from repository.timeutil import isoformat
from repository.web import signposting
from repository.web.downloads import send_object
from repository.web.openapi import doc
from repository.web.request import caller, identity, json_body, json_response, require_scope, services
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


UPLOAD_ID = {"name": "uploadId", "in": "query", "schema": {"type": "string"},
             "description": "a multipart upload (its `id`, from POST ?uploads)"}


def _upload_id() -> str | None:
    return request.args.get("uploadId")


def _uploader() -> Identity:
    """The caller of a multipart read (the parts, the uploads in progress): the writer of the bucket."""
    who = caller()
    if not who.has_scope("deposit:write"):
        raise Forbidden("The access token lacks the scope 'deposit:write' needed for this request.")
    return who


@bp.put("/<bucket_id>/<key:key>")
@require_scope("deposit:write")
@doc(
    parameters=[UPLOAD_ID, {"name": "partNumber", "in": "query", "schema": {"type": "integer", "minimum": 0},
                            "description": "with uploadId: the part sent (numbered from 0)"}],
    request={"content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}},
    responses={"200": {"description": "The bucket file object; with `?uploadId=&partNumber=`, the part."}},
)
def put_object(bucket_id: str, key: str) -> Response:
    """Upload the raw body as the last segment of `key` (streamed, any size; a second PUT replaces the file); with
    `?uploadId=&partNumber=`, one part of a multipart upload (exactly `part_size` bytes but the last; sent again,
    it replaces the part).

    Both answer 400 for a bad name, a `Content-Range` (a partial body is never stored as a whole file: RFC 9110
    §14.4) or a `Content-MD5`/`Content-Digest` that is malformed or differs from the bytes received (nothing is
    stored); 403 once locked. A part also answers 400 for a wrong size or number, 404 for an unknown upload and
    409 once the upload is completed."""
    if "Content-Range" in request.headers:
        raise BadRequest(
            "A PUT stores a whole file: Content-Range (a partial body) is not accepted. Send the whole file.",
            errors=[{"field": "Content-Range", "message": "Not accepted on a PUT."}],
        )
    if not re.fullmatch(r"\d{0,18}", request.headers.get("Content-Length", "")):
        # Werkzeug would read such a body as empty: an acknowledged upload must never be other bytes.
        raise BadRequest("Malformed Content-Length header.", errors=[{"field": "Content-Length", "message": "Invalid."}])
    upload_id = _upload_id()
    if upload_id is not None:
        upload, part = multipart.put_part(
            services().db, services().files, bucket_id, key, upload_id, request.args.get("partNumber", ""),
            request.stream, request.content_length, request.headers, caller())
        return json_response(multipart.part_json(upload, part))
    key = upload_key(key)
    expected = digests.expected_digests(request.headers)
    store, quota = services().files, quotas.Quota.of(services().settings)
    with services().db.read() as conn:
        dep = owners.writable_deposit(conn, bucket_id, caller())
        if buckets.get_bucket(conn, bucket_id)["locked"]:
            raise Forbidden("Bucket is locked for modifications.")
        credit = quotas.replaced_size(conn, bucket_id, key)
        if request.content_length is not None:  # known: refused before a byte is read
            quotas.check(conn, quota, bucket_id, request.content_length, "Content-Length", credit)
        room = quotas.room(conn, quota, bucket_id, credit)
    body = digests.HashingReader(request.stream, list(expected)) if expected else request.stream
    try:  # a chunked body stops at the room left (its temporary file removed)
        stored = store.write(body, limit=None if room is None else room[0])
    except PayloadTooLarge:
        if room is None:
            raise
        raise quotas.exceeded(room[1], None, "body") from None
    try:
        digests.verify(expected, {"md5": stored.checksum.removeprefix("md5:"), "sha256": stored.sha256}, body)
        with services().db.write() as conn:
            filefix.refuse_same_file(conn, dep, key, stored.checksum)
            obj, replaced = buckets.put_object(conn, bucket_id, key, stored, quota=quota)
            if replaced:
                buckets.release_files(conn, store, [replaced])
            checks.file_changed(conn, store, bucket_id, key)
    except BaseException:
        store.remove(stored.uri)
        raise
    return json_response(object_json(services().settings.BASE_URL, bucket_id, obj))


def _positive(name: str, body: dict) -> int:
    value = request.args.get(name, body.get(name))
    if isinstance(value, str) and re.fullmatch(r"\d{1,18}", value):
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise BadRequest(f"`{name}` is required: a whole number of bytes (in the query or a JSON body).",
                         errors=[{"field": name, "message": "Missing or invalid."}])
    return value


@bp.post("/<bucket_id>/<key:key>")
@require_scope("deposit:write")
@doc(
    parameters=[
        {"name": "uploads", "in": "query", "schema": {"type": "string"}, "allowEmptyValue": True,
         "description": "start a multipart upload (with size and partSize)"},
        {"name": "size", "in": "query", "schema": {"type": "integer"}, "description": "with uploads: total bytes"},
        {"name": "partSize", "in": "query", "schema": {"type": "integer"},
         "description": "with uploads: bytes of every part but the last"},
        {**UPLOAD_ID, "description": "complete this multipart upload"},
    ],
    responses={"200": {"description": "?uploads: the multipart upload; ?uploadId=: the bucket file object made."}},
)
def multipart_post(bucket_id: str, key: str) -> Response:
    """Start a multipart upload (`?uploads&size=&partSize=`, or those in a JSON body) or complete one
    (`?uploadId=`).

    Complete answers 400 while parts are missing (listed), 409 when it is completed already, 403 once the bucket
    is locked; the file appears whole, with the MD5 and SHA-256 of all its bytes, or not at all."""
    base, svc = services().settings.BASE_URL, services()
    upload_id = _upload_id()
    if upload_id is not None:
        store = svc.files

        def changed(conn: Connection, obj: buckets.ObjectRow) -> None:
            # Raised here, the completion rolls back: a fixed version's file with its published content is a no-op.
            filefix.refuse_same_file(conn, owners.writable_deposit(conn, bucket_id, caller()), obj["key"],
                                     obj["checksum"])
            checks.file_changed(conn, store, bucket_id, obj["key"])

        obj = multipart.complete(svc.db, store, bucket_id, key, upload_id, caller(), changed,
                                 quotas.Quota.of(svc.settings))
        return json_response(object_json(base, bucket_id, obj))
    if "uploads" not in request.args:
        raise BadRequest("A POST to a file starts a multipart upload (`?uploads&size=&partSize=`) or completes one "
                         "(`?uploadId=`).")
    body = json_body() if request.content_length else {}
    if not isinstance(body, dict):
        raise BadRequest("The JSON body must be an object: {\"size\": ..., \"partSize\": ...}.")
    upload = multipart.initiate(svc.db, svc.files, bucket_id, key, _positive("size", body),
                                _positive("partSize", body), caller(), svc.settings.MULTIPART_EXPIRY_DAYS,
                                quotas.Quota.of(svc.settings), svc.settings.MULTIPART_USER_RESERVED_BYTES,
                                svc.settings.READY_MIN_FREE_BYTES)
    return json_response(multipart.upload_json(base, upload))


def _list_parts(bucket_id: str, key: str, upload_id: str) -> Response:
    upload, parts = multipart.parts(services().db, bucket_id, key, upload_id, _uploader())
    have = {p["part_number"] for p in parts}
    body = multipart.upload_json(services().settings.BASE_URL, upload)
    body["parts"] = [multipart.part_json(upload, p) for p in parts]
    body["missing"] = [n for n in range(upload_rows.part_count(upload)) if n not in have]
    return json_response(body)


@bp.get("/<bucket_id>")
@doc(
    parameters=[{"name": "uploads", "in": "query", "schema": {"type": "string"}, "allowEmptyValue": True,
                 "description": "the caller's multipart uploads in progress instead"}],
    responses={"200": {"description": "The bucket and its contents (with ?uploads: the uploads in progress)."}},
)
def get_bucket(bucket_id: str) -> Response:
    """The bucket with its file objects (`contents`); with `?uploads`, the caller's multipart uploads in progress
    (401 without a token)."""
    base = services().settings.BASE_URL
    if "uploads" in request.args:
        uploads = multipart.in_progress(services().db, bucket_id, _uploader())
        return json_response({"uploads": [multipart.upload_json(base, u) for u in uploads]})
    with services().db.read() as conn:
        readable_record(conn, bucket_id, identity())
        bucket = buckets.get_bucket(conn, bucket_id)
        objs = buckets.list_objects(conn, bucket_id)
    url = urls.bucket(base, bucket_id)
    return json_response(
        {
            "id": bucket_id,
            "size": sum(o["size"] for o in objs),
            # The reference's two fields: its per-bucket quota is also its largest file (null: no limit).
            "quota_size": services().settings.BUCKET_QUOTA_BYTES or None,
            "max_file_size": services().settings.BUCKET_QUOTA_BYTES or None,
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
        {**UPLOAD_ID, "description": "list this multipart upload's parts instead (to resume it)"},
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
    `?versionId=` only that version's bytes, 404 once it is no longer kept. With `?uploadId=`, the multipart upload
    with its parts received whole and the numbers of those `missing` (its owner only)."""
    upload_id = _upload_id()
    if upload_id is not None:
        return _list_parts(bucket_id, key, upload_id)
    with services().db.read() as conn:
        record = readable_record(conn, bucket_id, identity())
        obj = _version(buckets.get_object(conn, bucket_id, key))
    response = send_object(services().files, obj, as_attachment="download" in request.args,
                           presigned=services().settings.S3_PRESIGNED_DOWNLOADS)
    if record is None or not row_files_open(record):
        # Only this caller may read it (an owner, a grant holder): never kept by a shared cache.
        response.cache_control.public = False
        response.cache_control.private = True
        response.vary.add("Authorization")
    if record is not None:  # a record's file: FAIR Signposting's content resource
        response.headers["Link"] = signposting.file_link_header(record["id"], services().settings)
    if record is not None and starts_a_download(response):
        services().stats.download(record, obj["key"], obj["size"], visit())
    return response


@bp.delete("/<bucket_id>/<key:key>")
@require_scope("deposit:write")
@doc(parameters=[{**UPLOAD_ID, "description": "abort this multipart upload instead"}],
     responses={"204": {"description": "Deleted (or aborted)."}})
def delete_object(bucket_id: str, key: str) -> Response:
    """Remove a file from a draft's bucket: 204; 403 once locked; 404 if absent (or `?versionId=` names a
    version that is not the current one). With `?uploadId=`, abort that multipart upload: its parts are removed
    (204; 409 once completed)."""
    store = services().files
    upload_id = _upload_id()
    if upload_id is not None:
        multipart.abort(services().db, store, bucket_id, key, upload_id, caller())
        return Response(status=204)
    with services().db.write() as conn:
        owners.writable_deposit(conn, bucket_id, caller())
        key = _version(buckets.get_object(conn, bucket_id, key))["key"]
        freed = buckets.delete_object(conn, bucket_id, key)
        buckets.release_files(conn, store, [freed])
        checks.file_changed(conn, store, bucket_id, key)
    return Response(status=204)
