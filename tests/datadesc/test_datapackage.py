"""Tabular dataset descriptors: the profile, the codebook, and the CSV contents checked row by row."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from helpers.datadesc_docs import HEADER, VALID_ROWS, csv_bytes

from repository.datadesc import directory_files, field_types_for, table_names, validate_datapackage
from repository.datadesc.report import MAX_ERRORS

FIELDS = ("resources", 0, "schema", "fields")


def files(*rows: str, header: str = HEADER) -> dict[str, bytes]:
    """The deposit's other files: a data.csv with these rows and the codebook."""
    return {"data.csv": csv_bytes(*rows, header=header), "codebook.md": b"# Codebook\n"}


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    *parents, last = path
    for part in parents:
        doc = doc[part]
    if value is None:
        del doc[last]
    else:
        doc[last] = value


def test_valid_package_passes(descriptor: dict[str, Any]) -> None:
    report = validate_datapackage(descriptor, files(*VALID_ROWS))
    assert report.errors == []
    assert report.to_dict()["summary"] == {
        "resources": 1,
        "resources_checked": 1,
        "rows_checked": len(VALID_ROWS),
        "truncated": False,
        "errors": 0,
    }


@pytest.mark.parametrize(
    "key",
    [
        "name",
        "title",
        "description",
        "id",
        "version",
        "created",
        "author",
        "license",
        "encoding",
        "note",
        "resources",
    ],
)
def test_each_descriptor_field_is_required(descriptor: dict[str, Any], key: str) -> None:
    del descriptor[key]
    report = validate_datapackage(descriptor, files(*VALID_ROWS))
    assert ("required", key) in {(e["code"], e.get("field")) for e in report.errors}


# (path, value or None to delete, the field expected to be blamed)
PROFILE_VIOLATIONS = [
    (("id",), "zenodo.1234567", "id"),
    (("id",), "10.12/x", "id"),
    (("created",), "2024-02-30", "created"),
    (("created",), "29/02/2024", "created"),
    (("license",), "CC-BY-4.0", "license"),
    (("encoding",), "latin-1", "encoding"),
    (("codebook",), "../codebook.md", "codebook"),
    (("resources",), [], "resources"),
    (("resources", 0, "name"), None, "resources.0.name"),
    (("resources", 0, "path"), None, "resources.0.path"),
    (("resources", 0, "format"), "tsv", "resources.0.format"),
    (("resources", 0, "mediatype"), "application/csv", "resources.0.mediatype"),
    (("resources", 0, "encoding"), "UTF-16", "resources.0.encoding"),
    (("resources", 0, "schema"), None, "resources.0.schema"),
    (("resources", 0, "schema", "missingValues"), ["", "N/A"], "resources.0.schema.missingValues"),
    (("resources", 0, "schema", "missingValues"), None, "resources.0.schema.missingValues"),
    (("resources", 0, "schema", "primaryKey"), ["year"], "resources.0.schema.primaryKey"),
    (("resources", 0, "schema", "foreignKeys"), [{"fields": "year"}], "resources.0.schema.foreignKeys"),
    (("resources", 0, "schema", "primaryKey"), None, "resources.0.schema.primaryKey"),
    ((*FIELDS, 1, "type"), "number", "resources.0.schema.fields.1.type"),
    ((*FIELDS, 1, "constraints"), None, "resources.0.schema.fields.1.constraints"),
    ((*FIELDS, 1, "constraints", "minimum"), 1980, "resources.0.schema.fields.1.constraints.minimum"),
    ((*FIELDS, 1, "constraints", "maximum"), None, "resources.0.schema.fields.1.constraints.maximum"),
    ((*FIELDS, 1, "constraints", "required"), False, "resources.0.schema.fields.1.constraints.required"),
    ((*FIELDS, 2, "type"), "string", "resources.0.schema.fields.2.type"),
    ((*FIELDS, 0, "type"), "integer", "resources.0.schema.fields.0.type"),
    ((*FIELDS, 6, "constraints"), {"required": True}, "resources.0.schema.fields.6.constraints.required"),
    ((*FIELDS, 3, "name"), "indicators", "resources.0.schema.fields.3.name"),
]


@pytest.mark.parametrize(
    ("path", "value", "field"), PROFILE_VIOLATIONS, ids=[str(v[0]) for v in PROFILE_VIOLATIONS]
)
def test_profile_rules(descriptor: dict[str, Any], path: tuple[Any, ...], value: Any, field: str) -> None:
    _set(descriptor, path, value)
    report = validate_datapackage(descriptor, files(*VALID_ROWS))
    assert report.status == "invalid"
    assert field in {e.get("field") for e in report.errors}


@pytest.mark.parametrize("path", ["../data.csv", "sub/data.csv", "https://example.org/data.csv", ".data.csv"])
def test_table_paths_are_plain_file_names_and_nothing_else_is_read(
    descriptor: dict[str, Any], path: str
) -> None:
    descriptor["resources"][0]["path"] = path
    report = validate_datapackage(descriptor, files(*VALID_ROWS) | {path: csv_bytes("XX,1,x,,,,")})
    assert [e.get("field") for e in report.errors] == ["resources.0.path"]
    assert report.summary["resources_checked"] == 0


