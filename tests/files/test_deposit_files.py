"""Both file interfaces: multipart (100 MB cap, sort, rename, delete) and the bucket (streamed, any size)."""

import hashlib
import io
from pathlib import Path

import pytest
from helpers.factories import make_deposit, publish, upload
from helpers.http import download, https_client
from helpers.seaweed import stored_paths

from app import create_app
from repository.files.sweeper import sweep

API = "/api/deposit/depositions"


def stored_files(settings) -> list[str]:  # type: ignore[no-untyped-def]
    return stored_paths(settings)


@pytest.mark.slow
def test_multipart_upload_list_get_rename_sort_delete(client, auth):
    dep = make_deposit(client, auth)
    first = upload(client, auth, dep, name="b data.csv", content=b"1,2\n")
    assert first["name"] == first["filename"] == "b_data.csv"  # secure names in the old interface
    assert first["filesize"] == 4 and first["checksum"] == hashlib.md5(b"1,2\n").hexdigest()
    assert first["links"]["self"] == f"https://localhost{API}/{dep['id']}/files/{first['id']}"
    second = upload(client, auth, dep, name="a.txt", content=b"hello")
    listed = client.get(f"{API}/{dep['id']}/files", headers=auth).json
    assert [f["filename"] for f in listed] == ["b_data.csv", "a.txt"]
    ordered = client.put(f"{API}/{dep['id']}/files", json=[{"id": second["id"]}, {"id": first["id"]}], headers=auth)
    assert [f["filename"] for f in ordered.json] == ["a.txt", "b_data.csv"]
    assert client.put(f"{API}/{dep['id']}/files", json=[{"name": "x"}], headers=auth).status_code == 400
    assert client.put(f"{API}/{dep['id']}/files", json=[{"id": "nope"}], headers=auth).status_code == 400
    by_id = client.get(f"{API}/{dep['id']}/files/{second['id']}", headers=auth).json
    by_key = client.get(f"{API}/{dep['id']}/files/a.txt", headers=auth).json
    assert by_id == by_key
    renamed = client.put(f"{API}/{dep['id']}/files/{second['id']}", json={"name": "greeting.txt"}, headers=auth)
    assert renamed.status_code == 200 and renamed.json["filename"] == "greeting.txt"
    again = client.put(f"{API}/{dep['id']}/files/{second['id']}", json={"filename": "hi.txt"}, headers=auth)
    assert again.json["filename"] == "hi.txt"
    clash = client.put(f"{API}/{dep['id']}/files/{second['id']}", json={"name": "b_data.csv"}, headers=auth)
    assert clash.status_code == 400
    duplicate = client.post(
        f"{API}/{dep['id']}/files", data={"name": "hi.txt", "file": (io.BytesIO(b"x"), "hi.txt")}, headers=auth,
        content_type="multipart/form-data",
    )
    assert duplicate.status_code == 400 and duplicate.json["message"] == "Filename already exists."
    assert client.delete(f"{API}/{dep['id']}/files/{second['id']}", headers=auth).status_code == 204
    assert client.delete(f"{API}/{dep['id']}/files/{second['id']}", headers=auth).status_code == 404
    assert [f["filename"] for f in client.get(f"{API}/{dep['id']}/files", headers=auth).json] == ["b_data.csv"]


def test_multipart_needs_a_file(client, auth):
    dep = make_deposit(client, auth)
    response = client.post(f"{API}/{dep['id']}/files", data={"name": "x"}, headers=auth,
                           content_type="multipart/form-data")
    assert response.status_code == 400


def test_multipart_over_the_limit_is_413_and_leaves_nothing(make_settings, make_token):
    settings = make_settings(MAX_MULTIPART_BYTES=1000)
    client = https_client(create_app(settings))
    auth = {"Authorization": f"Bearer {make_token()}"}
    dep = make_deposit(client, auth)
    response = client.post(
        f"{API}/{dep['id']}/files", data={"name": "big.bin", "file": (io.BytesIO(b"x" * 5000), "big.bin")},
        headers=auth, content_type="multipart/form-data",
    )
    assert response.status_code == 413 and response.json["status"] == 413
    assert client.get(f"{API}/{dep['id']}/files", headers=auth).json == []
    assert stored_files(settings) == []


def test_bucket_put_get_replace_delete(client, auth):
    dep = make_deposit(client, auth)
    bucket = dep["links"]["bucket"].replace("https://localhost", "")
    body = b"\x00binary\xff" * 1000
    response = client.put(f"{bucket}/raw data.bin", data=body, headers=auth)
    assert response.status_code == 200
    obj = response.json
    assert obj["key"] == "raw data.bin" and obj["size"] == len(body)
    assert obj["checksum"] == "md5:" + hashlib.md5(body).hexdigest()
    assert obj["is_head"] is True and obj["delete_marker"] is False
    assert obj["links"]["version"] == obj["links"]["self"] + "?versionId=" + obj["version_id"]
    listing = client.get(bucket, headers=auth).json
    assert [o["key"] for o in listing["contents"]] == ["raw data.bin"] and listing["size"] == len(body)
    assert download(client, f"{bucket}/raw data.bin", headers=auth).data == body
    replaced = client.put(f"{bucket}/raw data.bin", data=b"new", headers=auth).json
    assert replaced["size"] == 3 and replaced["version_id"] != obj["version_id"]
    assert download(client, f"{bucket}/raw data.bin", headers=auth).data == b"new"
    # The deposit's file list shows bucket uploads too.
    assert [f["filename"] for f in client.get(f"{API}/{dep['id']}", headers=auth).json["files"]] == ["raw data.bin"]
    assert client.delete(f"{bucket}/raw data.bin", headers=auth).status_code == 204
    assert client.get(f"{bucket}/raw data.bin", headers=auth).status_code == 404


