"""The resumable multipart protocol on the S3 store (repository.files.objectparts): parts of 5 MiB and more are the
parts of an S3 multipart upload, smaller ones staged objects; the protocol's state is in the database, so a second
app with its own FILES_ROOT takes an upload over; complete checks the store's parts against the ETags recorded;
abort and expiry (the services' clock moved) abort the S3 upload; the orphan sweep leaves the open ones alone."""

from __future__ import annotations

import base64
import hashlib
import os
from dataclasses import replace

import pytest
from helpers.factories import make_deposit
from helpers.http import download, https_client
from helpers.seaweed import Weed, s3_uploads, stored_objects
from sqlalchemy import select

from app import create_app
from repository.files import resumable
from repository.files.sweeper import sweep
from repository.storage.tables.multipart import multipart_uploads

pytestmark = pytest.mark.s3_store

MIB = 1024 * 1024
PART = 5 * MIB  # S3's least part size: the protocol's parts map onto S3's
DATA = os.urandom(2 * PART + 1000)  # parts 0 and 1 of 5 MiB, part 2 of 1000 bytes
SMALL = 1000
SMALL_DATA = os.urandom(3 * SMALL + 10)  # staged parts: 0-2 of 1000 bytes, 3 of 10
SHAPES = [pytest.param(PART, DATA, id="s3-parts"), pytest.param(SMALL, SMALL_DATA, id="staged-parts")]


@pytest.fixture
def bucket(client, auth) -> str:  # type: ignore[no-untyped-def]
    return make_deposit(client, auth)["links"]["bucket"].replace("https://localhost", "")


def begin(client, auth, bucket: str, data: bytes = DATA, part: int = PART) -> str:  # type: ignore[no-untyped-def]
    answer = client.post(f"{bucket}/f.bin?uploads&size={len(data)}&partSize={part}", headers=auth)
    assert answer.status_code == 200, answer.json
    return answer.json["id"]


def send(client, auth, bucket: str, uid: str, n: int, data: bytes = DATA, part: int = PART):  # type: ignore[no-untyped-def]
    return client.put(f"{bucket}/f.bin?uploadId={uid}&partNumber={n}", data=data[n * part:(n + 1) * part],
                      headers=auth)


def complete(client, auth, bucket: str, uid: str):  # type: ignore[no-untyped-def]
    return client.post(f"{bucket}/f.bin?uploadId={uid}", headers=auth)


def row(app, uid: str) -> dict:  # type: ignore[no-untyped-def]
    with app.extensions["repository"].db.read() as conn:
        return dict(conn.execute(select(multipart_uploads).where(multipart_uploads.c.id == uid)).mappings().one())


def assert_completed(client, auth, bucket: str, uid: str, data: bytes = DATA) -> None:  # type: ignore[no-untyped-def]
    done = complete(client, auth, bucket, uid)
    assert done.status_code == 200, done.json
    assert done.json["checksum"] == "md5:" + hashlib.md5(data).hexdigest()
    assert done.json["checksums"]["sha256"] == hashlib.sha256(data).hexdigest()
    assert download(client, f"{bucket}/f.bin", headers=auth).data == data


def test_parts_map_onto_an_s3_multipart_upload(app, client, auth, bucket, settings):
    uid = begin(client, auth, bucket)
    state = row(app, uid)
    assert s3_uploads(settings) == [state["store_upload_id"]]  # CreateMultipartUpload at initiate
    for n in (2, 0, 1):  # any order
        assert send(client, auth, bucket, uid, n).status_code == 200
    assert not [key for key in stored_objects(settings) if key.startswith(".multipart/")]
    assert_completed(client, auth, bucket, uid)
    assert s3_uploads(settings) == []  # CompleteMultipartUpload made the object
    assert stored_objects(settings) == [f"{state['file_id'][:2]}/{state['file_id'][2:4]}/{state['file_id']}"]


