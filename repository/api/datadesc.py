"""Data-description documents over HTTP: validation reports and table previews of deposit and record files,
validation without depositing (`/api/datadesc/validate`) and the two schemas (`/schemas/...`)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from flask import Blueprint, Response, request
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.utils import secure_filename

from repository import deposits, files
from repository import records as records_mod
from repository.access import can_read_files
from repository.datadesc import detect_kind, directory_files, query_preview, schema_bytes, validate_document
from repository.datadesc.report import MAX_DOCUMENT_BYTES
from repository.errors import BadRequest, Gone, NotFound, PayloadTooLarge, UnsupportedMediaType
from repository.openapi import doc
from repository.validations import previews, rows
from repository.web import identity, json_response, require_scope, services

bp = Blueprint("datadesc", __name__)

KINDS = ("software_corpus", "datapackage")
RESERVED_ARGS = {"limit", "offset", "sort", "access_token", "prettyprint"}
PREVIEW_PARAMS = [
    {"name": "limit", "in": "query", "schema": {"type": "integer", "default": 20, "maximum": 1000}},
    {"name": "offset", "in": "query", "schema": {"type": "integer", "default": 0}},
    {"name": "sort", "in": "query", "schema": {"type": "string"}, "description": "a column; `-column` descends"},
    {"name": "<column>", "in": "query", "schema": {"type": "string"}, "description": "rows whose column equals it"},
]
REPORT = {"200": {"description": "`{kind, status: pending|valid|invalid, errors: [...], summary, file_id, filename}`."}}
PREVIEW = {"200": {"description": "`{columns: [{name, type}], rows, total, limit, offset}`."}}


def _find(objs: list[dict], file_id: str) -> dict:
    """A file of the bucket by its id or, as the files interface allows, by its name."""
    for obj in objs:
        if obj["file_id"] == file_id or obj["key"] == file_id:
            return obj
    raise NotFound("File not found.")


def _deposit_file(dep_id: int, file_id: str) -> tuple[str, list[dict], dict]:
    """(bucket, its files, the file) of the caller's deposit; 404 for anyone else's."""
    with services().db.read() as conn:
        dep = deposits.get_deposit(conn, dep_id, identity().user_id)
        objs = files.list_objects(conn, dep["bucket_id"])
    return dep["bucket_id"], objs, _find(objs, file_id)


def _record_file(recid: int, file_id: str) -> tuple[str, list[dict], dict]:
    """(bucket, its files, the file) of a record whose files the caller may read; 404 otherwise, 410 if deleted."""
    with services().db.read() as conn:
        found = records_mod.get_rows(conn, [recid])
        if not found:
            raise NotFound("PID does not exist.")
        record = found[0]
        if record["deleted"] is not None:
            raise Gone("PID has been deleted.")
        if not can_read_files(record, identity()):
            raise NotFound("The record's files are not available to you.")
        objs = files.list_objects(conn, record["bucket_id"])
    return record["bucket_id"], objs, _find(objs, file_id)


def _report(bucket_id: str, objs: list[dict], obj: dict) -> Response:
    """The file's validation report; a document never examined yet (a new version's), or whose tables were renamed,
    becomes pending now."""
    s = services()
    with s.db.read() as conn:
        row = rows.get_row(conn, bucket_id, obj)
    stale = row is not None and rows.is_stale(row, {o["key"]: o for o in objs})
    if stale or (row is None and rows.sniff(s.extras["files"], obj) is not None):
        with s.db.write() as conn:
            if rows.sync_bucket(conn, s.extras["files"], bucket_id, [obj["key"]]):
                s.extras["validations"].kick()
            row = rows.get_row(conn, bucket_id, obj)
    if row is None:
        raise NotFound(
            f"{obj['key']!r} is not a data-description document (a datapackage.json, or a JSON file holding a "
            "software corpus document): it has no validation report."
        )
    return json_response(rows.report_body(row))


def _preview(objs: list[dict], obj: dict) -> Response:
    s = services()
    args = previews.page_args(request.args, RESERVED_ARGS)
    types = previews.column_types(s.extras["files"], objs, obj) if previews.is_table(obj) else {}
    db_path = previews.preview_db(s.settings.INSTANCE_PATH, s.extras["files"], obj, types)
    return json_response(query_preview(db_path, args["limit"], args["offset"], args["filters"], args["sort"]))


@bp.get("/api/deposit/depositions/<int:dep_id>/files/<file_id>/validation")
@require_scope()
@doc(responses=REPORT)
def deposit_report(dep_id: int, file_id: str) -> Response:
    """The validation report of a deposit's data-description document; 404 for other files and other users."""
    bucket_id, objs, obj = _deposit_file(dep_id, file_id)
    return _report(bucket_id, objs, obj)