def test_table_paths_name_csv_files(descriptor: dict[str, Any]) -> None:
    descriptor["resources"][0]["path"] = "data.txt"
    report = validate_datapackage(descriptor, files(*VALID_ROWS) | {"data.txt": csv_bytes(*VALID_ROWS)})
    assert [e.get("field") for e in report.errors] == ["resources.0.path"]


def test_the_seven_fields_must_each_appear_once(descriptor: dict[str, Any]) -> None:
    fields = descriptor["resources"][0]["schema"]["fields"]
    fields[0] = copy.deepcopy(fields[1])  # year twice, country missing
    messages = [e["message"] for e in validate_datapackage(descriptor, files(*VALID_ROWS)).errors]
    assert "The field 'country' is missing." in messages


def test_six_fields_are_not_enough(descriptor: dict[str, Any]) -> None:
    del descriptor["resources"][0]["schema"]["fields"][6]
    report = validate_datapackage(descriptor, files(*VALID_ROWS))
    assert {"resources.0.schema.fields"} <= {e.get("field") for e in report.errors}


@pytest.mark.parametrize("doi", ["10.5281/zenodo.1", "doi:10.1000/xyz", "https://doi.org/10.1000/a(b)c"])
def test_doi_forms(descriptor: dict[str, Any], doi: str) -> None:
    descriptor["id"] = doi
    assert validate_datapackage(descriptor, files(*VALID_ROWS)).errors == []


def test_fields_in_another_order_with_a_matching_header(descriptor: dict[str, Any]) -> None:
    descriptor["resources"][0]["schema"]["fields"].reverse()
    header = ",".join(reversed(HEADER.split(",")))
    rows = [",".join(reversed(row.split(","))) for row in VALID_ROWS]
    assert validate_datapackage(descriptor, files(*rows, header=header)).errors == []


def table_errors(descriptor: dict[str, Any], *rows: str, header: str = HEADER) -> list[tuple[Any, ...]]:
    report = validate_datapackage(descriptor, files(*rows, header=header))
    return [(e.get("resource"), e.get("row"), e.get("column"), e["code"]) for e in report.errors]


def test_years_out_of_range(descriptor: dict[str, Any]) -> None:
    rows = ["DE,1989,1,,,,", "DE,1990,1,,,,", "DE,2030,1,,,,", "DE,2031,1,,,,"]
    assert table_errors(descriptor, *rows) == [
        ("data", 2, "year", "constraint-error"),
        ("data", 5, "year", "constraint-error"),
    ]


def test_year_is_required_and_an_integer(descriptor: dict[str, Any]) -> None:
    rows = ["DE,,1,,,,", "DE,NA,1,,,,", "DE,2001.5,1,,,,", "DE,two thousand,1,,,,"]
    assert table_errors(descriptor, *rows) == [
        ("data", 2, "year", "constraint-error"),
        ("data", 3, "year", "constraint-error"),
        ("data", 4, "year", "type-error"),
        ("data", 5, "year", "type-error"),
    ]


def test_bad_countries(descriptor: dict[str, Any]) -> None:
    rows = ["Atlantis,2001,1,,,,", "ZZ,2001,1,,,,", "276,2001,1,,,,", "Deutschland,2001,1,,,,"]
    errors = validate_datapackage(descriptor, files(*rows)).errors
    assert [(e["row"], e["column"], e["code"]) for e in errors] == [
        (row, "country", "constraint-error") for row in (2, 3, 4, 5)
    ]
    assert "'Atlantis' is not an ISO 3166-1 country" in errors[0]["message"]


@pytest.mark.parametrize(
    "country",
    ["Germany", "germany", "DE", "de", "DEU", "Namibia", "NAM", "Bolivia", "Bolivia, Plurinational State of"],
)
def test_country_names_and_codes_that_map_to_alpha_2(descriptor: dict[str, Any], country: str) -> None:
    assert table_errors(descriptor, f'"{country}",2001,1,,,,') == []


def test_na_is_a_missing_value_not_namibia(descriptor: dict[str, Any]) -> None:
    # Every missing-value marker, in every optional column, is accepted as missing.
    rows = [f"{m},2001,{m},{m},{m},{m},{m}" for m in ["", "NA", "N/A", "null", "NULL", "NaN"]]
    assert table_errors(descriptor, *rows) == []


def test_other_markers_are_not_missing(descriptor: dict[str, Any]) -> None:
    assert table_errors(descriptor, "DE,2001,n/a,,,,", "DE,2001,-,,,,") == [
        ("data", 2, "value", "type-error"),
        ("data", 3, "value", "type-error"),
    ]


def test_wrong_types(descriptor: dict[str, Any]) -> None:
    assert table_errors(descriptor, "DE,2001,abc,,,,", "DE,2001,1.5.2,,,,") == [
        ("data", 2, "value", "type-error"),
        ("data", 3, "value", "type-error"),
    ]


