"""Telling which uploads are data-description documents, and the schemas the service publishes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from repository.datadesc import (
    SCHEMA_FILES,
    detect_kind,
    load_schema,
    pending,
    schema_bytes,
    validate_document,
)
from repository.datadesc.jsonschemas import ecma_regex


@pytest.mark.parametrize(
    ("filename", "data", "kind"),
    [
        ("datapackage.json", b"{}", "datapackage"),
        ("data/DataPackage.JSON", b"not even json", "datapackage"),
        ("corpus.json", b'{"research_software": []}', "software_corpus"),
        ("corpus.json", b'{"research_software": [], "extra": 1}', "software_corpus"),
        ("corpus.json", b'{"version": null}', None),
        ("corpus.json", b'["research_software"]', None),
        ("corpus.json", b'{"research_software": ', None),
        ("corpus.txt", b'{"research_software": []}', None),
        ("paper.pdf", b"%PDF-1.7 research_software", None),
    ],
)
def test_detect_kind(filename: str, data: bytes, kind: str | None) -> None:
    assert detect_kind(filename, data) == kind


def test_validate_document_dispatches(corpus: dict[str, Any], descriptor: dict[str, Any]) -> None:
    assert validate_document("software_corpus", json.dumps(corpus).encode()).kind == "software_corpus"
    report = validate_document("datapackage", descriptor)
    assert report.kind == "datapackage"
    assert {e["code"] for e in report.errors} == {"missing-file"}


def test_pending_report() -> None:
    assert pending("datapackage") == {"kind": "datapackage", "status": "pending", "errors": [], "summary": {}}


@pytest.mark.parametrize("name", sorted(SCHEMA_FILES))
def test_published_schemas_are_valid_draft_2020_12(name: str) -> None:
    schema = load_schema(name)
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert json.loads(schema_bytes(name)) == schema


def test_format_checking_is_on() -> None:
    checker = Draft202012Validator.FORMAT_CHECKER
    # jsonschema silently skips a format whose optional library is missing; these need rfc3987 / rfc3339-validator.
    assert not checker.conforms("not a uri", "uri")
    assert not checker.conforms("2024-01-31 12:00", "date-time")
    assert checker.conforms("https://example.org/x", "uri")


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("^[0-9]{4}$", r"^[0-9]{4}\Z"),
        (r"^a\$b$", r"^a\$b\Z"),
        ("^[$]x$", r"^[$]x\Z"),
        (r"^[\]$]$", r"^[\]$]\Z"),
        ("^(a|b$)", r"^(a|b\Z)"),
    ],
)
def test_ecma_regex_end_anchor(pattern: str, expected: str) -> None:
    assert ecma_regex(pattern) == expected
