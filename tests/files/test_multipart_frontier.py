"""The hash frontier of a multipart upload (repository.files.multipart, repository.files.resumable): the MD5 and
SHA-256 of the whole file advance as contiguous parts arrive and are saved beside the upload, so complete only
hashes what is left; a part re-sent after it was hashed, a lost or torn frontier, all still give the digests of
the bytes stored."""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

import pytest
from helpers.bodies import PausedBody
from helpers.factories import make_deposit
from helpers.http import download, https_client

from repository.files import resumable

PART = 1024
DATA = os.urandom(4 * PART + 100)  # parts 0-3 of 1024 bytes and part 4 of 100


# The frontier saved beside the upload's bytes is the local store's; the S3 store keeps it in the upload's row
# (tests/files/test_multipart_s3.py).
pytestmark = [pytest.mark.skipif(not resumable.available(), reason="libcrypto's MD5/SHA256 contexts not usable here"),
              pytest.mark.local_store]


@pytest.fixture
def bucket(client, auth) -> str:  # type: ignore[no-untyped-def]
    return make_deposit(client, auth)["links"]["bucket"].replace("https://localhost", "")


def begin(client, auth, bucket: str) -> str:  # type: ignore[no-untyped-def]
    answer = client.post(f"{bucket}/f.bin?uploads&size={len(DATA)}&partSize={PART}", headers=auth)
    assert answer.status_code == 200, answer.json
    return answer.json["id"]


def send(client, auth, bucket: str, uid: str, n: int, body: bytes | None = None) -> None:  # type: ignore[no-untyped-def]
    body = DATA[n * PART:(n + 1) * PART] if body is None else body
    answer = client.put(f"{bucket}/f.bin?uploadId={uid}&partNumber={n}", data=body, headers=auth)
    assert answer.status_code == 200, answer.json


def state_file(settings, uid: str) -> Path:  # type: ignore[no-untyped-def]
    return Path(settings.FILES_ROOT) / ".tmp" / "multipart" / uid / "hash.state"


def frontier(settings, uid: str) -> int:  # type: ignore[no-untyped-def]
    path = state_file(settings, uid)
    if not path.exists():
        return 0
    loaded = resumable.load(path.read_bytes())
    assert loaded is not None
    return loaded[0]


def finish(client, auth, bucket: str, uid: str, expected: bytes = DATA) -> None:  # type: ignore[no-untyped-def]
    done = client.post(f"{bucket}/f.bin?uploadId={uid}", headers=auth)
    assert done.status_code == 200, done.json
    assert done.json["checksum"] == "md5:" + hashlib.md5(expected).hexdigest()
    assert done.json["checksums"]["sha256"] == hashlib.sha256(expected).hexdigest()
    assert download(client, f"{bucket}/f.bin", headers=auth).data == expected


def test_the_frontier_follows_contiguous_parts(client, auth, bucket, settings):
    uid = begin(client, auth, bucket)
    send(client, auth, bucket, uid, 2)
    assert frontier(settings, uid) == 0  # part 0 missing: nothing to hash yet
    send(client, auth, bucket, uid, 0)
    assert frontier(settings, uid) == PART
    send(client, auth, bucket, uid, 1)  # joins 0 and 2: both hashed now
    assert frontier(settings, uid) == 3 * PART
    send(client, auth, bucket, uid, 4)
    assert frontier(settings, uid) == 3 * PART
    send(client, auth, bucket, uid, 3)
    assert frontier(settings, uid) == len(DATA)  # complete has nothing left to read
    finish(client, auth, bucket, uid)


def test_a_part_resent_after_it_was_hashed_starts_the_hash_again(client, auth, bucket, settings):
    uid = begin(client, auth, bucket)
    for n in range(3):
        send(client, auth, bucket, uid, n)
    assert frontier(settings, uid) == 3 * PART
    other = bytes(reversed(DATA[PART:2 * PART]))
    send(client, auth, bucket, uid, 1, other)
    assert frontier(settings, uid) == 3 * PART  # forgotten, then hashed again over the new bytes
    for n in (3, 4):
        send(client, auth, bucket, uid, n)
    finish(client, auth, bucket, uid, DATA[:PART] + other + DATA[2 * PART:])


def test_a_part_hashed_as_it_arrives_yields_to_an_earlier_part_resent_meanwhile(app, auth, bucket, settings):
    """Part 1 starts at the frontier (part 0 hashed), so its bytes are hashed as they arrive from the state after
    part 0; half way, part 0 is sent again with other bytes and hashed again. Part 1's hash, made from the old
    part 0, must not become the frontier: the digests at complete are those of the bytes stored."""
    client = https_client(app)
    uid = begin(client, auth, bucket)
    send(client, auth, bucket, uid, 0)
    assert frontier(settings, uid) == PART
    body = PausedBody(DATA[PART:2 * PART])
    answers: list = []
    sender = threading.Thread(target=lambda: answers.append(https_client(app).put(
        f"{bucket}/f.bin?uploadId={uid}&partNumber=1", input_stream=body, headers=auth)))
    sender.start()
    assert body.halfway.wait(60)
    other = bytes(reversed(DATA[:PART]))
    send(client, auth, bucket, uid, 0, other)
    assert frontier(settings, uid) == PART  # forgotten, then hashed again over the new part 0
    body.go_on.set()
    sender.join(60)
    assert answers[0].status_code == 200, answers[0].json
    for n in (2, 3, 4):
        send(client, auth, bucket, uid, n)
    finish(client, auth, bucket, uid, other + DATA[PART:])


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["lost", "torn"])
def test_a_lost_or_torn_frontier_only_means_hashing_again(client, auth, bucket, settings, damage):
    uid = begin(client, auth, bucket)
    for n in range(4):
        send(client, auth, bucket, uid, n)
    path = state_file(settings, uid)
    if damage == "lost":
        path.unlink()
    else:
        path.write_bytes(path.read_bytes()[:30])
    send(client, auth, bucket, uid, 4)
    finish(client, auth, bucket, uid)


def test_states_resume_as_hashlib_would():
    data = os.urandom(100_003)
    md5, sha = resumable.Hash("md5"), resumable.Hash("sha256")
    md5.update(data[:4097])
    sha.update(data[:4097])
    offset, md5_again, sha_again = resumable.load(resumable.dump(4097, md5, sha)) or (0, md5, sha)
    assert offset == 4097
    md5_again.update(data[4097:])
    sha_again.update(data[4097:])
    assert (md5_again.hexdigest(), sha_again.hexdigest()) == (hashlib.md5(data).hexdigest(),
                                                              hashlib.sha256(data).hexdigest())
    assert resumable.load(b"") is None and resumable.load(b"RHS1" + b"\0" * 10) is None
