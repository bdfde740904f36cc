"""Multipart uploads on the bucket over HTTP (`POST ?uploads`, `PUT ?uploadId=&partNumber=`, `GET ?uploadId=`,
`POST ?uploadId=`, `DELETE ?uploadId=`): parts in any order and in parallel, a part sent again, the listing a
client resumes from, the object's MD5 and SHA-256 over the whole content, abort, expiry, each bad input with an
error object and no partial object, and the refusal a PUT gets once the deposit is published. Also the checksums
of a plain PUT (Content-MD5 / Content-Digest, the SHA-256 on the file object)."""

from __future__ import annotations

import base64
import hashlib
import io
import os
import threading
import zlib
from pathlib import Path

import pytest
from helpers.bodies import PausedBody
from helpers.factories import make_deposit, publish, upload
from helpers.http import https_client
from helpers.seaweed import open_uploads

from app import create_app

PART = 1000
DATA = bytes(range(256)) * 10 + b"tail" * 100  # 2960 bytes: parts 0, 1 (1000 each) and 2 (960)


def bucket_of(dep: dict) -> str:
    return dep["links"]["bucket"].replace("https://localhost", "")


def start(client, auth, bucket: str, key: str = "big.bin", size: int = len(DATA), part_size: int = PART):  # type: ignore[no-untyped-def]
    return client.post(f"{bucket}/{key}?uploads&size={size}&partSize={part_size}", headers=auth)


def chunk(n: int, data: bytes = DATA) -> bytes:
    return data[n * PART:(n + 1) * PART]


def send(client, auth, bucket: str, uid: str, n: int | str, body: bytes, key: str = "big.bin", **headers):  # type: ignore[no-untyped-def]
    return client.put(f"{bucket}/{key}?uploadId={uid}&partNumber={n}", data=body, headers={**auth, **headers})


def listing(client, auth, bucket: str, uid: str, key: str = "big.bin"):  # type: ignore[no-untyped-def]
    return client.get(f"{bucket}/{key}?uploadId={uid}", headers=auth)


def complete(client, auth, bucket: str, uid: str, key: str = "big.bin"):  # type: ignore[no-untyped-def]
    return client.post(f"{bucket}/{key}?uploadId={uid}", headers=auth)


def contents(client, auth, bucket: str) -> list[dict]:  # type: ignore[no-untyped-def]
    return client.get(bucket, headers=auth).json["contents"]


def upload_dirs(settings) -> list[object]:  # type: ignore[no-untyped-def]
    return open_uploads(settings)


def b64(digest: bytes) -> str:
    return base64.b64encode(digest).decode()


@pytest.fixture
def bucket(client, auth) -> str:  # type: ignore[no-untyped-def]
    return bucket_of(make_deposit(client, auth))


@pytest.mark.slow
def test_parts_in_any_order_then_complete(client, auth, bucket, settings):
    started = start(client, auth, bucket)
    assert started.status_code == 200, started.json
    upload_ = started.json
    assert upload_["size"] == len(DATA) and upload_["part_size"] == PART
    assert upload_["last_part_number"] == 2 and upload_["last_part_size"] == 960
    assert upload_["completed"] is False and upload_["links"]["self"].endswith(f"?uploadId={upload_['id']}")
    uid = upload_["id"]
    assert client.get(f"{bucket}?uploads", headers=auth).json["uploads"][0]["id"] == uid

    for n in (2, 0):
        answer = send(client, auth, bucket, uid, n, chunk(n))
        assert answer.status_code == 200, answer.json
        assert answer.json["checksum"] == f"crc32:{zlib.crc32(chunk(n)):08x}"  # the part's own: a CRC-32, as S3
    parts = listing(client, auth, bucket, uid).json
    assert [p["part_number"] for p in parts["parts"]] == [0, 2] and parts["missing"] == [1]
    assert parts["parts"][1]["start_byte"] == 2000 and parts["parts"][1]["end_byte"] == len(DATA)
    assert contents(client, auth, bucket) == []  # nothing visible before complete

    assert send(client, auth, bucket, uid, 1, chunk(1)).status_code == 200
    done = complete(client, auth, bucket, uid)
    assert done.status_code == 200, done.json
    assert done.json["key"] == "big.bin" and done.json["size"] == len(DATA)
    assert done.json["checksum"] == "md5:" + hashlib.md5(DATA).hexdigest()
    assert done.json["checksums"] == {"md5": hashlib.md5(DATA).hexdigest(), "sha256": hashlib.sha256(DATA).hexdigest()}
    download = client.get(f"{bucket}/big.bin", headers=auth)
    assert download.data == DATA
    download.close()
    assert [o["key"] for o in contents(client, auth, bucket)] == ["big.bin"]
    assert upload_dirs(settings) == []  # the bytes were renamed into place, nothing left behind
    assert client.get(f"{bucket}?uploads", headers=auth).json["uploads"] == []

    again = complete(client, auth, bucket, uid)
    assert again.status_code == 409 and "completed" in again.json["message"]
    assert send(client, auth, bucket, uid, 0, chunk(0)).status_code == 409


