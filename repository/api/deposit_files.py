"""`/api/deposit/depositions/<id>/files`: the old files interface (multipart upload up to 100 MB, sort, rename)."""

from __future__ import annotations

from flask import Blueprint, Response, request
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.utils import secure_filename

from repository.datadesc import checks
from repository.deposits import actions, filefix
from repository.deposits.representation import file_json
from repository.errors import BadRequest, NotFound, PayloadTooLarge, UnsupportedMediaType
from repository.files import buckets, quotas
from repository.files.keys import check_key
from repository.storage import Connection
from repository.web.openapi import doc
from repository.web.request import caller, json_body, json_response, require_scope, services

bp = Blueprint("deposit_files", __name__, url_prefix="/api/deposit/depositions/<int:dep_id>/files")

MULTIPART_OVERHEAD = 64 * 1024  # form fields and boundaries around the file itself


def _deposit(conn: Connection, dep_id: int) -> dict:
    return actions.get_deposit(conn, dep_id, caller().user_id)


def _find(conn: Connection, dep: dict, file_id: str) -> buckets.ObjectRow:
    """A file of the deposit by its id or, as the reference allows, by its name."""
    for obj in buckets.list_objects(conn, dep["bucket_id"]):
        if obj["file_id"] == file_id or obj["key"] == file_id:
            return obj
    raise NotFound("File not found.")


def _file(dep: dict, obj: buckets.ObjectRow) -> dict:
    return file_json(services().settings.BASE_URL, dep["id"], dep["bucket_id"], obj)


@bp.get("/")
@require_scope()
def list_files(dep_id: int) -> Response:
    """The deposition's files, in their set order."""
    with services().db.read() as conn:
        dep = _deposit(conn, dep_id)
        return json_response([_file(dep, o) for o in buckets.list_objects(conn, dep["bucket_id"])])


@bp.post("/")
@require_scope("deposit:write")
@doc(
    request={
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "properties": {"file": {"type": "string", "format": "binary"}, "name": {"type": "string"}},
                }
            }
        }
    },
    responses={
        "201": {"description": "The new file (its name under `name` too)."},
        "415": {"description": "The body is not multipart/form-data."},
    },
)
def upload(dep_id: int) -> Response:
    """Upload one file (multipart `file`, with `name` or `filename`) of at most 100 MB; 413 beyond."""
    settings, store = services().settings, services().files
    limit = settings.MAX_MULTIPART_BYTES
    if request.content_length is not None and request.content_length > limit + MULTIPART_OVERHEAD:
        raise PayloadTooLarge(f"The file is larger than the limit of {limit} bytes of this interface; use the bucket.")
    quota = quotas.Quota.of(settings)
    with services().db.read() as conn:
        dep = _deposit(conn, dep_id)
        buckets.get_bucket(conn, dep["bucket_id"])
        if request.content_length is not None:  # the file is at least the body less the form around it
            quotas.check(conn, quota, dep["bucket_id"], max(request.content_length - MULTIPART_OVERHEAD, 0), "file")
    if request.mimetype != "multipart/form-data":
        shown = request.mimetype or "none"
        raise UnsupportedMediaType(
            f'Unsupported media type "{shown}": send the file as multipart/form-data with a `file` part.'
        )
    request.max_content_length = limit + MULTIPART_OVERHEAD
    try:
        upload = request.files.get("file")
        name = request.form.get("name") or request.form.get("filename")
    except RequestEntityTooLarge:
        raise PayloadTooLarge(f"The file is larger than the limit of {limit} bytes of this interface.") from None
    if upload is None:
        raise BadRequest("The `file` part is missing.", errors=[{"field": "file", "message": "Missing file."}])
    key = secure_filename(name or upload.filename or "")
    if not key:
        raise BadRequest("A file name is needed: send it in `name`.", errors=[{"field": "name", "message": "Missing name."}])
    key = check_key(key)
    stored = store.write(upload.stream, limit=limit)
    try:
        with services().db.write() as conn:
            filefix.refuse_same_file(conn, dep, key, stored.checksum)
            obj, _ = buckets.put_object(conn, dep["bucket_id"], key, stored, replace=False, quota=quota, field="file")
            checks.file_changed(conn, store, dep["bucket_id"], key)
    except BaseException:
        store.remove(stored.uri)
        raise
    body = _file(dep, obj)
    body["name"] = key
    return json_response(body, 201)


@bp.put("/")
@require_scope("deposit:write")
@doc(request={"content": {"application/json": {"schema": {"type": "array", "items": {"type": "object"}}}}})
def sort_files(dep_id: int) -> Response:
    """Set the file order from `[{"id": ...}, ...]`; the first file is shown first."""
    body = json_body()
    if not isinstance(body, list) or not all(isinstance(i, dict) and isinstance(i.get("id"), str) for i in body):
        raise BadRequest("Wrong file on input: send an array of objects with the file ids, e.g. [{\"id\": \"...\"}].")
    with services().db.write() as conn:
        dep = _deposit(conn, dep_id)
        buckets.reorder(conn, dep["bucket_id"], [item["id"] for item in body])
        return json_response([_file(dep, o) for o in buckets.list_objects(conn, dep["bucket_id"])])


@bp.get("/<file_id>")
@require_scope()
def get_file(dep_id: int, file_id: str) -> Response:
    """One file's description (not its content: see links.download)."""
    with services().db.read() as conn:
        dep = _deposit(conn, dep_id)
        return json_response(_file(dep, _find(conn, dep, file_id)))


@bp.put("/<file_id>")
@require_scope("deposit:write")
@doc(request={"content": {"application/json": {"schema": {"type": "object", "properties": {"name": {"type": "string"}}}}}})
def rename_file(dep_id: int, file_id: str) -> Response:
    """Rename a file with `{"name": "new"}` (or `{"filename": ...}`); only renaming is supported."""
    body = json_body()
    new = body.get("name") or body.get("filename") if isinstance(body, dict) else None
    if not isinstance(new, str) or not secure_filename(new):
        raise BadRequest("Wrong file on input: send {\"name\": \"<new file name>\"}.")
    with services().db.write() as conn:
        dep = _deposit(conn, dep_id)
        obj = buckets.rename_object(conn, dep["bucket_id"], _find(conn, dep, file_id)["key"], secure_filename(new))
        return json_response(_file(dep, obj))


@bp.delete("/<file_id>")
@require_scope("deposit:write")
@doc(responses={"204": {"description": "Deleted."}})
def delete_file(dep_id: int, file_id: str) -> Response:
    """Delete a file: 204; 403 once the deposition is published; 404 if absent."""
    store = services().files
    with services().db.write() as conn:
        dep = _deposit(conn, dep_id)
        freed = buckets.delete_object(conn, dep["bucket_id"], _find(conn, dep, file_id)["key"])
        buckets.release_files(conn, store, [freed])
        checks.file_changed(conn, store, dep["bucket_id"])
    return Response(status=204)
