"""Data-description documents over HTTP: validation reports and table previews of deposit and record files,
validation without depositing (`/api/datadesc/validate`) and the two schemas (`/schemas/...`)."""

from __future__ import annotations

import time
from pathlib import Path

from flask import Blueprint, Response, request
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.utils import secure_filename

from repository import urls
from repository.datadesc import (
    KINDS,
    DocumentReport,
    Kind,
    checks,
    detect_kind,
    directory_files,
    kind_named,
    query_preview,
    schema_bytes,
    validate_document,
)
from repository.datadesc.checks import previews, rows
from repository.datadesc.jobs import Jobs
from repository.datadesc.report import MAX_DOCUMENT_BYTES
from repository.deposits import actions
from repository.errors import (
    ApiError,
    BadRequest,
    Gone,
    NotFound,
    PayloadTooLarge,
    Unauthorized,
    UnsupportedMediaType,
)
from repository.files import buckets
from repository.records.access import can_read_files
from repository.records.build import get_record_rows
from repository.web.openapi import doc
from repository.web.request import caller, identity, json_response, require_scope, services

bp = Blueprint("datadesc", __name__)

RESERVED_ARGS = {"limit", "offset", "sort", "access_token", "prettyprint"}
PREVIEW_PARAMS = [
    {"name": "limit", "in": "query", "schema": {"type": "integer", "default": 20, "maximum": 1000}},
    {"name": "offset", "in": "query", "schema": {"type": "integer", "default": 0}},
    {"name": "sort", "in": "query", "schema": {"type": "string"}, "description": "a column; `-column` descends"},
    {"name": "<column>", "in": "query", "schema": {"type": "string"}, "description": "rows whose column equals it"},
]
REPORT = {"200": {"description": "`{kind, status: pending|valid|invalid, errors: [...], summary, file_id, filename}`."}}
PREVIEW = {
    "200": {"description": "`{columns: [{name, type}], rows, total, limit, offset, truncated}`: a preview holds the "
                           "first 100,000 rows of a file (`truncated` when it has more)."},
    "422": {"description": "The file cannot be previewed (not CSV text, over 1,000 columns, a line over 1,000,000 "
                           "characters)."},
}


def _find(objs: list[buckets.ObjectRow], file_id: str) -> buckets.ObjectRow:
    """A file of the bucket by its id or, as the files interface allows, by its name."""
    for obj in objs:
        if obj["file_id"] == file_id or obj["key"] == file_id:
            return obj
    raise NotFound("File not found.")


def _deposit_file(dep_id: int, file_id: str) -> tuple[str, list[buckets.ObjectRow], buckets.ObjectRow]:
    """(bucket, its files, the file) of the caller's deposit; 404 for anyone else's."""
    with services().db.read() as conn:
        dep = actions.get_deposit(conn, dep_id, caller().user_id)
        objs = buckets.list_objects(conn, dep["bucket_id"])
    return dep["bucket_id"], objs, _find(objs, file_id)


def _record_file(recid: int, file_id: str) -> tuple[str, list[buckets.ObjectRow], buckets.ObjectRow]:
    """(bucket, its files, the file) of a record whose files the caller may read; 404 otherwise, 410 if deleted."""
    with services().db.read() as conn:
        found = get_record_rows(conn, [recid])
        if not found:
            raise NotFound("PID does not exist.")
        record = found[0]
        if record["deleted"] is not None:
            raise Gone("PID has been deleted.")
        if not can_read_files(record, identity(), conn):
            raise NotFound("The record's files are not available to you.")
        objs = buckets.list_objects(conn, record["bucket_id"])
    return record["bucket_id"], objs, _find(objs, file_id)


def _report(bucket_id: str, objs: list[buckets.ObjectRow], obj: buckets.ObjectRow) -> Response:
    """The file's validation report; a document never examined yet (a new version's), or whose tables were renamed,
    becomes pending now."""
    s = services()
    with s.db.read() as conn:
        row = rows.get_validation_row(conn, bucket_id, obj)
    stale = row is not None and rows.is_stale(row, {o["key"]: o for o in objs})
    if stale or (row is None and rows.sniff(s.files, obj) is not None):
        with s.db.write() as conn:
            checks.file_changed(conn, s.files, bucket_id, obj["key"])  # validated after the commit
            row = rows.get_validation_row(conn, bucket_id, obj)
    if row is None:
        raise NotFound(
            f"{obj['key']!r} is not a data-description document (a datapackage.json, or a JSON file holding a "
            "software corpus document): it has no validation report."
        )
    return json_response(rows.report_body(row))


def _preview(objs: list[buckets.ObjectRow], obj: buckets.ObjectRow) -> Response:
    s = services()
    args = previews.page_args(request.args, RESERVED_ARGS)
    types = previews.column_types(s.files, objs, obj) if previews.is_table(obj) else {}
    db_path = previews.preview_db(s.settings.INSTANCE_PATH, s.files, obj, types)
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