@pytest.mark.parametrize(
    ("header", "code", "column"),
    [
        ("country,yr,value,indicator,source,unit,notes", "incorrect-label", "year"),
        ("country,year,value,indicator,source,unit", "missing-label", "notes"),
        ("country,year,value,indicator,source,unit,notes,extra", "extra-label", "extra"),
        ("year,country,value,indicator,source,unit,notes", "incorrect-label", "country"),
    ],
)
def test_header_must_match_the_descriptor(
    descriptor: dict[str, Any], header: str, code: str, column: str
) -> None:
    found = table_errors(descriptor, header=header)
    assert ("data", 1, column, code) in found


def test_missing_codebook(descriptor: dict[str, Any]) -> None:
    given = files(*VALID_ROWS)
    del given["codebook.md"]
    report = validate_datapackage(descriptor, given)
    assert [(e["field"], e["code"]) for e in report.errors] == [("codebook", "missing-file")]


def test_codebook_is_optional(descriptor: dict[str, Any]) -> None:
    # The specification lists no `codebook` field: a descriptor written exactly to it is valid.
    del descriptor["codebook"]
    given = files(*VALID_ROWS)
    del given["codebook.md"]
    report = validate_datapackage(descriptor, given)
    assert report.errors == [] and report.status == "valid"


@pytest.mark.parametrize("value", ["", 7, "sub/codebook.md", "https://example.org/codebook.md"])
def test_a_given_codebook_must_be_a_plain_file_name(descriptor: dict[str, Any], value: Any) -> None:
    descriptor["codebook"] = value
    report = validate_datapackage(descriptor, files(*VALID_ROWS))
    assert [e["field"] for e in report.errors] == ["codebook"]


def test_missing_table(descriptor: dict[str, Any]) -> None:
    report = validate_datapackage(descriptor, {"codebook.md": b""})
    assert [(e["field"], e["code"]) for e in report.errors] == [("resources.0.path", "missing-file")]
    assert report.summary["resources_checked"] == 0


def test_every_resource_is_checked_and_named(descriptor: dict[str, Any]) -> None:
    second = copy.deepcopy(descriptor["resources"][0]) | {"name": "more", "path": "more.csv"}
    descriptor["resources"].append(second)
    given = files(*VALID_ROWS) | {"more.csv": csv_bytes("DE,2001,1,,,,", "DE,1900,1,,,,")}
    report = validate_datapackage(descriptor, given)
    assert [(e["resource"], e["path"], e["row"], e["column"]) for e in report.errors] == [
        ("more", "more.csv", 3, "year")
    ]
    assert report.summary["rows_checked"] == len(VALID_ROWS) + 2


def test_encoding_errors_are_reported(descriptor: dict[str, Any]) -> None:
    given = files() | {"data.csv": HEADER.encode() + b"\nM\xfcnchen,2001,1,,,,\n"}
    assert [e["code"] for e in validate_datapackage(descriptor, given).errors] == ["encoding-error"]


def test_errors_are_capped(descriptor: dict[str, Any]) -> None:
    report = validate_datapackage(descriptor, files(*["DE,1900,1,,,,"] * (MAX_ERRORS + 50)))
    assert len(report.errors) == MAX_ERRORS
    assert report.summary["truncated"] is True


def test_files_from_a_folder_and_from_a_callable(package_dir: Path) -> None:
    raw = (package_dir / "datapackage.json").read_bytes()
    assert validate_datapackage(raw, directory_files(package_dir)).status == "valid"
    paths = {p.name: p for p in package_dir.iterdir()}
    assert validate_datapackage(raw, paths).status == "valid"
    (package_dir / "data.csv").write_bytes(csv_bytes("Atlantis,2001,1,,,,"))
    assert validate_datapackage(raw, paths.get).status == "invalid"


def test_descriptor_json_errors_have_line_and_column() -> None:
    report = validate_datapackage(b'{"name": "x",\n "resources": [}', {})
    assert report.errors[0]["position"] == {"line": 2, "column": 16}


def test_helpers_for_the_deposit_hook_and_previews(descriptor: dict[str, Any]) -> None:
    assert table_names(descriptor) == ["data.csv"]
    assert table_names({"resources": [{"path": "../x.csv"}, "junk"]}) == []
    types = field_types_for(descriptor, "data.csv")
    assert types["year"] == "integer" and types["value"] == "number" and types["country"] == "string"
    assert field_types_for(descriptor, "other.csv") == {}


def test_report_is_json_ready(descriptor: dict[str, Any]) -> None:
    body = validate_datapackage(descriptor, files("XX,1,1,,,,")).to_dict()
    assert json.loads(json.dumps(body)) == body
    assert body["status"] == "invalid" and body["summary"]["errors"] == len(body["errors"]) == 2


def test_field_types_of_a_broken_descriptor() -> None:
    assert field_types_for({"resources": [{"path": "data.csv", "schema": ["x"]}]}, "data.csv") == {}
    assert field_types_for({"resources": "data.csv"}, "data.csv") == {}