def test_bucket_keys_never_escape(client, auth, settings):
    dep = make_deposit(client, auth)
    bucket = dep["links"]["bucket"].replace("https://localhost", "")
    response = client.put(f"{bucket}/../../../etc/escape.txt", data=b"x", headers=auth)
    if response.status_code == 200:
        assert response.json["key"].endswith("escape.txt")
    assert not (Path(settings.FILES_ROOT).parent / "etc").exists()
    assert not any(p.name == "escape.txt" for p in Path(settings.INSTANCE_PATH).rglob("*"))
    assert client.put(f"{bucket}/bad\x01name", data=b"x", headers=auth).status_code == 400


def test_bucket_belongs_to_its_owner(client, auth, make_token):
    dep = make_deposit(client, auth)
    bucket = dep["links"]["bucket"].replace("https://localhost", "")
    client.put(f"{bucket}/a.txt", data=b"x", headers=auth)
    other = {"Authorization": f"Bearer {make_token('other@example.org')}"}
    assert client.put(f"{bucket}/b.txt", data=b"x", headers=other).status_code == 404
    assert client.get(f"{bucket}/a.txt", headers=other).status_code == 404
    assert client.get(f"{bucket}/a.txt").status_code == 404
    assert client.get(bucket, headers=other).status_code == 404
    assert client.put(f"{bucket}/b.txt", data=b"x").status_code == 401


def test_published_bucket_is_locked(client, auth):
    dep = make_deposit(client, auth)
    bucket = dep["links"]["bucket"].replace("https://localhost", "")
    client.put(f"{bucket}/a.txt", data=b"x", headers=auth)
    publish(client, auth, dep)
    response = client.put(f"{bucket}/b.txt", data=b"x", headers=auth)
    assert response.status_code == 403 and "locked" in response.json["message"]
    assert client.delete(f"{bucket}/a.txt", headers=auth).status_code == 403
    record_bucket = client.get(f"/api/records/{dep['id']}").json["links"]["bucket"].replace("https://localhost", "")
    assert client.put(f"{record_bucket}/c.txt", data=b"x", headers=auth).status_code == 403


def test_orphans_from_a_crash_are_swept(app, settings):
    store = app.extensions["repository"].files
    stored = store.write(io.BytesIO(b"written but never committed"))
    assert Path(store.path(stored.uri)).exists()
    with app.extensions["repository"].db.read() as conn:
        assert sweep(store, conn, min_age=0) == 1
    assert stored_files(settings) == []


def test_large_uploads_through_both_interfaces_keep_every_byte(make_settings, make_token):
    """Past the first 1 MiB chunk the store hashes and writes in a second thread while it reads: the bytes and
    the checksum must come out exactly as sent, and a body over the limit must still leave nothing behind."""
    settings = make_settings(MAX_MULTIPART_BYTES=3 * 1024 * 1024)
    client = https_client(create_app(settings))
    auth = {"Authorization": f"Bearer {make_token()}"}
    dep = make_deposit(client, auth)
    body = bytes(range(256)) * (4 * 4096 + 77)  # ~4.0 MiB, not a multiple of the chunk size
    bucket = dep["links"]["bucket"].replace("https://localhost", "")
    obj = client.put(f"{bucket}/big.bin", data=io.BytesIO(body), headers=auth).json
    assert obj["size"] == len(body) and obj["checksum"] == "md5:" + hashlib.md5(body).hexdigest()
    assert download(client, f"{bucket}/big.bin", headers=auth).data == body

    # The multipart body built by hand: the test client would spool it to a temporary file it never closes.
    form = (b'--B\r\nContent-Disposition: form-data; name="name"\r\n\r\nhuge.bin\r\n'
            b'--B\r\nContent-Disposition: form-data; name="file"; filename="huge.bin"\r\n\r\n' +
            body[:3 * 1024 * 1024 + 100] +  # just past the limit: found while streaming, in the second chunk
            b"\r\n--B--\r\n")
    too_big = client.post(f"{API}/{dep['id']}/files", data=form, headers=auth,
                          content_type="multipart/form-data; boundary=B")
    assert too_big.status_code == 413
    assert [f["filename"] for f in client.get(f"{API}/{dep['id']}/files", headers=auth).json] == ["big.bin"]
    assert len(stored_files(settings)) == 1
