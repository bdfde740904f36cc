"""`POST /api/datadesc/validate` (no deposit needed, anonymous allowed) and the two schema URLs."""

from __future__ import annotations

import copy
import io
import json

from helpers.datadesc_docs import CODEBOOK, CORPUS, INVALID_ROWS, VALID_ROWS, csv_bytes, descriptor_bytes
from helpers.http import https_client

from app import create_app
from repository.datadesc import load_schema

URL = "/api/datadesc/validate"


def _multipart(client, document: tuple[bytes, str], *tables: tuple[bytes, str], query: str = ""):  # type: ignore[no-untyped-def]
    data = {"document": (io.BytesIO(document[0]), document[1])}
    if tables:
        data["files"] = [(io.BytesIO(content), name) for content, name in tables]
    return client.post(URL + query, data=data, content_type="multipart/form-data")


def test_package_with_its_tables(client):
    valid = _multipart(
        client, (descriptor_bytes(), "datapackage.json"), (csv_bytes(*VALID_ROWS), "data.csv"), (CODEBOOK, "codebook.md")
    )
    assert valid.status_code == 200
    assert valid.json["status"] == "valid" and valid.json["summary"]["rows_checked"] == len(VALID_ROWS)
    invalid = _multipart(
        client, (descriptor_bytes(), "datapackage.json"), (csv_bytes(*INVALID_ROWS), "data.csv"), (CODEBOOK, "codebook.md")
    )
    assert invalid.status_code == 200 and invalid.json["status"] == "invalid"
    assert [(e["row"], e["column"]) for e in invalid.json["errors"]] == [(2, "year"), (3, "country"), (4, "value")]
    alone = _multipart(client, (descriptor_bytes(), "datapackage.json"))
    assert {e["field"] for e in alone.json["errors"]} == {"codebook", "resources.0.path"}


def test_descriptor_written_to_the_specification_needs_no_codebook(client):
    # The specification's descriptor has no `codebook` field (issue 15.8); one that names a codebook is checked.
    descriptor = json.loads(descriptor_bytes())
    del descriptor["codebook"]
    response = _multipart(client, (json.dumps(descriptor).encode(), "datapackage.json"), (csv_bytes(*VALID_ROWS), "data.csv"))
    assert response.status_code == 200 and response.json["status"] == "valid", response.json
    named = _multipart(client, (descriptor_bytes(), "datapackage.json"), (csv_bytes(*VALID_ROWS), "data.csv"))
    assert [(e["field"], e["code"]) for e in named.json["errors"]] == [("codebook", "missing-file")]


def test_software_corpus_as_json_body_or_part(client):
    valid = client.post(URL, json=CORPUS)
    assert valid.status_code == 200 and valid.json == {
        "kind": "software_corpus", "status": "valid", "errors": [],
        "summary": {"research_software": 1, "mentions": 1, "truncated": False, "errors": 0},
    }  # fmt: skip
    invalid = client.post(URL, json={**CORPUS, "date": "yesterday"})
    assert invalid.status_code == 200 and [e["field"] for e in invalid.json["errors"]] == ["date"]
    as_part = _multipart(client, (json.dumps(CORPUS).encode(), "tools.json"))
    assert as_part.json["status"] == "valid"
    forced = _multipart(client, (b'{"x": 1}', "whatever.txt"), query="?kind=software_corpus")
    assert forced.status_code == 200 and forced.json["status"] == "invalid"
    syntax = client.post(URL, data=b'{"research_software": }', content_type="application/json")
    assert syntax.status_code == 200 and syntax.json["errors"][0]["code"] == "json"


def test_corpus_license_must_be_an_spdx_identifier(client):
    doc = copy.deepcopy(CORPUS)
    doc["research_software"][0]["repositories"][0]["latest"]["licenses"][0]["license"] = "Whatever licence"
    response = client.post(URL, json=doc)
    assert response.status_code == 200 and response.json["status"] == "invalid"
    assert [e["field"] for e in response.json["errors"]] == ["research_software.0.repositories.0.latest.licenses.0.license"]


def test_unusable_requests(client):
    assert client.post(URL, data={"files": (io.BytesIO(b"x"), "a.csv")}, content_type="multipart/form-data").status_code == 400
    not_a_document = _multipart(client, (b"a,b\n", "data.csv"))
    assert not_a_document.status_code == 400 and "?kind=" in not_a_document.json["message"]
    assert client.post(URL + "?kind=poem", json=CORPUS).status_code == 400
    assert client.post(URL, data=b"hello", content_type="text/plain").status_code == 415
    assert client.post(URL, data=b"", content_type="application/json").status_code == 400


def test_json_body_over_the_limit_is_413(make_settings):
    app = create_app(make_settings(MAX_JSON_BYTES=100))
    try:
        response = https_client(app).post(URL, json=CORPUS)
        assert response.status_code == 413
    finally:
        app.extensions["repository"].db.dispose()


def test_schemas_are_served(client):
    for url, name in (
        ("/schemas/software-corpus.json", "software-corpus"),
        ("/schemas/tabular-datapackage.json", "tabular-datapackage"),
    ):
        response = client.get(url)
        assert response.status_code == 200
        assert response.mimetype == "application/schema+json"
        assert json.loads(response.data) == load_schema(name)
