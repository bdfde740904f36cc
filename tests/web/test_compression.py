"""Compressed responses: JSON, XML and HTML past COMPRESS_MIN_BYTES when Accept-Encoding allows; file downloads
never, so their bytes, Content-Length, ETag and Range answers stay exact."""

from __future__ import annotations

import gzip
import json

import brotli
import pytest
from helpers.factories import published
from helpers.http import download, https_client

from app import create_app

GZIP = {"Accept-Encoding": "gzip"}
CONTENT = b'{"readings": [' + b", ".join(b"%d" % (i % 10) for i in range(20_000)) + b"]}"  # compresses well


@pytest.fixture
def client(make_settings):  # type: ignore[no-untyped-def]
    return https_client(create_app(make_settings(COMPRESS_MIN_BYTES=200)))


def test_json_is_gzipped_when_the_client_accepts_it(client):
    plain = client.get("/api/openapi.json")
    assert "Content-Encoding" not in plain.headers
    packed = client.get("/api/openapi.json", headers=GZIP)
    assert packed.status_code == 200 and packed.headers["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in packed.headers["Vary"]
    assert int(packed.headers["Content-Length"]) == len(packed.data) < len(plain.data) / 3
    assert json.loads(gzip.decompress(packed.data)) == plain.json


def test_brotli_is_preferred_when_accepted(client):
    packed = client.get("/api/openapi.json", headers={"Accept-Encoding": "gzip, br"})
    assert packed.headers["Content-Encoding"] == "br"  # the better of the two the client accepts
    assert json.loads(brotli.decompress(packed.data))["openapi"].startswith("3.")
    refused = client.get("/api/openapi.json", headers={"Accept-Encoding": "gzip;q=0, identity"})
    assert "Content-Encoding" not in refused.headers


def test_xml_and_html_are_gzipped_too(client):
    oai = client.get("/oai2d?verb=Identify", headers=GZIP)
    assert oai.mimetype == "text/xml" and oai.headers["Content-Encoding"] == "gzip"
    assert b"<Identify>" in gzip.decompress(oai.data)
    page = client.get("/login/", headers=GZIP)
    assert page.mimetype == "text/html" and page.headers["Content-Encoding"] == "gzip"
    assert b"<form" in gzip.decompress(page.data)


def test_small_answers_are_sent_as_they_are(client):
    small = client.get("/healthz", headers=GZIP)
    assert small.json == {"status": "ok"} and "Content-Encoding" not in small.headers


@pytest.mark.slow  # 0.4 s and more of work
def test_file_downloads_are_never_compressed(client, make_token):
    auth = {"Authorization": f"Bearer {make_token()}"}
    dep = published(client, auth, content=CONTENT)
    record = client.get(f"/api/records/{dep['id']}").json
    url = record["files"][0]["links"]["self"].replace("https://localhost", "")
    plain = download(client, url)
    whole = download(client, url, headers={"Accept-Encoding": "gzip, br, zstd"})
    assert whole.status_code == 200 and "Content-Encoding" not in whole.headers
    assert whole.data == CONTENT and int(whole.headers["Content-Length"]) == len(CONTENT)
    assert whole.headers["ETag"] == plain.headers["ETag"]
    part = download(client, url, headers={"Accept-Encoding": "gzip", "Range": "bytes=100-1099"})
    assert part.status_code == 206 and "Content-Encoding" not in part.headers
    assert part.data == CONTENT[100:1100] and part.headers["Content-Range"] == f"bytes 100-1099/{len(CONTENT)}"
    same = download(client, url, headers={"Accept-Encoding": "gzip", "If-None-Match": plain.headers["ETag"]})
    assert same.status_code == 304
