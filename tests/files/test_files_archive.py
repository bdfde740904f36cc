"""`/api/records/<id>/files-archive`: the whole record as one zip (or a BagIt bag), for whoever may read its files."""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import os
import zipfile
from urllib.parse import quote

import pytest
from helpers.factories import make_deposit, publish
from helpers.http import download
from lxml import etree
from sqlalchemy import delete, select

from repository.storage.tables.files import file_instances, objects
from repository.storage.tables.records import records
from scripts import takedown

FILES = {  # key -> contents; not compressible or compressible, a name that is not ASCII, one just past a chunk
    "readings.csv": b"time,value\n" + b"".join(b"%d,%d\n" % (n, n * n) for n in range(3000)),
    "données été.bin": bytes(range(256)) * 17,
    "big.bin": os.urandom(1024 * 1024 + 7),
}
FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0"  # a reader COUNTER counts
CHECKER = "curl/8.5.0"  # on the COUNTER robots list: reading the counts does not change them


def _record(client, auth, files: dict[str, bytes] = FILES, **metadata) -> dict:  # type: ignore[no-untyped-def]
    dep = make_deposit(client, auth, **metadata)
    bucket = dep["links"]["bucket"].removeprefix("https://localhost")
    for key, content in files.items():  # the bucket interface: keys as given (the form upload would rename them)
        assert client.put(f"{bucket}/{quote(key)}", data=content, headers=auth).status_code == 200
    publish(client, auth, dep)
    return client.get(f"/api/records/{dep['id']}", headers={**auth, "User-Agent": CHECKER}).json


def _archive(client, recid: int, headers: dict | None = None, query: str = "", method: str = "GET"):  # type: ignore[no-untyped-def]
    if method == "HEAD":
        return client.head(f"/api/records/{recid}/files-archive{query}", headers=headers or {})
    return download(client, f"/api/records/{recid}/files-archive{query}", headers=headers or {})


def _zip(response) -> zipfile.ZipFile:  # type: ignore[no-untyped-def]
    archive = zipfile.ZipFile(io.BytesIO(response.data))
    assert archive.testzip() is None  # every entry's CRC matches its bytes
    return archive


def test_the_archive_holds_every_file_with_its_checksum(client, auth):
    record = _record(client, auth)
    response = _archive(client, record["id"])
    assert response.status_code == 200
    assert response.mimetype == "application/zip"
    assert response.headers["Content-Length"] == str(len(response.data))  # known before the first byte
    assert response.headers["Content-Disposition"] == f'attachment; filename="{record["id"]}.zip"'
    assert "public" in response.headers["Cache-Control"]
    archive = _zip(response)
    assert archive.namelist() == [f["key"] for f in record["files"]]  # the record's order, at the root
    for entry in record["files"]:
        info = archive.getinfo(entry["key"])
        assert info.compress_type == zipfile.ZIP_STORED  # data files are mostly compressed already
        content = archive.read(entry["key"])
        assert content == FILES[entry["key"]]
        assert "md5:" + hashlib.md5(content).hexdigest() == entry["checksum"]
        assert info.file_size == entry["size"]


@pytest.mark.slow
def test_head_answers_the_headers_of_the_get(client, auth):
    record = _record(client, auth)
    head = _archive(client, record["id"], method="HEAD")
    get = _archive(client, record["id"])
    assert head.status_code == 200 and head.data == b""
    assert head.headers["Content-Length"] == get.headers["Content-Length"] == str(len(get.data))
    assert head.headers["Content-Disposition"] == get.headers["Content-Disposition"]


def test_a_get_counts_a_download_of_each_file_and_a_head_nothing(app, client, auth):
    record = _record(client, auth)
    services = app.extensions["repository"]
    assert _archive(client, record["id"], {"User-Agent": FIREFOX}, method="HEAD").status_code == 200
    services.stats.on_pass()
    assert client.get(f"/api/records/{record['id']}", headers={"User-Agent": CHECKER}).json["stats"]["downloads"] == 0
    assert _archive(client, record["id"], {"User-Agent": FIREFOX}).status_code == 200
    services.stats.on_pass()
    stats = client.get(f"/api/records/{record['id']}", headers={"User-Agent": CHECKER}).json["stats"]
    assert stats["version_downloads"] == len(FILES)
    assert stats["version_unique_downloads"] == 1
    assert stats["version_volume"] == sum(len(content) for content in FILES.values())


