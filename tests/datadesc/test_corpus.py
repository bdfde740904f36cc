"""The software corpus schema: the valid example passes, and each rule broken once is reported at its field."""

from __future__ import annotations

import json
from typing import Any

import pytest

from repository.datadesc import validate_software_corpus

DELETE = object()

RS = ("research_software", 0)
M = (*RS, "mentions", 0)
MV = (*M, "version")
R = (*RS, "repositories", 0)
SVN = (*RS, "repositories", 1)
LV = (*R, "latest")
LANG = (*LV, "languages", 0)
LIC = (*LV, "licenses", 0)


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    *parents, last = path
    for part in parents:
        doc = doc[part]
    if value is DELETE:
        del doc[last]
    else:
        doc[last] = value


def _dotted(path: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in path)


# (path to change, new value or DELETE, the rule expected to fail there)
VIOLATIONS = [
    # no extra properties, at every level that forbids them
    (("extra",), 1, "unknown-field"),
    ((*RS, "extra"), 1, "unknown-field"),
    ((*M, "extra"), 1, "unknown-field"),
    ((*R, "extra"), 1, "unknown-field"),
    ((*LV, "extra"), 1, "unknown-field"),
    ((*LANG, "extra"), 1, "unknown-field"),
    ((*LIC, "extra"), 1, "unknown-field"),
    # required fields
    ((*RS, "canonical_url"), DELETE, "required"),
    ((*RS, "mentions"), DELETE, "required"),
    ((*RS, "platform"), DELETE, "required"),
    ((*M, "metadata_source"), DELETE, "required"),
    ((*M, "id"), DELETE, "required"),
    ((*M, "id_type"), DELETE, "required"),
    ((*M, "mentioning_urls"), DELETE, "required"),
    ((*R, "vcs"), DELETE, "required"),
    ((*LV, "version"), DELETE, "required"),
    ((*LV, "version_type"), DELETE, "required"),
    ((*LANG, "language"), DELETE, "required"),
    ((*LANG, "fraction"), DELETE, "required"),
    ((*LIC, "license"), DELETE, "required"),
    ((*LIC, "confidence"), DELETE, "required"),
    # enums
    ((*RS, "platform"), "github.com", "enum"),
    ((*M, "metadata_source"), "joss", "enum"),
    ((*M, "id_type"), "pubmed", "enum"),
    ((*MV, "type"), "commit", "enum"),
    ((*MV, "based_on"), "guess", "enum"),
    ((*R, "vcs"), "hg", "enum"),
    ((*LV, "version_type"), "branch", "enum"),
    ((*LV, "metadata_files", 0), ".zenodo.json", "enum"),
    # patterns
    (("version",), "2024-1-31", "pattern"),
    ((*M, "pub_date"), "2021/03", "pattern"),
    ((*M, "pub_date"), "21-03", "pattern"),
    ((*M, "pub_date"), "2021\n", "pattern"),  # JSON Schema's $ does not match before a final newline
    ((*LV, "revision_id"), "abcd", "pattern"),  # too short for a hash
    ((*LV, "revision_id"), "ABCDEF", "pattern"),  # upper case
    ((*LV, "tag_sha"), "g12345", "pattern"),
    ((*LV, "archive_id"), "swh:1:rel:abc123", "pattern"),
    ((*LV, "archive_id"), "arc:0:rel:abc123", "pattern"),
    ((*LV, "archive_id"), "arc:1:dir:abc123", "pattern"),
    ((*LV, "archive_id"), "arc:1:rel:abc;origin=a b", "pattern"),
    ((*LV, "archive_dir_id"), "arc:1:rev:def456", "pattern"),
    ((*LV, "archive_dir_id"), "arc:1:dir:def456;color=red", "pattern"),
    # formats
    (("version",), "2024-02-30", "format"),
    (("date",), "yesterday", "format"),
    (("date",), "2024-01-31T12:00:00", "format"),  # RFC 3339 needs an offset
    ((*RS, "canonical_url"), "not a uri", "format"),
    ((*MV, "identification_url"), "host-a.example/tool", "format"),
    ((*MV, "date"), "2021-02-30T10:00:00Z", "format"),
    ((*MV, "archive_url"), "://nothing", "format"),
    ((*R, "clone_url"), "git@host a:tool", "format"),
    ((*LV, "date"), "2022-05-06", "format"),
    # min lengths
    ((*RS, "canonical_url"), "", "minLength"),
    ((*MV, "identification_url"), "", "minLength"),
    ((*MV, "archive_url"), "", "minLength"),
    # unique items
    ((*M, "mentioning_urls"), ["https://a.example", "https://a.example"], "uniqueItems"),
    # the six-item SVN structure
    ((*SVN, "structure"), ["https://svn.example/tool", True, [], [], True], "minItems"),
    ((*SVN, "structure"), ["https://svn.example/tool", True, [], [], True, [], "x"], "maxItems"),
    # types, including fields that are not nullable
    (("research_software",), None, "type"),
    ((*RS, "mentions"), None, "type"),
    ((*RS, "repositories"), {}, "type"),
    ((*M, "id"), 123, "type"),
    ((*M, "mentioning_urls"), None, "type"),
    ((*M, "mentioning_urls", 0), 1, "type"),
    ((*M, "version"), "v1.2", "type"),
    ((*MV, "version"), 1.2, "type"),
    ((*R, "accessible"), "yes", "type"),
    ((*R, "main_repo"), 1, "type"),
    ((*R, "trunk"), "no", "type"),
    ((*R, "latest"), [], "type"),
    ((*SVN, "structure"), "trunk", "type"),
    ((*LV, "version"), None, "type"),
    ((*LV, "languages"), {"Python": 1}, "type"),
    ((*LV, "id"), 7, "type"),
    ((*LANG, "fraction"), "0.9", "type"),
    ((*LIC, "confidence"), 97.5, "type"),
    ((*LIC, "license"), None, "type"),
]