@pytest.mark.slow  # 0.4 s and more of work
def test_a_part_sent_again_replaces_it(client, auth, bucket):
    uid = start(client, auth, bucket).json["id"]
    assert send(client, auth, bucket, uid, 0, b"x" * PART).status_code == 200
    for n in range(3):
        assert send(client, auth, bucket, uid, n, chunk(n)).status_code == 200
    assert send(client, auth, bucket, uid, 1, chunk(1)).status_code == 200  # the same bytes again: harmless
    done = complete(client, auth, bucket, uid)
    assert done.json["checksum"] == "md5:" + hashlib.md5(DATA).hexdigest()


def test_a_cut_request_for_a_recorded_part_leaves_it_as_it_was(client, auth, bucket, settings):
    # A request for part 1 cut short after the part was sent again and recorded (it reached the app late, or on
    # another worker): the recorded part stays listed, its bytes untouched, and nothing of the cut one is left.
    uid = start(client, auth, bucket).json["id"]
    for n in range(3):
        assert send(client, auth, bucket, uid, n, chunk(n)).status_code == 200
    cut = client.put(f"{bucket}/big.bin?uploadId={uid}&partNumber=1", input_stream=io.BytesIO(b"z" * (PART // 2)),
                     headers=auth, environ_overrides={"CONTENT_LENGTH": str(PART)})  # the rest never comes
    assert cut.status_code == 400
    assert [p["part_number"] for p in listing(client, auth, bucket, uid).json["parts"]] == [0, 1, 2]
    local = [d for d in upload_dirs(settings) if isinstance(d, Path)]
    assert [p.name for d in local for p in d.iterdir() if p.suffix == ".part"] == []
    done = complete(client, auth, bucket, uid)
    assert done.status_code == 200, done.json
    assert done.json["checksum"] == "md5:" + hashlib.md5(DATA).hexdigest()


def test_parts_in_parallel(app, auth, settings):
    client = https_client(app)
    bucket = bucket_of(make_deposit(client, auth))
    data = os.urandom(8 * PART)
    uid = start(client, auth, bucket, size=len(data)).json["id"]
    barrier = threading.Barrier(8)
    codes: list[int] = [0] * 8

    def run(n: int) -> None:
        own = https_client(app)
        barrier.wait()
        codes[n] = send(own, auth, bucket, uid, n, chunk(n, data)).status_code

    threads = [threading.Thread(target=run, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert codes == [200] * 8
    done = complete(client, auth, bucket, uid)
    assert done.status_code == 200, done.json
    assert done.json["checksums"]["sha256"] == hashlib.sha256(data).hexdigest()


def test_abort_removes_everything(client, auth, bucket, settings):
    uid = start(client, auth, bucket).json["id"]
    assert send(client, auth, bucket, uid, 0, chunk(0)).status_code == 200
    assert len(upload_dirs(settings)) == 1
    assert client.delete(f"{bucket}/big.bin?uploadId={uid}", headers=auth).status_code == 204
    assert upload_dirs(settings) == []
    for answer in (listing(client, auth, bucket, uid), send(client, auth, bucket, uid, 1, chunk(1)),
                   complete(client, auth, bucket, uid),
                   client.delete(f"{bucket}/big.bin?uploadId={uid}", headers=auth)):
        assert answer.status_code == 404 and "uploadId" in answer.json["message"]
    assert contents(client, auth, bucket) == []


def test_an_abort_during_a_part_leaves_nothing(app, auth, bucket, settings):
    client = https_client(app)
    uid = start(client, auth, bucket).json["id"]
    body = PausedBody(chunk(0))
    answers: list = []
    sender = threading.Thread(target=lambda: answers.append(https_client(app).put(
        f"{bucket}/big.bin?uploadId={uid}&partNumber=0", input_stream=body, headers=auth)))
    sender.start()
    assert body.halfway.wait(60)
    assert client.delete(f"{bucket}/big.bin?uploadId={uid}", headers=auth).status_code == 204
    body.go_on.set()
    sender.join(60)
    assert answers[0].status_code == 404 and "uploadId" in answers[0].json["message"]  # the part in flight too
    assert upload_dirs(settings) == []
    assert listing(client, auth, bucket, uid).status_code == 404
    assert contents(client, auth, bucket) == []


@pytest.mark.slow
def test_unfinished_uploads_expire_and_are_swept(make_settings, make_token):
    settings = make_settings(MULTIPART_EXPIRY_DAYS=0)
    app = create_app(settings)
    try:
        client = https_client(app)
        auth = {"Authorization": f"Bearer {make_token()}"}
        bucket = bucket_of(make_deposit(client, auth))
        uid = start(client, auth, bucket).json["id"]
        assert len(upload_dirs(settings)) == (0 if settings.FILES_STORE == "s3" else 1)  # small parts: staged when sent
        refused = send(client, auth, bucket, uid, 0, chunk(0))
        assert refused.status_code == 404 and "expired" in refused.json["message"]
        app.extensions["repository"].indexer.run_pass()  # the worker's pass
        assert upload_dirs(settings) == []
        assert listing(client, auth, bucket, uid).status_code == 404
        assert contents(client, auth, bucket) == []
    finally:
        app.extensions["repository"].db.dispose()


def test_an_orphan_upload_directory_is_swept(app, settings):
    orphan = Path(settings.FILES_ROOT) / ".tmp" / "multipart" / "0f4c2d1e-0000-4000-8000-000000000000"
    orphan.mkdir(parents=True)
    (orphan / "data").write_bytes(b"left by a crash")
    fresh = orphan.with_name("1f4c2d1e-0000-4000-8000-000000000000")
    fresh.mkdir()
    os.utime(orphan, (0, 0))
    app.extensions["repository"].indexer.run_pass()
    assert not orphan.exists() and fresh.exists()


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("uploads&partSize=1000", "size"),
        ("uploads&size=2960", "partSize"),
        ("uploads&size=0&partSize=1000", "size"),
        ("uploads&size=2960&partSize=0", "partSize"),
        ("uploads&size=abc&partSize=1000", "size"),
        ("uploads&size=20000&partSize=1", "partSize"),  # more than 10 000 parts
    ],
)
def test_bad_initiate(client, auth, bucket, settings, query, field):
    answer = client.post(f"{bucket}/big.bin?{query}", headers=auth)
    assert answer.status_code == 400 and answer.json["errors"][0]["field"] == field, answer.json
    assert upload_dirs(settings) == []


def test_a_post_without_uploads_or_upload_id(client, auth, bucket):
    answer = client.post(f"{bucket}/big.bin", headers=auth)
    assert answer.status_code == 400 and "?uploads" in answer.json["message"]


def test_initiate_takes_a_json_body(client, auth, bucket):
    answer = client.post(f"{bucket}/big.bin?uploads", json={"size": 10, "partSize": 4}, headers=auth)
    assert answer.status_code == 200 and answer.json["last_part_number"] == 2 and answer.json["last_part_size"] == 2


@pytest.mark.parametrize("number", ["-1", "3", "x", ""])
def test_part_number_out_of_range(client, auth, bucket, number):
    uid = start(client, auth, bucket).json["id"]
    answer = send(client, auth, bucket, uid, number, chunk(0))
    assert answer.status_code == 400 and answer.json["errors"][0]["field"] == "partNumber"


@pytest.mark.slow
@pytest.mark.parametrize(("number", "body"), [(0, b"x" * 999), (0, b"x" * 1001), (2, b"x" * 1000), (2, b"")])
def test_wrong_part_size(client, auth, bucket, number, body):
    uid = start(client, auth, bucket).json["id"]
    answer = send(client, auth, bucket, uid, number, body)
    assert answer.status_code == 400 and answer.json["errors"][0]["field"] == "Content-Length"
    assert listing(client, auth, bucket, uid).json["parts"] == []


def test_complete_with_missing_parts(client, auth, bucket):
    uid = start(client, auth, bucket).json["id"]
    send(client, auth, bucket, uid, 1, chunk(1))
    answer = complete(client, auth, bucket, uid)
    assert answer.status_code == 400 and "0, 2" in answer.json["message"]
    assert contents(client, auth, bucket) == []
    # Still open: the missing parts can come, and then it completes.
    send(client, auth, bucket, uid, 0, chunk(0))
    send(client, auth, bucket, uid, 2, chunk(2))
    assert complete(client, auth, bucket, uid).status_code == 200


def test_upload_of_another_bucket_file_or_user(client, auth, bucket, make_token):
    uid = start(client, auth, bucket).json["id"]
    other_bucket = bucket_of(make_deposit(client, auth))
    assert send(client, auth, other_bucket, uid, 0, chunk(0)).status_code == 404
    assert send(client, auth, bucket, uid, 0, chunk(0), key="other.bin").status_code == 404
    assert send(client, auth, bucket, "not-an-upload", 0, chunk(0)).status_code == 404
    stranger = {"Authorization": f"Bearer {make_token('stranger@example.org')}"}
    for answer in (send(client, stranger, bucket, uid, 0, chunk(0)), listing(client, stranger, bucket, uid),
                   complete(client, stranger, bucket, uid),
                   client.delete(f"{bucket}/big.bin?uploadId={uid}", headers=stranger)):
        assert answer.status_code == 404
    assert listing(client, auth, bucket, uid).json["parts"] == []
    assert client.get(f"{bucket}/big.bin?uploadId={uid}").status_code == 401


@pytest.mark.slow
def test_part_checksums(client, auth, bucket):
    uid = start(client, auth, bucket).json["id"]
    wrong = send(client, auth, bucket, uid, 0, chunk(0), **{"Content-MD5": b64(hashlib.md5(b"other").digest())})
    assert wrong.status_code == 400 and wrong.json["errors"][0]["field"] == "Content-MD5"
    digest = f"sha-256=:{b64(hashlib.sha256(b'other').digest())}:"
    wrong = send(client, auth, bucket, uid, 1, chunk(1), **{"Content-Digest": digest})
    assert wrong.status_code == 400 and wrong.json["errors"][0]["field"] == "Content-Digest"
    assert listing(client, auth, bucket, uid).json["missing"] == [0, 1, 2]  # nothing kept of either
    right = send(client, auth, bucket, uid, 0, chunk(0), **{"Content-MD5": b64(hashlib.md5(chunk(0)).digest())})
    assert right.status_code == 200
    digest = f"sha-256=:{b64(hashlib.sha256(chunk(1)).digest())}:, md5=:{b64(hashlib.md5(chunk(1)).digest())}:"
    assert send(client, auth, bucket, uid, 1, chunk(1), **{"Content-Digest": digest}).status_code == 200
    assert listing(client, auth, bucket, uid).json["missing"] == [2]


@pytest.mark.slow
def test_publish_refused_while_an_upload_is_open_then_refused_as_a_put_is(client, auth, settings):
    dep = make_deposit(client, auth)
    bucket = bucket_of(dep)
    upload(client, auth, dep)
    uid = start(client, auth, bucket).json["id"]
    send(client, auth, bucket, uid, 0, chunk(0))
    send(client, auth, bucket, uid, 1, chunk(1))
    # As the reference: no publish with a pending upload; the error names it, and the upload is left as it was.
    refused = client.post(f"/api/deposit/depositions/{dep['id']}/actions/publish", headers=auth)
    assert refused.status_code == 400, refused.json
    assert [e["field"] for e in refused.json["errors"]] == ["files"]
    assert uid in refused.json["errors"][0]["message"] and "big.bin" in refused.json["errors"][0]["message"]
    assert listing(client, auth, bucket, uid).json["missing"] == [2]
    assert send(client, auth, bucket, uid, 2, chunk(2)).status_code == 200
    assert complete(client, auth, bucket, uid).status_code == 200
    publish(client, auth, dep)  # a completed upload does not stop it
    put = client.put(f"{bucket}/x.bin", data=b"x", headers=auth)
    for answer in (send(client, auth, bucket, uid, 2, chunk(2)), complete(client, auth, bucket, uid),
                   start(client, auth, bucket)):
        assert (answer.status_code, answer.json["message"]) == (put.status_code, put.json["message"]) == (
            403, "Bucket is locked for modifications.")
    assert sorted(o["key"] for o in contents(client, auth, bucket)) == ["big.bin", "data.csv"]
    assert upload_dirs(settings) == []
    # During edit the files stay locked: the same refusal.
    assert client.post(f"/api/deposit/depositions/{dep['id']}/actions/edit", headers=auth).status_code == 201
    assert start(client, auth, bucket).status_code == 403


def test_an_aborted_upload_does_not_stop_a_publish(client, auth):
    dep = make_deposit(client, auth)
    bucket = bucket_of(dep)
    upload(client, auth, dep)
    uid = start(client, auth, bucket).json["id"]
    send(client, auth, bucket, uid, 0, chunk(0))
    assert client.delete(f"{bucket}/big.bin?uploadId={uid}", headers=auth).status_code == 204
    publish(client, auth, dep)
    assert send(client, auth, bucket, uid, 1, chunk(1)).status_code == 404


def test_a_put_computes_sha256_and_checks_digests(client, auth, bucket):
    body = b"hello, world\n" * 100
    sha = hashlib.sha256(body)
    answer = client.put(f"{bucket}/a.txt", data=body, headers={**auth, "Content-Digest": f"sha-256=:{b64(sha.digest())}:"})
    assert answer.status_code == 200, answer.json
    assert answer.json["checksums"] == {"md5": hashlib.md5(body).hexdigest(), "sha256": sha.hexdigest()}
    assert answer.json["checksum"] == "md5:" + hashlib.md5(body).hexdigest()
    bad = client.put(f"{bucket}/b.txt", data=body,
                     headers={**auth, "Content-Digest": f"sha-256=:{b64(hashlib.sha256(b'x').digest())}:"})
    assert bad.status_code == 400
    bad = client.put(f"{bucket}/b.txt", data=body, headers={**auth, "Content-MD5": b64(hashlib.md5(b"x").digest())})
    assert bad.status_code == 400
    assert [o["key"] for o in contents(client, auth, bucket)] == ["a.txt"]
    assert contents(client, auth, bucket)[0]["checksums"]["sha256"] == sha.hexdigest()



def race_round(app, client, auth: dict, round_: int) -> None:  # type: ignore[no-untyped-def]
    """A complete, the start of another upload and a publish of the same deposit, released at once."""
    dep = make_deposit(client, auth, title=f"Race {round_}")
    bucket = bucket_of(dep)
    upload(client, auth, dep)
    done_id = start(client, auth, bucket).json["id"]
    for n in range(3):
        send(client, auth, bucket, done_id, n, chunk(n))
    barrier = threading.Barrier(3)
    answers: dict = {}
    calls = {
        "complete": lambda c: complete(c, auth, bucket, done_id),
        "start": lambda c: start(c, auth, bucket, key="open.bin"),
        "publish": lambda c: c.post(f"/api/deposit/depositions/{dep['id']}/actions/publish", headers=auth),
    }

    def run(name: str) -> None:
        own = https_client(app)
        barrier.wait()
        answers[name] = calls[name](own)

    threads = [threading.Thread(target=run, args=(name,)) for name in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    published = answers["publish"].status_code
    assert published in (202, 400), answers["publish"].json
    if published == 202:  # only once the complete had landed and before the other upload started
        assert (answers["complete"].status_code, answers["start"].status_code) == (200, 403), round_
        in_record = {e["key"] for e in client.get(f"/api/records/{dep['id']}/files", headers=auth).json["entries"]}
        assert {o["key"] for o in contents(client, auth, bucket)} == in_record == {"data.csv", "big.bin"}
    else:  # an upload was open (or being completed): named, and nothing was locked
        assert all("still open" in e["message"] for e in answers["publish"].json["errors"]), round_
        assert (answers["complete"].status_code, answers["start"].status_code) == (200, 200), round_
        assert {o["key"] for o in contents(client, auth, bucket)} == {"data.csv", "big.bin"}


@pytest.mark.slow
def test_a_complete_and_a_start_racing_a_publish_land_first_or_are_refused(make_settings, make_token):
    """The race rules of a PUT: each multipart write holds the bucket's row for its commit, so it lands before the
    publish (which then sees an upload still open and answers 400, or finds the complete done and snapshots the
    file) or finds the bucket locked (403); never a 500, on either database."""
    app = create_app(make_settings(RATELIMIT_ENABLED=False))
    try:
        client = https_client(app)
        auth = {"Authorization": f"Bearer {make_token()}"}
        for round_ in range(3):
            race_round(app, client, auth, round_)
    finally:
        app.extensions["repository"].db.dispose()