def test_restricted_files_only_for_the_owner(client, auth, make_token):
    other = {"Authorization": f"Bearer {make_token('other@example.org')}"}
    record = _record(client, auth, access_right="restricted", access_conditions="Ask us.")
    for headers in ({}, other):  # as a file download answers them: the files do not exist for them
        response = _archive(client, record["id"], headers)
        assert response.status_code == 404
        assert response.json["status"] == 404 and response.json["message"]
    response = _archive(client, record["id"], auth)
    assert response.status_code == 200
    assert "private" in response.headers["Cache-Control"] and "public" not in response.headers["Cache-Control"]
    assert "Authorization" in response.headers["Vary"]
    assert {name: _zip(response).read(name) for name in FILES} == FILES


@pytest.mark.slow
def test_closed_and_embargoed_files_are_not_archived_for_guests(client, auth):
    closed = _record(client, auth, {"a.txt": b"closed"}, access_right="closed")
    later = (dt.date.today() + dt.timedelta(days=30)).isoformat()
    embargoed = _record(client, auth, {"b.txt": b"later"}, access_right="embargoed", embargo_date=later)
    for record in (closed, embargoed):
        assert _archive(client, record["id"]).status_code == 404
        assert _archive(client, record["id"], method="HEAD").status_code == 404
        assert _archive(client, record["id"], auth).status_code == 200


def test_a_record_without_files_is_an_empty_zip(app, client, auth):
    record = _record(client, auth, {"only.txt": b"x"})
    # Publishing needs a file: a record holds none only when imported so (the reference's metadata-only records).
    with app.extensions["repository"].db.write() as conn:
        bucket = conn.execute(select(records.c.bucket_id).where(records.c.id == record["id"])).scalar()
        conn.execute(delete(objects).where(objects.c.bucket_id == bucket))
    response = _archive(client, record["id"])
    assert response.status_code == 200
    assert _zip(response).namelist() == []


def test_unknown_missing_and_deleted_records(client, auth, settings):
    assert _archive(client, 999999).status_code == 404
    assert _archive(client, 999999).json["status"] == 404
    record = _record(client, auth, {"gone.txt": b"soon gone"})
    assert takedown.main(["--recid", str(record["id"])], settings) == 0
    assert _archive(client, record["id"]).status_code == 410
    assert _archive(client, record["id"], auth).status_code == 410  # the owner too: the record is a tombstone


def test_a_concept_id_redirects_to_its_latest_version(client, auth):
    record = _record(client, auth, {"one.txt": b"1"})
    concept = int(record["conceptrecid"])
    response = client.get(f"/api/records/{concept}/files-archive?format=bagit")
    assert response.status_code == 301
    assert response.headers["Location"] == f"https://localhost/api/records/{record['id']}/files-archive?format=bagit"


def test_an_unknown_format_is_a_clear_error(client, auth):
    record = _record(client, auth, {"one.txt": b"1"})
    response = _archive(client, record["id"], query="?format=tar")
    assert response.status_code == 400
    assert response.json["errors"] == [{"field": "format", "message": "Expected one of zip, bagit, rocrate."}]


@pytest.mark.slow  # 0.4 s and more of work
def test_a_file_missing_on_disk_is_a_503_before_any_byte(app, client, auth, settings):
    record = _record(client, auth, {"one.txt": b"1", "two.txt": b"2"})
    with app.extensions["repository"].db.read() as conn:
        uri = conn.execute(select(file_instances.c.uri).join(objects, objects.c.file_id == file_instances.c.id)
                           .where(objects.c.key == "two.txt")).scalar()
    app.extensions["repository"].files.remove(uri)
    response = _archive(client, record["id"])
    assert response.status_code == 503
    assert response.mimetype == "application/json"


def _manifest(text: bytes) -> dict[str, str]:
    lines = text.decode().splitlines()
    return {path: digest for digest, path in (line.split("  ", 1) for line in lines)}