@bp.get("/api/records/<int:recid>/files/<file_id>/validation")
@doc(responses=REPORT)
def record_report(recid: int, file_id: str) -> Response:
    """The validation report of a record's data-description document, for those who may read its files (404)."""
    bucket_id, objs, obj = _record_file(recid, file_id)
    return _report(bucket_id, objs, obj)


@bp.get("/api/deposit/depositions/<int:dep_id>/files/<file_id>/preview")
@require_scope()
@doc(parameters=PREVIEW_PARAMS, responses=PREVIEW)
def deposit_preview(dep_id: int, file_id: str) -> Response:
    """First rows of a deposit's CSV file as JSON (paged, filtered, sorted); 400 for an unknown column."""
    _bucket_id, objs, obj = _deposit_file(dep_id, file_id)
    return _preview(objs, obj)


@bp.get("/api/records/<int:recid>/files/<file_id>/preview")
@doc(parameters=PREVIEW_PARAMS, responses=PREVIEW)
def record_preview(recid: int, file_id: str) -> Response:
    """First rows of a record's CSV file as JSON, with column types from its descriptor; 404 to those who may not
    download it, 400 for an unknown column."""
    _bucket_id, objs, obj = _record_file(recid, file_id)
    return _preview(objs, obj)


@bp.post("/api/datadesc/validate")
@doc(
    parameters=[{"name": "kind", "in": "query", "schema": {"type": "string", "enum": list(KINDS)}}],
    request={
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "properties": {
                        "document": {"type": "string", "format": "binary"},
                        "files": {"type": "array", "items": {"type": "string", "format": "binary"}},
                    },
                }
            },
            "application/json": {"schema": {"type": "object", "description": "a software corpus document"}},
        }
    },
    responses={"200": {"description": "The report, valid or not: `{kind, status, errors, summary}`."}},
)
def validate() -> Response:
    """Validate a document without depositing it: multipart `document` (+ `files`: its tables and codebook), or a
    software corpus document as the JSON body. 200 with the report; 400/413/415 for an unusable request."""
    kind = request.args.get("kind") or None
    if kind is not None and kind not in KINDS:
        raise BadRequest(f"Unknown kind {kind!r}: use software_corpus or datapackage.")
    if request.mimetype == "multipart/form-data":
        return json_response(_validate_multipart(kind))
    if request.mimetype != "application/json":
        raise UnsupportedMediaType("Send multipart/form-data with a `document` part, or a JSON document.")
    limit = services().settings.MAX_JSON_BYTES
    data = request.stream.read(limit + 1)
    if len(data) > limit:
        raise PayloadTooLarge(f"The JSON body is larger than {limit} bytes: send it as a multipart `document`.")
    if not data.strip():
        raise BadRequest("The body is empty: send the document.")
    return json_response(validate_document(kind or "software_corpus", data).to_dict())


def _validate_multipart(kind: str | None) -> dict:
    limit = services().settings.MAX_MULTIPART_BYTES
    if request.content_length is not None and request.content_length > limit:
        raise PayloadTooLarge(f"The request is larger than {limit} bytes.")
    request.max_content_length = limit
    try:
        document, tables = request.files.get("document"), request.files.getlist("files")
    except RequestEntityTooLarge:
        raise PayloadTooLarge(f"The request is larger than {limit} bytes.") from None
    if document is None:
        raise BadRequest("The `document` part is missing.", [{"field": "document", "message": "Missing file."}])
    data = document.read(MAX_DOCUMENT_BYTES + 1)
    kind = kind or detect_kind(document.filename or "", data)
    if kind is None:
        raise BadRequest(
            "Not a data-description document: name it datapackage.json, send a JSON software corpus document, "
            "or say which it is with ?kind=."
        )
    # The tables go to disk under their own names, so that they stream through validation whatever their size.
    with tempfile.TemporaryDirectory(prefix="datadesc-") as folder:
        for part in tables:
            name = secure_filename(part.filename or "")
            if not name:
                raise BadRequest("Every `files` part needs a file name.", [{"field": "files", "message": "No name."}])
            part.save(Path(folder) / name)
        return validate_document(kind, data, directory_files(Path(folder))).to_dict()  # type: ignore[arg-type]


@bp.get("/schemas/software-corpus.json")
@doc(responses={"200": {"description": "The JSON Schema (2020-12) of software corpus documents."}})
def software_corpus_schema() -> Response:
    """The JSON Schema of the software corpus document, as validation uses it."""
    return Response(schema_bytes("software-corpus"), 200, content_type="application/schema+json")


@bp.get("/schemas/tabular-datapackage.json")
@doc(responses={"200": {"description": "The Data Package profile (JSON Schema) of tabular dataset descriptors."}})
def tabular_datapackage_schema() -> Response:
    """The profile of tabular dataset descriptors (datapackage.json), as validation uses it."""
    return Response(schema_bytes("tabular-datapackage"), 200, content_type="application/schema+json")
