"""The JSON Schemas of deposit metadata (`/schemas/...`) and the metadata-file validator (`/api/metadata/validate`)."""

from __future__ import annotations

from flask import Blueprint, Response, request

from repository.errors import BadRequest, NotFound, PayloadTooLarge
from repository.metadata import DoiPolicy
from repository.metadata.jsonschema import deposit_metadata_json_schema
from repository.records.lookups import DatabaseLookups
from repository.releases import metafile_check
from repository.web.openapi import doc
from repository.web.request import json_response, services

bp = Blueprint("schemas", __name__)

# File name in the repository's `schemas/` folder -> whether it is the schema for publishing (else a draft's).
SCHEMA_FILES = {"deposit-metadata.json": True, "release-metadata.json": False}

FILENAME = {
    "name": "filename",
    "in": "query",
    "schema": {"type": "string", "default": ".service.json"},
    "description": "The file's name: `.service.json`, `.zenodo.json` or `CITATION.cff` (any `*.cff` is read as CFF).",
}
RAW_FILE = {"content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}}


@bp.get("/schemas/<name>")
@doc(responses={"200": {"description": "A JSON Schema (2020-12)."}})
def get_schema(name: str) -> Response:
    """`deposit-metadata.json` (metadata to publish) or `release-metadata.json` (a `.service.json`: every field
    optional, since a release derives the rest); 404 for any other name."""
    if name not in SCHEMA_FILES:
        raise NotFound(f"No schema {name!r}: the schemas are " + ", ".join(sorted(SCHEMA_FILES)) + ".")
    schema_id = services().settings.BASE_URL + "/schemas/" + name
    body = deposit_metadata_json_schema(publish=SCHEMA_FILES[name], schema_id=schema_id)
    response = json_response(body)
    response.mimetype = "application/schema+json"
    return response


@bp.post("/api/metadata/validate")
@doc(parameters=[FILENAME], request=RAW_FILE,
     responses={"200": {"description": "The file is valid: `{file, format, valid, errors: [], metadata, notes}`."},
                "400": {"description": "Every problem at once: `errors` of `{field?, message, hint?, line?, "
                                       "column?}`."}})  # fmt: skip
def validate_metadata_file() -> Response:
    """Check a `.service.json`, `.zenodo.json` or `CITATION.cff` sent as the raw body (or multipart `file`) as a
    release would use it: 200 if valid, else 400 listing every problem with its dotted path and a hint."""
    name = request.args.get("filename") or ".service.json"
    limit = services().settings.MAX_JSON_BYTES
    if request.content_length is not None and request.content_length > limit:
        raise PayloadTooLarge(f"The file is larger than {limit} bytes.")
    if request.mimetype == "multipart/form-data":
        upload = request.files.get("file")
        if upload is None:
            raise BadRequest("Send the file as the raw body, or as the multipart form field 'file'.")
        name = request.args.get("filename") or upload.filename or name
        data = upload.read(limit + 1)
    else:
        data = request.stream.read(limit + 1)  # never more than the limit, whatever the client claims
    if len(data) > limit:
        raise PayloadTooLarge(f"The file is larger than {limit} bytes.")
    settings = services().settings
    with services().db.read() as conn:
        report = metafile_check.check_file(
            name, data, DatabaseLookups(conn), metafile_check.database_license_index(conn),
            doi_policy=DoiPolicy(prefix=settings.doi_prefix),
        )  # fmt: skip
    body = report.to_dict()
    if report.valid:
        return json_response({"message": f"{name} is valid.", **body})
    count = len(report.errors)
    message = f"{name} has {count} problem{'s' if count != 1 else ''}."
    return json_response({"message": message, "status": 400, **body}, 400)