@pytest.mark.slow
def test_bagit_archive_is_a_valid_bag(client, auth):
    record = _record(client, auth)
    response = _archive(client, record["id"], query="?format=bagit")
    assert response.status_code == 200
    assert response.headers["Content-Length"] == str(len(response.data))
    bag = _zip(response)
    top = f"{record['id']}/"
    assert all(name.startswith(top) for name in bag.namelist())  # one top directory, named as the file
    read = {name[len(top):]: bag.read(name) for name in bag.namelist() if not name.endswith("/")}
    assert read["bagit.txt"] == b"BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n"
    info = dict(line.split(": ", 1) for line in read["bag-info.txt"].decode().splitlines())
    assert info["Payload-Oxum"] == f"{sum(len(c) for c in FILES.values())}.{len(FILES)}"
    assert info["External-Identifier"] == record["doi"]
    payload = {name: content for name, content in read.items() if name.startswith("data/")}
    assert payload == {f"data/{key}": content for key, content in FILES.items()}
    # Every payload file in every manifest, each digest right; MD5s are the record's stored checksums.
    for algorithm in ("md5", "sha256"):
        manifest = _manifest(read[f"manifest-{algorithm}.txt"])
        assert manifest == {name: hashlib.new(algorithm, content).hexdigest() for name, content in payload.items()}
    stored = {f"data/{f['key']}": f["checksum"] for f in record["files"]}
    assert {path: "md5:" + digest for path, digest in _manifest(read["manifest-md5.txt"]).items()} == stored
    tags = {name for name in read if not name.startswith("data/") and not name.startswith("tagmanifest-")}
    for algorithm in ("md5", "sha256"):
        manifest = _manifest(read[f"tagmanifest-{algorithm}.txt"])
        assert set(manifest) == tags
        assert all(hashlib.new(algorithm, read[name]).hexdigest() == digest for name, digest in manifest.items())
    # The record's metadata: DataCite XML naming its DOI, and its JSON as the API gives it.
    datacite = etree.fromstring(read["metadata/datacite.xml"])
    assert record["doi"] in [node.text for node in datacite.iter("{*}identifier")]
    assert json.loads(read["metadata/record.json"])["id"] == record["id"]


def test_bagit_of_a_record_without_files_keeps_its_payload_directory(app, client, auth):
    record = _record(client, auth, {"only.txt": b"x"})
    with app.extensions["repository"].db.write() as conn:
        bucket = conn.execute(select(records.c.bucket_id).where(records.c.id == record["id"])).scalar()
        conn.execute(delete(objects).where(objects.c.bucket_id == bucket))
    bag = _zip(_archive(client, record["id"], query="?format=bagit"))
    assert f"{record['id']}/data/" in bag.namelist()
    assert bag.read(f"{record['id']}/manifest-sha256.txt") == b""
    assert "Payload-Oxum: 0.0" in bag.read(f"{record['id']}/bag-info.txt").decode()


def test_the_landing_page_links_the_archive_when_the_files_are_readable(client, auth):
    open_record = _record(client, auth, {"one.txt": b"1"})
    restricted = _record(client, auth, {"two.txt": b"2"}, access_right="restricted", access_conditions="Ask us.")
    page = client.get(f"/records/{open_record['id']}").data.decode()
    assert f'href="https://localhost/api/records/{open_record["id"]}/files-archive"' in page
    assert "Download all (zip)" in page
    assert "files-archive" not in client.get(f"/records/{restricted['id']}").data.decode()
    assert "files-archive" in client.get(f"/records/{restricted['id']}", headers=auth).data.decode()


def test_the_archive_is_in_the_openapi_description(client):
    spec = client.get("/api/openapi.json").json
    operation = spec["paths"]["/api/records/{recid}/files-archive"]["get"]
    assert "zip" in operation["description"] or "zip" in operation.get("summary", "")


@pytest.mark.slow
def test_the_record_links_its_archive_and_lists_sha256s(client, auth):
    record = _record(client, auth)
    assert record["links"]["archive"] == f"https://localhost/api/records/{record['id']}/files-archive"
    assert _archive(client, record["id"]).status_code == 200
    for entries in (record["files"], client.get(f"/api/records/{record['id']}/files").json["entries"]):
        by_key = {e["key"]: e for e in entries}
        for key, content in FILES.items():
            assert by_key[key]["checksum"] == "md5:" + hashlib.md5(content).hexdigest()  # as the spec shapes it
    # The SHA-256s in the files listing (the record's file objects keep the reference's keys only)
    for entry in client.get(f"/api/records/{record['id']}/files").json["entries"]:
        content = FILES[entry["key"]]
        assert entry["checksums"] == {"md5": hashlib.md5(content).hexdigest(),
                                      "sha256": hashlib.sha256(content).hexdigest()}


def test_no_archive_link_where_the_files_are_hidden(client, auth):
    record = _record(client, auth, {"a.txt": b"closed"}, access_right="closed")
    guest = client.get(f"/api/records/{record['id']}").json
    assert "archive" not in guest["links"] and "files" not in guest
    assert record["links"]["archive"].endswith(f"/api/records/{record['id']}/files-archive")  # the owner's view
