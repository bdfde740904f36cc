"""JSON (and YAML) nested past the bound every reader shares gives a 400 error object, never a 500 (issue 14.7);
a deposited document nested so is reported invalid, never left pending."""

from __future__ import annotations

import io

import pytest
from helpers.factories import make_deposit

from repository.jsonlimits import MAX_DEPTH

DEEP = [MAX_DEPTH + 1, 1_000, 100_000]  # past the bound; past Python's recursion limit; past orjson's own limit


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def corpus(depth: int) -> bytes:
    return b'{"research_software": ' + nested(depth) + b"}"


def test_the_bound_itself_is_accepted(client, auth):
    fine = client.post("/api/datadesc/validate", data=corpus(MAX_DEPTH - 1), content_type="application/json")
    assert fine.status_code == 200 and fine.json["status"] == "invalid"  # a list is not a ResearchSoftware


@pytest.mark.parametrize("depth", DEEP)
def test_datadesc_validate(client, depth):
    body = client.post("/api/datadesc/validate", data=corpus(depth), content_type="application/json")
    assert body.status_code == 400 and body.json["status"] == 400
    assert f"nested deeper than {MAX_DEPTH} levels" in body.json["message"]
    part = client.post("/api/datadesc/validate?kind=software_corpus",
                       data={"document": (io.BytesIO(corpus(depth)), "tools.json")},
                       content_type="multipart/form-data")  # fmt: skip
    assert part.status_code == 400 and f"nested deeper than {MAX_DEPTH} levels" in part.json["message"]


@pytest.mark.parametrize("depth", DEEP)
def test_metadata_validate(client, depth):
    response = client.post("/api/metadata/validate", data=b'{"title": ' + nested(depth) + b"}",
                           content_type="application/json")  # fmt: skip
    assert response.status_code == 400 and response.json["status"] == 400
    assert any("nested deeper than" in e["message"] for e in response.json["errors"])


@pytest.mark.slow
@pytest.mark.parametrize("depth", DEEP)
def test_metadata_validate_cff(client, depth):
    cff = b"cff-version: 1.2.0\ntitle: " + nested(depth) + b"\n"
    response = client.post("/api/metadata/validate?filename=CITATION.cff", data=cff,
                           content_type="application/octet-stream")  # fmt: skip
    assert response.status_code == 400 and any("nested deeper than" in e["message"] for e in response.json["errors"])


def test_metadata_validate_cff_alias_bomb(client):
    # Nine levels of ten aliases: a 1 KB file that expands to a billion values.
    lines = ["cff-version: 1.2.0", "a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    lines.append("title: *a8")
    response = client.post("/api/metadata/validate?filename=CITATION.cff", data="\n".join(lines).encode(),
                           content_type="application/octet-stream")  # fmt: skip
    assert response.status_code == 400
    assert any("aliases are expanded" in e["message"] for e in response.json["errors"])


@pytest.mark.parametrize("depth", DEEP)
def test_json_bodies(client, auth, depth):
    response = client.post("/api/deposit/depositions", data=b'{"metadata": {"title": ' + nested(depth) + b"}}",
                           headers=auth, content_type="application/json")  # fmt: skip
    assert response.status_code == 400 and response.json["status"] == 400
    assert "nested deeper than" in response.json["message"]
    assert client.get("/api/deposit/depositions", headers=auth).json == []  # nothing was stored


def test_deposited_corpus_nested_too_deeply_is_invalid_not_pending(app, client, auth):
    dep = make_deposit(client, auth)
    upload = client.post(f"/api/deposit/depositions/{dep['id']}/files",
                         data={"name": "tools.json", "file": (io.BytesIO(corpus(5_000)), "tools.json")},
                         headers=auth, content_type="multipart/form-data")  # fmt: skip
    assert upload.status_code == 201
    app.extensions["repository"].validations.wait_idle()
    report = client.get(f"/api/deposit/depositions/{dep['id']}/files/{upload.json['id']}/validation", headers=auth)
    assert report.status_code == 200 and report.json["status"] == "invalid"
    assert report.json["errors"][0]["code"] == "depth"
