"""The metadata-file validator (endpoint and command line) and the JSON Schemas written into the repository."""

from __future__ import annotations

import io
import json
from pathlib import Path

import jsonschema
import pytest

from repository.cli import validators as cli
from repository.metadata.jsonschema import deposit_metadata_json_schema
from scripts import validate_metadata

ROOT = Path(__file__).resolve().parents[2]
VALIDATE = "/api/metadata/validate"
BAD = {
    "title": "Tool",
    "licence": "MIT",
    "license": "mit-licence",
    "upload_type": "sofware",
    "creators": [{"name": ", Jane", "orcid": "0000-0002-1825-0098"}, {"affiliation": "X"}],
    "related_identifiers": [{"identifier": "not an id", "relation": "isSupplementto"}],
    "grants": [{"id": "10.13039/501100000780::000000"}],
}


def post(client, data: bytes, filename: str | None = None):  # type: ignore[no-untyped-def]
    query = {"filename": filename} if filename else None
    return client.post(VALIDATE, data=data, query_string=query, content_type="application/octet-stream")


def test_every_problem_at_once_with_paths_hints_and_the_deposit_apis_messages(client, auth):
    response = post(client, json.dumps(BAD).encode())
    assert response.status_code == 400
    body = response.json
    assert body["status"] == 400 and body["valid"] is False and body["message"] == ".service.json has 9 problems."
    errors = {e["field"]: e for e in body["errors"]}
    assert set(errors) == {"licence", "license", "upload_type", "creators.0.name", "creators.0.orcid",
                           "creators.1.name", "related_identifiers.0.identifier",
                           "related_identifiers.0.relation", "grants.0.id"}  # fmt: skip
    assert errors["licence"]["hint"] == "Did you mean 'license'?"
    assert errors["license"]["hint"].startswith("Did you mean 'MIT'")
    assert errors["upload_type"]["hint"].startswith("Did you mean 'software'?")
    assert errors["related_identifiers.0.relation"]["hint"].startswith("Did you mean 'isSupplementTo'?")
    assert errors["grants.0.id"]["message"] == "Unknown grant: 10.13039/501100000780::000000."
    # The deposit API says the same about the same metadata (under `metadata.`).
    deposit = client.post("/api/deposit/depositions", json={"metadata": BAD}, headers=auth).json
    from_api = {e["field"].removeprefix("metadata."): e["message"] for e in deposit["errors"]}
    assert from_api == {path: error["message"] for path, error in errors.items()}


def test_valid_file_answers_200_with_the_stored_form(client):
    service = {"keywords": ["x", ""], "license": "cc-by-4.0", "creators": [{"name": "Doe, Jane"}]}
    response = post(client, json.dumps(service).encode())
    assert response.status_code == 200 and response.json["valid"] is True
    assert response.json["metadata"] == {"keywords": ["x"], "license": "cc-by", "creators": [{"name": "Doe, Jane"}]}


def test_invalid_json_reports_line_and_column(client):
    response = post(client, b'{\n  "title": "Tool"\n  "version": "1"\n}')
    assert response.status_code == 400
    [error] = response.json["errors"]
    assert (error["line"], error["column"]) == (3, 3) and "field" not in error
    assert error["message"] == "The metadata file is not valid JSON: Expecting ',' delimiter (line 3, column 3)."
    assert post(client, b"[1, 2]").json["errors"][0]["message"].startswith("The metadata file must hold one")


def test_citation_cff_paths_are_the_files_own(client):
    cff = b"title: Tool\nauthors:\n  - family-names: Doe\n    orcid: nope\nlicense: GPL-3\n"
    response = post(client, cff, filename="CITATION.cff")
    assert response.status_code == 400 and response.json["format"] == "CITATION.cff"
    errors = {e["field"]: e for e in response.json["errors"]}
    assert set(errors) == {"authors.0.orcid", "license"}
    assert "'GPL-3.0'" in errors["license"]["hint"]
    upload = client.post(VALIDATE, data={"file": (io.BytesIO(b"title: Tool\nauthors: [a"), "CITATION.cff")},
                         content_type="multipart/form-data")  # fmt: skip
    assert upload.status_code == 400 and upload.json["errors"][0]["line"] == 2


def test_command_line_reports_every_file(tmp_path, capsys):
    good = tmp_path / ".service.json"
    good.write_text('{"keywords": ["x"]}')
    bad = tmp_path / ".zenodo.json"
    bad.write_text(json.dumps({"licence": "MIT", "grants": [{"id": "10.13039/501100000780::1"}]}))
    broken = tmp_path / "CITATION.cff"
    broken.write_text("title: [x\n")
    assert validate_metadata.main([str(good)]) == 0
    assert capsys.readouterr().out == f"{good}: valid (JSON)\n"
    assert validate_metadata.main([str(good), str(bad), str(broken)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[1] == f"{bad}: INVALID, 1 problem (JSON)"
    assert out[2] == "  licence: Unknown field name. Hint: Did you mean 'license'?"
    assert out[3] == "  note: Grants and communities are checked by the service only (not offline)."
    assert out[4] == f"{broken}: INVALID, 1 problem (CITATION.cff)"
    assert out[5].startswith("  line 2, column 1: CITATION.cff is not valid YAML")
    assert validate_metadata.main(["--json", str(bad)]) == 1
    [report] = json.loads(capsys.readouterr().out)
    assert report["errors"] == [{"field": "licence", "message": "Unknown field name.",
                                 "hint": "Did you mean 'license'?"}]  # fmt: skip
    assert validate_metadata.main([str(tmp_path / "missing.json")]) == 2
    assert "cannot read" in capsys.readouterr().err


@pytest.mark.parametrize("name, publish", sorted(cli.SCHEMA_FILES.items()))
def test_schema_files_equal_what_the_code_derives(name, publish):
    written = (ROOT / "schemas" / name).read_text(encoding="utf-8")
    assert written == cli.schema_text(publish), (
        f"schemas/{name} is stale: run .venv/bin/python scripts/validate_metadata.py --write-schemas"
    )


def test_schemas_are_served_with_their_id(client, settings):
    response = client.get("/schemas/deposit-metadata.json")
    assert response.status_code == 200 and response.mimetype == "application/schema+json"
    expected = deposit_metadata_json_schema(schema_id=f"{settings.BASE_URL}/schemas/deposit-metadata.json")
    assert response.json == expected
    release_schema = client.get("/schemas/release-metadata.json").json
    jsonschema.Draft202012Validator.check_schema(release_schema)
    validator = jsonschema.Draft202012Validator(release_schema)
    assert validator.is_valid({"keywords": ["x"], "license": "MIT"})  # a .service.json needs no title
    assert not validator.is_valid({"licence": "MIT"})
    assert not jsonschema.Draft202012Validator(expected).is_valid({"keywords": ["x"]})
    assert client.get("/schemas/other.json").status_code == 404