@pytest.mark.skipif(not resumable.available(), reason="libcrypto's MD5/SHA256 contexts not usable here")
def test_parts_in_order_are_hashed_as_they_arrive(app, client, auth, bucket):
    def frontier(uid: str) -> int:
        loaded = resumable.load(row(app, uid)["hash_state"] or b"")
        return 0 if loaded is None else loaded[0]

    in_order = begin(client, auth, bucket)
    for n in range(3):
        assert send(client, auth, bucket, in_order, n).status_code == 200
    assert frontier(in_order) == len(DATA)  # complete has nothing left to read back
    assert_completed(client, auth, bucket, in_order)

    uid = begin(client, auth, bucket)
    assert send(client, auth, bucket, uid, 1).status_code == 200
    assert frontier(uid) == 0  # part 0 missing: nothing hashed yet
    assert send(client, auth, bucket, uid, 0).status_code == 200
    assert frontier(uid) == PART  # part 1 arrived before it: complete reads it back from the store
    other = os.urandom(PART)
    assert send(client, auth, bucket, uid, 0, other).status_code == 200
    assert frontier(uid) == 0  # part 0 replaced: the frontier had hashed the old bytes
    assert send(client, auth, bucket, uid, 2).status_code == 200
    assert_completed(client, auth, bucket, uid, other + DATA[PART:])


def test_small_parts_are_staged_objects_copied_at_complete(app, client, auth, bucket, settings):
    data = SMALL_DATA
    uid = begin(client, auth, bucket, data, SMALL)
    assert row(app, uid)["store_upload_id"] is None and s3_uploads(settings) == []
    for n in (3, 1, 0, 2):
        assert send(client, auth, bucket, uid, n, data, SMALL).status_code == 200
    assert sorted(stored_objects(settings)) == [f".multipart/{uid}/{n}" for n in range(4)]
    assert_completed(client, auth, bucket, uid, data)
    assert len(stored_objects(settings)) == 1  # the file; the staged parts gone


def test_a_part_the_store_holds_otherwise_is_never_recorded_with_other_digests(app, client, auth, bucket, settings):
    """Two sends of one part on two nodes: the store may keep the one whose ETag the database did not record.
    Complete gives the store the ETags recorded (SeaweedFS completes with the matching part; S3 lists only the last
    one, and complete then asks for the part again), so the digests recorded are always those of the bytes kept."""
    uid = begin(client, auth, bucket)
    for n in range(3):
        assert send(client, auth, bucket, uid, n).status_code == 200
    state = row(app, uid)
    key = f"{state['file_id'][:2]}/{state['file_id'][2:4]}/{state['file_id']}"
    Weed(settings.S3_ENDPOINT_URL).client().upload_part(  # the other send, which reached the store last
        Bucket=settings.S3_BUCKET, Key=key, UploadId=state["store_upload_id"], PartNumber=2, Body=os.urandom(PART))
    done = complete(client, auth, bucket, uid)
    if done.status_code == 400:  # the store kept only the other send's bytes
        assert done.json["errors"][0]["message"] == "Send part 1 again.", done.json
        assert client.get(f"{bucket}/f.bin?uploadId={uid}", headers=auth).json["missing"] == [1]
        assert client.get(bucket, headers=auth).json["contents"] == []
        assert send(client, auth, bucket, uid, 1).status_code == 200
        done = complete(client, auth, bucket, uid)
    assert done.status_code == 200, done.json
    stored = download(client, f"{bucket}/f.bin", headers=auth).data
    assert done.json["checksum"] == "md5:" + hashlib.md5(stored).hexdigest()
    assert done.json["checksums"]["sha256"] == hashlib.sha256(stored).hexdigest()
    assert stored == DATA


