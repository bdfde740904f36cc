"""`/api/exports/`: the latest exports with links to their files, served whole, by byte range and conditionally."""

from __future__ import annotations

import hashlib

import pytest
from helpers.exports import export

from repository.exports import folder

BASE = "https://localhost"


@pytest.fixture
def listed(client, settings, corpus) -> dict:  # type: ignore[no-untyped-def]
    """The newest export as /api/exports/ lists it, written by the command to EXPORTS_ROOT."""
    assert export(settings) == 0
    answer = client.get("/api/exports/")
    assert answer.status_code == 200
    assert answer.json["links"]["self"] == f"{BASE}/api/exports/"
    return answer.json["exports"][0]


def test_an_instance_without_exports_lists_none(client) -> None:
    answer = client.get("/api/exports/")
    assert answer.status_code == 200 and answer.json["exports"] == []


@pytest.mark.slow
def test_the_list_links_every_file_and_the_manifest(client, listed) -> None:
    assert set(listed["files"]) == {folder.JSONL, folder.DATACITE}
    for name, about in listed["files"].items():
        link = about["links"]["self"]
        assert link == f"{BASE}/api/exports/{listed['id']}/{name}"
        body = client.get(link.removeprefix(BASE))
        assert body.status_code == 200
        assert hashlib.sha256(body.data).hexdigest() == about["sha256"]
        assert body.headers["ETag"] == f'"sha256:{about["sha256"]}"'
        assert body.headers["Accept-Ranges"] == "bytes"
    manifest = client.get(listed["links"]["manifest"].removeprefix(BASE))
    assert manifest.status_code == 200
    assert manifest.get_json(force=True)["files"][folder.JSONL]["sha256"] == listed["files"][folder.JSONL]["sha256"]


@pytest.mark.slow
def test_a_download_answers_ranges_and_conditional_requests(client, listed) -> None:
    about = listed["files"][folder.JSONL]
    path = about["links"]["self"].removeprefix(BASE)
    whole = client.get(path).data
    part = client.get(path, headers={"Range": "bytes=10-19"})
    assert part.status_code == 206 and part.data == whole[10:20]
    assert part.headers["Content-Range"] == f"bytes 10-19/{len(whole)}"
    etag = f'"sha256:{about["sha256"]}"'
    assert client.get(path, headers={"If-None-Match": etag}).status_code == 304
    stale = client.get(path, headers={"Range": "bytes=0-9", "If-Range": '"sha256:other"'})
    assert stale.status_code == 200 and stale.data == whole
    refused = client.get(path, headers={"Range": f"bytes={len(whole) + 5}-"})
    assert refused.status_code == 416 and refused.json["status"] == 416
    assert client.get(path, headers={"If-Match": '"sha256:other"'}).status_code == 412


@pytest.mark.slow
@pytest.mark.parametrize("path", [
    "/api/exports/20260101T000000Z/records.jsonl.gz",  # no such export
    "/api/exports/{id}/other.txt",  # no such file
    "/api/exports/{id}/.lock",
    "/api/exports/..%2F..%2Fetc/passwd",
    "/api/exports/{id}/..%2Fmanifest.json",
    "/api/exports/.lock/manifest.json",
])
def test_unknown_exports_and_files_are_404_error_objects(client, listed, path) -> None:
    answer = client.get(path.format(id=listed["id"]))
    assert answer.status_code == 404
    assert answer.json["status"] == 404 and answer.json["message"]