def test_example_document_is_valid(corpus: dict[str, Any]) -> None:
    report = validate_software_corpus(corpus)
    assert report.errors == []
    assert report.to_dict()["status"] == "valid"
    assert report.summary["research_software"] == 1
    assert report.summary["mentions"] == 1


@pytest.mark.parametrize(
    ("path", "value", "code"), VIOLATIONS, ids=lambda v: _dotted(v) if isinstance(v, tuple) else None
)
def test_each_rule_broken_once_is_reported_at_its_field(
    corpus: dict[str, Any], path: tuple[Any, ...], value: Any, code: str
) -> None:
    _set(corpus, path, value)
    report = validate_software_corpus(corpus)
    assert report.status == "invalid"
    codes = {(e["field"], e["code"]) for e in report.errors}
    assert (_dotted(path), code) in codes
    # nothing else in the document is blamed
    assert {field for field, _ in codes} == {_dotted(path)}


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("research_software",), []),
        (("version",), None),
        (("date",), None),
        (("date",), "2024-01-31T12:00:00.5+05:30"),
        ((*RS, "repositories"), None),
        ((*M, "pub_date"), None),
        ((*M, "pub_date"), "2021"),
        ((*M, "pub_date"), "2021-03-04"),
        ((*M, "version"), None),
        ((*M, "mentioning_urls"), []),
        ((*MV, "type"), None),
        ((*MV, "based_on"), "related-identifier-url"),
        ((*MV, "identification_url"), None),
        # the specification does not forbid extra properties on MentionedVersion
        ((*MV, "extra"), "kept"),
        ((*R, "clone_url"), None),
        ((*R, "latest"), None),
        ((*LV, "revision_id"), "123"),
        ((*LV, "tag_sha"), None),
        ((*LV, "archive_id"), "arc:9:rev:0f;origin=x;visit=y;anchor=z;path=/a;lines=1-2"),
        ((*LV, "languages"), None),
        ((*LV, "licenses"), []),
        ((*LV, "metadata_files"), None),
    ],
    ids=lambda v: _dotted(v) if isinstance(v, tuple) else None,
)
def test_nullable_and_optional_values_are_accepted(
    corpus: dict[str, Any], path: tuple[Any, ...], value: Any
) -> None:
    _set(corpus, path, value)
    assert validate_software_corpus(corpus).errors == []


