"""RO-Crate, Croissant, CodeMeta and CITATION.cff through the record API (`?format=`, `Accept` with a profile), and
the RO-Crate archive (`files-archive?format=rocrate`): the files a descriptor describes, who may have them, and
the records a format does not describe."""

from __future__ import annotations

import io
import json
import zipfile
from urllib.parse import quote

import pytest
import yaml
from helpers.factories import make_deposit, publish
from helpers.format_validators import cff_errors, croissant_warnings, rocrate_issues

pytestmark = pytest.mark.filterwarnings("ignore:ConjunctiveGraph is deprecated:DeprecationWarning")

TABLE = b"country,year,value\nNorway,2020,1.5\nChile,2021,2\n"
DESCRIPTOR = {"name": "readings", "resources": [{"name": "readings", "path": "readings.csv", "schema": {"fields": [
    {"name": "country", "type": "string"}, {"name": "year", "type": "integer"}, {"name": "value", "type": "number"}]}}]}
FILES = {"readings.csv": TABLE, "datapackage.json": json.dumps(DESCRIPTOR).encode(), "notes.txt": b"calibrated"}


def _record(client, auth, files: dict[str, bytes] = FILES, **metadata) -> dict:  # type: ignore[no-untyped-def]
    dep = make_deposit(client, auth, **metadata)
    bucket = dep["links"]["bucket"].removeprefix("https://localhost")
    for key, content in files.items():
        assert client.put(f"{bucket}/{quote(key)}", data=content, headers=auth).status_code == 200
    publish(client, auth, dep)
    return client.get(f"/api/records/{dep['id']}", headers=auth).json


def _crate(response) -> zipfile.ZipFile:  # type: ignore[no-untyped-def]
    assert response.status_code == 200, response.data[:300]
    assert response.mimetype == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.response)))
    assert archive.testzip() is None
    return archive


@pytest.mark.slow
def test_the_rocrate_archive_is_a_valid_crate_holding_the_files(client, auth, monkeypatch, tmp_path):
    record = _record(client, auth, upload_type="dataset")
    archive = _crate(client.get(f"/api/records/{record['id']}/files-archive?format=rocrate"))
    assert archive.namelist() == ["ro-crate-metadata.json", *FILES]
    archive.extractall(tmp_path)
    assert rocrate_issues(monkeypatch, folder=tmp_path) == []
    graph = json.loads(archive.read("ro-crate-metadata.json"))["@graph"]
    files = {entity["@id"]: entity for entity in graph if entity.get("@type") == "File"}
    assert set(files) == set(FILES)
    readings = files["readings.csv"]
    stored = {f["key"]: f for f in client.get(f"/api/records/{record['id']}/files").json["entries"]}
    assert readings["md5"] == stored["readings.csv"]["checksums"]["md5"]
    assert readings["sha256"] == stored["readings.csv"]["checksums"]["sha256"]
    assert readings["contentSize"] == str(len(TABLE)) and readings["encodingFormat"] == "text/csv"


@pytest.mark.slow
def test_the_crate_metadata_through_the_record_api(client, auth, monkeypatch):
    record = _record(client, auth, upload_type="dataset")
    profile = "https://w3id.org/ro/crate/1.1"
    for query, headers in (("?format=rocrate", {}), ("", {"Accept": f'application/ld+json; profile="{profile}"'})):
        answer = client.get(f"/api/records/{record['id']}{query}", headers=headers)
        assert answer.status_code == 200
        assert answer.headers["Content-Type"] == f'application/ld+json; profile="{profile}"'
        document = answer.json
        assert rocrate_issues(monkeypatch, metadata=document) == []
    root = next(entity for entity in document["@graph"] if entity["@id"] == "./")
    assert root["identifier"] == f"https://doi.org/{record['doi']}"
    # A plain JSON-LD request still gets schema.org's JSON-LD.
    assert client.get(f"/api/records/{record['id']}", headers={"Accept": "application/ld+json"}).json["@context"] \
        == "https://schema.org/"


def test_the_rocrate_archive_follows_the_archives_access_rules(client, auth, make_token):
    record = _record(client, auth, {"a.txt": b"restricted"}, access_right="restricted", access_conditions="Ask.")
    other = {"Authorization": f"Bearer {make_token('other@example.org')}"}
    url = f"/api/records/{record['id']}/files-archive?format=rocrate"
    for headers in ({}, other):
        answer = client.get(url, headers=headers)
        assert answer.status_code == 404 and answer.json["status"] == 404
    archive = _crate(client.get(url, headers=auth))
    assert archive.namelist() == ["ro-crate-metadata.json", "a.txt"]
    # The detached crate a guest reads lists no file either.
    graph = client.get(f"/api/records/{record['id']}?format=rocrate").json["@graph"]
    assert not [entity for entity in graph if entity.get("@type") == "File"]