ASYNC_PARAMS = [
    {"name": "kind", "in": "query", "schema": {"type": "string", "enum": list(KINDS)}},
    {"name": "async", "in": "query", "schema": {"type": "boolean"},
     "description": "true: validate in the background (a token is needed); false: now, within the CPU bound; "
                    "absent: in the background when a token holder sends more than DATADESC_ASYNC_BYTES"},
    {"name": "Prefer", "in": "header", "schema": {"type": "string"},
     "description": "`respond-async` asks for the background, as ?async=true (ignored for guests)"},
]  # fmt: skip
JOB_REPORT = (
    "`{kind, status: pending|valid|invalid, errors, summary, id, created, expires, links: {self}}`: the report, as "
    "the synchronous answer gives it, once the job is done; `status: pending` until then."
)


@bp.post("/api/datadesc/validate")
@doc(
    parameters=ASYNC_PARAMS,
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
    responses={
        "200": {"description": "The report, valid or not: `{kind, status, errors, summary}`."},
        "202": {"description": "Validated in the background: " + JOB_REPORT + " Poll `Location` (`links.self`) "
                               "with the same token; the job and its files are kept DATADESC_JOB_RETENTION seconds."},
        "401": {"description": "?async=true without an access token."},
        "413": {"description": "Past the size bounds: DATADESC_GUEST_MAX_BYTES without a token, MAX_MULTIPART_BYTES "
                               "with one, MAX_JSON_BYTES for the document itself."},
        "429": {"description": "The caller already has DATADESC_JOBS_PER_USER background validations waiting."},
    },
)
def validate() -> Response:
    """Validate a document without depositing it: multipart `document` (+ `files`: its tables and codebook), or a
    software corpus document as the JSON body. 200 with the report; 400 (also for a document nested too deeply),
    413 past the size bounds (smaller for guests), 415 for an unusable request. Table rows are checked for at most
    DATADESC_VALIDATE_SECONDS of CPU time. A token holder's large request (over DATADESC_ASYNC_BYTES), or one
    sent with ?async=true or `Prefer: respond-async`, is validated whole in the background instead: 202 with a
    `Location` to poll."""
    given = request.args.get("kind") or None
    kind = kind_named(given)
    if given is not None and kind is None:
        raise BadRequest(f"Unknown kind {given!r}: use software_corpus or datapackage.")
    wanted = _async_wanted()
    settings = services().settings
    length = request.content_length
    if wanted or (wanted is None and length is not None and _in_background(None, length)):
        _check_quota()  # before the upload is received
    deadline = time.thread_time() + settings.DATADESC_VALIDATE_SECONDS
    if request.mimetype == "multipart/form-data":
        return _validate_multipart(kind, deadline, wanted)
    if request.mimetype != "application/json":
        raise UnsupportedMediaType("Send multipart/form-data with a `document` part, or a JSON document.")
    limit = _request_limit(settings.MAX_JSON_BYTES)
    data = request.stream.read(limit + 1)
    if len(data) > limit:
        raise PayloadTooLarge(_too_large(limit, "The JSON body"))
    if not data.strip():
        raise BadRequest("The body is empty: send the document.")
    if _in_background(wanted, len(data)):
        with _jobs().staging() as staged:
            return _submit(staged, kind or "software_corpus", data, has_files=False)
    return _answer(validate_document(kind or "software_corpus", data))


def _async_wanted() -> bool | None:
    """True (?async=true, or `Prefer: respond-async` from a token holder), False (?async=false) or None (the
    service decides by size); 401 for ?async=true without a token: guests get no background jobs."""
    raw = request.args.get("async")
    if raw is None:
        prefs = {p.split(";")[0].strip().lower() for p in request.headers.get("Prefer", "").split(",")}
        # A preference the server may ignore (RFC 7240): guests get the synchronous answer.
        return True if "respond-async" in prefs and identity() is not None else None
    if raw.lower() not in {"true", "1", "false", "0"}:
        raise BadRequest(f"Invalid async {raw!r}: use true or false.", [{"field": "async", "message": "Not a boolean."}])
    if raw.lower() in {"true", "1"}:
        if identity() is None:
            raise Unauthorized("Background validation needs an access token: its report is kept for the token's "
                               "user only. Leave ?async=true out to validate now.")  # fmt: skip
        return True
    return False


def _in_background(wanted: bool | None, size: int) -> bool:
    if wanted is not None:
        return wanted
    return identity() is not None and size > services().settings.DATADESC_ASYNC_BYTES


def _jobs() -> Jobs:
    return services().validation_jobs


def _job_url(job_id: str) -> str:
    return urls.datadesc_validation_job(services().settings.BASE_URL, job_id)