@pytest.mark.parametrize(
    "path", [("research_software",), ("version",), ("date",), (*RS, "repositories"), (*M, "pub_date")]
)
def test_fields_with_defaults_may_be_left_out(corpus: dict[str, Any], path: tuple[Any, ...]) -> None:
    _set(corpus, path, DELETE)
    assert validate_software_corpus(corpus).errors == []


def test_empty_object_is_a_valid_corpus() -> None:
    assert validate_software_corpus(b"{}").status == "valid"


def test_raw_bytes_are_parsed(corpus: dict[str, Any]) -> None:
    assert validate_software_corpus(json.dumps(corpus).encode()).status == "valid"


def test_invalid_json_reports_line_and_column() -> None:
    report = validate_software_corpus(b'{\n  "research_software": [\n    {,\n  ]\n}')
    assert report.status == "invalid"
    [error] = report.errors
    assert error["code"] == "json"
    assert error["position"] == {"line": 3, "column": 6}


def test_nan_is_not_json() -> None:
    report = validate_software_corpus(b'{"research_software": NaN}')
    assert [e["code"] for e in report.errors] == ["json"]


def test_a_json_array_is_not_a_document() -> None:
    report = validate_software_corpus(b"[]")
    assert [(e["field"], e["code"]) for e in report.errors] == [("", "type")]


def test_all_errors_are_reported_at_once_in_document_order(corpus: dict[str, Any]) -> None:
    software = corpus["research_software"]
    for index in range(12):
        software.append(
            {"canonical_url": f"https://host-b.example/{index}", "mentions": [], "platform": "nope"}
        )
    report = validate_software_corpus(corpus)
    fields = [e["field"] for e in report.errors]
    assert fields == [f"research_software.{i}.platform" for i in range(1, 13)]


def test_messages_do_not_quote_whole_documents(corpus: dict[str, Any]) -> None:
    corpus["research_software"][0]["mentions"][0]["mentioning_urls"] = ["x" * 5000, "x" * 5000]
    [error] = validate_software_corpus(corpus).errors
    assert error["code"] == "uniqueItems"
    assert len(error["message"]) < 200


def test_oversized_documents_are_refused_before_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("repository.datadesc.report.MAX_DOCUMENT_BYTES", 10)
    report = validate_software_corpus(b'{"research_software": []}')
    assert [e["code"] for e in report.errors] == ["too-large"]


@pytest.mark.parametrize("value", ["MIT", "Apache-2.0", "GPL-2.0-or-later", "GPL-2.0+", "0BSD"])
def test_license_is_an_spdx_identifier(corpus: dict[str, Any], value: str) -> None:
    _set(corpus, (*LIC, "license"), value)
    assert validate_software_corpus(corpus).errors == []


@pytest.mark.parametrize(
    ("value", "hint"),
    [("Foo License", "spdx.org/licenses"), ("mit", "Did you mean 'MIT'?"), ("MIT OR Apache-2.0", "spdx.org"), ("", "")],
)
def test_license_outside_the_spdx_list_is_reported_at_its_field(corpus: dict[str, Any], value: str, hint: str) -> None:
    _set(corpus, (*LIC, "license"), value)
    errors = validate_software_corpus(corpus).errors
    assert [(e["field"], e["code"]) for e in errors] == [(_dotted((*LIC, "license")), "format")]
    assert "SPDX license identifier" in errors[0]["message"] and hint in errors[0]["message"]