def test_a_file_named_as_the_crate_metadata_is_a_conflict(client, auth):
    record = _record(client, auth, {"ro-crate-metadata.json": b"{}"})
    answer = client.get(f"/api/records/{record['id']}/files-archive?format=rocrate")
    assert answer.status_code == 409 and "ro-crate-metadata.json" in answer.json["message"]
    assert client.get(f"/api/records/{record['id']}/files-archive").status_code == 200  # a plain zip still


@pytest.mark.slow
def test_croissant_of_a_dataset_types_its_described_table(client, auth):
    record = _record(client, auth, upload_type="dataset")
    answer = client.get(f"/api/records/{record['id']}?format=croissant")
    assert answer.status_code == 200
    assert answer.headers["Content-Type"] == 'application/ld+json; profile="http://mlcommons.org/croissant/1.0"'
    document = answer.json
    assert croissant_warnings(document) <= {w for w in croissant_warnings(document) if "version" in w}
    [record_set] = document["recordSet"]
    assert [(f["name"], f["dataType"]) for f in record_set["field"]] == [
        ("country", "sc:Text"), ("year", "sc:Integer"), ("value", "sc:Float")]
    assert {d["name"] for d in document["distribution"]} == set(FILES)
    assert all(d["sha256"] and d["md5"] for d in document["distribution"])


@pytest.mark.slow
@pytest.mark.parametrize(("fmt", "upload_type"), [("croissant", "software"), ("codemeta", "dataset"),
                                                  ("cff", "publication")])
def test_a_format_refuses_a_record_it_does_not_describe(client, auth, fmt, upload_type):
    extra = {"publication_type": "article"} if upload_type == "publication" else {}
    record = _record(client, auth, {"a.txt": b"1"}, upload_type=upload_type, **extra)
    answer = client.get(f"/api/records/{record['id']}?format={fmt}")
    assert answer.status_code == 406
    assert answer.json["status"] == 406 and answer.json["errors"][0]["field"] == "format"
    page = client.get(f"/records/{record['id']}").data.decode()
    assert f"?format={fmt}\"" not in page  # nor offered on the record's page


@pytest.mark.slow
def test_codemeta_and_cff_of_a_software_record(client, auth):
    record = _record(client, auth, {"tool-1.0.zip": b"PK"}, upload_type="software", version="1.0.0")
    codemeta = client.get(f"/api/records/{record['id']}?format=codemeta")
    assert codemeta.status_code == 200
    assert codemeta.headers["Content-Type"] == 'application/ld+json; profile="https://w3id.org/codemeta/3.0"'
    assert codemeta.json["@type"] == "SoftwareSourceCode" and codemeta.json["version"] == "1.0.0"
    cff = client.get(f"/api/records/{record['id']}", headers={"Accept": "application/x-cff+yaml"})
    assert cff.status_code == 200 and cff.headers["Content-Type"] == "application/x-cff+yaml"
    assert cff_errors(cff.data.decode()) == []
    assert yaml.safe_load(cff.data)["doi"] == record["doi"]


def test_a_search_page_holds_the_documents_of_the_records_a_format_describes(client, auth):
    dataset = _record(client, auth, {"a.txt": b"1"}, upload_type="dataset")
    software = _record(client, auth, {"b.zip": b"2"}, upload_type="software")
    croissants = client.get("/api/records/?format=croissant")
    assert croissants.status_code == 200
    assert [d["url"] for d in croissants.json] == [dataset["links"]["html"]]
    stream = client.get("/api/records/", headers={"Accept": "application/x-cff+yaml"})
    assert stream.status_code == 200
    assert sorted(d["type"] for d in yaml.safe_load_all(stream.data)) == ["dataset", "software"]
    assert {d["url"] for d in client.get("/api/records/?format=codemeta").json} == {software["links"]["html"]}


@pytest.mark.slow  # 0.4 s and more of work
@pytest.mark.parametrize("descriptor", [b"{not json", b'{"resources": "none"}', json.dumps(
    {"resources": [{"path": "readings.csv", "schema": {"fields": [{"name": 7}, "x", {"name": "a b/c", "type": 3}]}}]}
).encode()])
def test_a_broken_descriptor_leaves_the_table_undescribed(client, auth, descriptor):
    record = _record(client, auth, {"readings.csv": TABLE, "datapackage.json": descriptor}, upload_type="dataset")
    answer = client.get(f"/api/records/{record['id']}?format=croissant")
    assert answer.status_code == 200
    assert "recordSet" not in answer.json and croissant_warnings(answer.json) <= {
        w for w in croissant_warnings(answer.json) if "version" in w}