def _check_quota() -> None:
    """429 when the caller already has DATADESC_JOBS_PER_USER background validations waiting."""
    settings, who = services().settings, identity()
    if who is not None and _jobs().unfinished(who.user_id) >= settings.DATADESC_JOBS_PER_USER:
        raise ApiError(
            f"You already have {settings.DATADESC_JOBS_PER_USER} background validations waiting: poll them, then "
            "submit again.",
            status=429,
            headers={"Retry-After": "30"},
        )


def _submit(staged: Path, kind: str, document: bytes, has_files: bool) -> Response:
    """Make a background job of the staged request: 202 with the pending report and where to poll it."""
    jobs, who = _jobs(), identity()
    assert who is not None
    _check_quota()
    job = jobs.submit(staged, who.user_id, kind, document, has_files)
    jobs.kick()
    url = _job_url(job["id"])
    headers = {"Location": url}
    if "respond-async" in request.headers.get("Prefer", "").lower():
        headers["Preference-Applied"] = "respond-async"
    return json_response(Jobs.body(job, url), 202, headers)


@bp.get("/api/datadesc/validate/<job_id>")
@require_scope()
@doc(responses={"200": {"description": JOB_REPORT}, "404": {"description": "Unknown, expired, or another user's."}})
def validation_job(job_id: str) -> Response:
    """A background validation's report, for the user who submitted it.

    404 to anyone else, and once the job is older than DATADESC_JOB_RETENTION seconds. 200 with `status: pending`
    while it runs, as the reports of deposit files; then the same report as the synchronous answer."""
    job = _jobs().read(job_id, caller().user_id)
    if job is None:
        raise NotFound("No such validation job: unknown, expired, or submitted by someone else.")
    return json_response(Jobs.body(job, _job_url(job_id)))


def _request_limit(limit: int) -> int:
    """`limit`, or the smaller bound of guests (anonymous validation must stay cheap)."""
    if identity() is None:
        return min(limit, services().settings.DATADESC_GUEST_MAX_BYTES)
    return limit


def _too_large(limit: int, what: str) -> str:
    settings = services().settings
    if identity() is None and limit == settings.DATADESC_GUEST_MAX_BYTES:
        return (f"{what} is larger than {limit} bytes, the limit without an access token: send one to validate up "
                f"to {settings.MAX_MULTIPART_BYTES} bytes, or deposit the files, where validation runs in the "
                "background whatever their size.")  # fmt: skip
    return (f"{what} is larger than {limit} bytes: deposit the files instead, validation runs in the background "
            "there whatever their size.")  # fmt: skip


def _answer(report: DocumentReport) -> Response:
    """The report; a document nested past the bound of every JSON the service reads is refused with 400."""
    refused = [entry for entry in report.errors if entry.get("code") == "depth"]
    if refused:
        raise BadRequest(refused[0]["message"], [{"field": "document", "message": refused[0]["message"]}])
    return json_response(report.to_dict())


def _validate_multipart(kind: Kind | None, deadline: float, wanted: bool | None) -> Response:
    settings = services().settings
    limit = _request_limit(settings.MAX_MULTIPART_BYTES)
    if request.content_length is not None and request.content_length > limit:
        raise PayloadTooLarge(_too_large(limit, "The request"))
    request.max_content_length = limit
    try:
        document, tables = request.files.get("document"), request.files.getlist("files")
    except RequestEntityTooLarge:
        raise PayloadTooLarge(_too_large(limit, "The request")) from None
    if document is None:
        raise BadRequest("The `document` part is missing.", [{"field": "document", "message": "Missing file."}])
    # A document is parsed and validated whole, in memory: its bound is that of any JSON the service reads.
    document_limit = min(settings.MAX_JSON_BYTES, MAX_DOCUMENT_BYTES)
    data = document.read(document_limit + 1)
    if len(data) > document_limit:
        raise PayloadTooLarge(_too_large(document_limit, "The document"))
    kind = kind or detect_kind(document.filename or "", data)
    if kind is None:
        raise BadRequest(
            "Not a data-description document: name it datapackage.json, send a JSON software corpus document, "
            "or say which it is with ?kind=."
        )
    # The tables go to disk under their own names, so that they stream through validation whatever their size;
    # under the instance directory, where a background job keeps them (and the sweep finds those of a crash).
    with _jobs().staging() as staged:
        folder, size = staged / "files", len(data)
        for part in tables:
            name = secure_filename(part.filename or "")
            if not name:
                raise BadRequest("Every `files` part needs a file name.", [{"field": "files", "message": "No name."}])
            part.save(folder / name)
            size += (folder / name).stat().st_size
        if _in_background(wanted, size):
            return _submit(staged, kind, data, has_files=True)
        return _answer(validate_document(kind, data, directory_files(folder), deadline))


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