def test_a_part_past_the_memory_spool_and_a_bad_resend_of_it(client, auth, bucket):
    """A 9 MiB part waits for its last byte in a temporary file; sent again with a wrong Content-MD5, it is refused
    before anything reaches the store, and the part recorded stays as it was."""
    part = 9 * MIB
    data = os.urandom(2 * part + 10)
    uid = begin(client, auth, bucket, data, part)
    for n in range(3):
        assert send(client, auth, bucket, uid, n, data, part).status_code == 200
    wrong = client.put(f"{bucket}/f.bin?uploadId={uid}&partNumber=0", data=os.urandom(part),
                       headers={**auth, "Content-MD5": base64.b64encode(hashlib.md5(b"other").digest()).decode()})
    assert wrong.status_code == 400, wrong.json
    assert [p["part_number"] for p in client.get(f"{bucket}/f.bin?uploadId={uid}", headers=auth).json["parts"]] == [
        0, 1, 2]
    assert_completed(client, auth, bucket, uid, data)


def test_parts_larger_than_s3_takes_are_refused_at_initiate(client, auth, bucket, settings):
    size = 6 * 1024**3
    answer = client.post(f"{bucket}/f.bin?uploads&size={size}&partSize={size}", headers=auth)
    assert answer.status_code == 400 and answer.json["errors"] == [{"field": "partSize", "message": "Too large."}]
    assert client.get(f"{bucket}?uploads", headers=auth).json["uploads"] == [] and s3_uploads(settings) == []


@pytest.mark.parametrize(("part", "data"), SHAPES)
def test_abort_aborts_the_s3_upload_and_removes_staged_parts(client, auth, bucket, settings, part, data):
    uid = begin(client, auth, bucket, data, part)
    assert send(client, auth, bucket, uid, 0, data, part).status_code == 200
    assert client.delete(f"{bucket}/f.bin?uploadId={uid}", headers=auth).status_code == 204
    assert s3_uploads(settings) == [] and stored_objects(settings) == []


def test_a_second_app_with_its_own_files_root_takes_the_upload_over(make_settings, make_token, tmp_path):
    """Two nodes in one process: their own FILES_ROOT each, one database and one bucket."""
    node_a = create_app(make_settings())
    node_b = create_app(replace(node_a.extensions["repository"].settings, FILES_ROOT=str(tmp_path / "node-b")))
    try:
        auth = {"Authorization": f"Bearer {make_token()}"}
        a, b = https_client(node_a), https_client(node_b)
        bucket = make_deposit(a, auth)["links"]["bucket"].replace("https://localhost", "")
        uid = begin(a, auth, bucket)
        assert send(a, auth, bucket, uid, 0).status_code == 200
        assert send(b, auth, bucket, uid, 1).status_code == 200
        assert [p["part_number"] for p in b.get(f"{bucket}/f.bin?uploadId={uid}", headers=auth).json["parts"]] == [0, 1]
        assert send(b, auth, bucket, uid, 2).status_code == 200
        assert_completed(b, auth, bucket, uid)
        assert download(a, f"{bucket}/f.bin", headers=auth).data == DATA
    finally:
        node_a.extensions["repository"].db.dispose()
        node_b.extensions["repository"].db.dispose()


@pytest.mark.parametrize(("part", "data"), SHAPES)
def test_the_sweep_aborts_an_expired_upload(app, client, auth, bucket, settings, clock, part, data):
    uid = begin(client, auth, bucket, data, part)
    assert send(client, auth, bucket, uid, 0, data, part).status_code == 200
    with app.extensions["repository"].db.read() as conn:  # the orphan sweep leaves the open upload alone,
        sweep(app.extensions["repository"].files, conn, min_age=0)  # whatever its age
    assert len(s3_uploads(settings)) == (1 if part == PART else 0)
    assert len(stored_objects(settings)) == (0 if part == PART else 1)
    clock.advance(settings.MULTIPART_EXPIRY_DAYS * 86400 + 60)
    app.extensions["repository"].indexer.run_pass()  # the worker's pass: the sweep judges expiry by the clock
    assert s3_uploads(settings) == [] and stored_objects(settings) == []
    assert client.get(f"{bucket}/f.bin?uploadId={uid}", headers=auth).status_code == 404
