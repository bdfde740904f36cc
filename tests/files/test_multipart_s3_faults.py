"""The resumable multipart protocol when the S3 server goes away (docs/operators/object-storage.md#errors): stopped
while a part arrives, before a complete, or in the middle of one, the request answers 503 with Retry-After, nothing
of the upload is visible in the bucket's listing, the upload stays open with the parts recorded before, and once the
server is back the same upload takes the part again and completes. The server is a SeaweedFS of the test's own
(on free ports, stopped and started again on the same port and data), never the shared one."""

from __future__ import annotations

import hashlib
import io
import os
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import close_app
from helpers.factories import make_deposit
from helpers.http import download, https_client
from helpers.seaweed import Weed, start_weed, stored_objects

from app import create_app
from repository.accounts.tokens import SCOPES, create_token, create_user

pytestmark = [pytest.mark.slow, pytest.mark.s3_store]  # a real S3 server, stopped and started again

MIB = 1024 * 1024
PART = 5 * MIB  # S3's least part size: the protocol's parts are the S3 upload's
DATA = os.urandom(2 * PART + 1000)
SMALL = 1000  # staged parts, copied into the file's object at complete
SMALL_DATA = os.urandom(3 * SMALL + 10)
SHAPES = [pytest.param(PART, DATA, id="s3-parts"), pytest.param(SMALL, SMALL_DATA, id="staged-parts")]


class Store:
    """The test's own S3 server, which a test stops and starts again (same port, same data)."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.server: Weed = start_weed(directory)
        self.port = int(self.server.endpoint.rsplit(":", 1)[1])

    def stop(self) -> None:
        self.server.stop()

    def start(self) -> None:
        self.server = start_weed(self.directory, s3_port=self.port)


class Node:
    """An app on the test's store, a deposit's bucket and its owner's token."""

    def __init__(self, make_settings: Any, store: Store) -> None:
        self.settings = make_settings(**store.server.settings("faults"))
        self.app = create_app(self.settings)
        self.client = https_client(self.app)
        with self.app.extensions["repository"].db.write() as conn:
            user = create_user(conn, "owner@example.org")
            self.auth = {"Authorization": f"Bearer {create_token(conn, user, list(SCOPES))[1]}"}
        self.bucket = make_deposit(self.client, self.auth)["links"]["bucket"].replace("https://localhost", "")

    def begin(self, data: bytes, part: int) -> str:
        answer = self.client.post(f"{self.bucket}/f.bin?uploads&size={len(data)}&partSize={part}", headers=self.auth)
        assert answer.status_code == 200, answer.json
        return str(answer.json["id"])

    def send(self, uid: str, n: int, data: bytes, part: int, body: io.BytesIO | None = None):  # type: ignore[no-untyped-def]
        chunk = data[n * part:(n + 1) * part]
        url = f"{self.bucket}/f.bin?uploadId={uid}&partNumber={n}"
        if body is None:
            return self.client.put(url, data=chunk, headers=self.auth)
        return self.client.put(url, input_stream=body, headers={**self.auth, "Content-Length": str(len(chunk))})

    def complete(self, uid: str):  # type: ignore[no-untyped-def]
        return self.client.post(f"{self.bucket}/f.bin?uploadId={uid}", headers=self.auth)

    def listed_parts(self, uid: str) -> list[int]:
        answer = self.client.get(f"{self.bucket}/f.bin?uploadId={uid}", headers=self.auth)
        assert answer.status_code == 200, answer.json
        return [p["part_number"] for p in answer.json["parts"]]

    def open_uploads(self) -> list[str]:
        return [u["id"] for u in self.client.get(f"{self.bucket}?uploads", headers=self.auth).json["uploads"]]

    def contents(self) -> list[dict]:
        return list(self.client.get(self.bucket, headers=self.auth).json["contents"])

    def assert_completes(self, uid: str, data: bytes) -> None:
        done = self.complete(uid)
        assert done.status_code == 200, done.json
        assert done.json["checksum"] == "md5:" + hashlib.md5(data).hexdigest()
        assert done.json["checksums"]["sha256"] == hashlib.sha256(data).hexdigest()
        assert download(self.client, f"{self.bucket}/f.bin", headers=self.auth).data == data
        assert self.open_uploads() == []


@pytest.fixture
def store(tmp_path) -> Iterator[Store]:  # type: ignore[no-untyped-def]
    server = Store(str(tmp_path / "weed"))
    yield server
    server.stop()


@pytest.fixture
def node(make_settings, store) -> Iterator[Node]:  # type: ignore[no-untyped-def]
    made = Node(make_settings, store)
    yield made
    close_app(made.app)


def assert_unavailable(response) -> None:  # type: ignore[no-untyped-def]
    assert response.status_code == 503, response.data[:300]
    assert response.json["status"] == 503 and response.json["message"] and response.headers["Retry-After"]


class _StopsStore(io.BytesIO):
    """A part's body that stops the S3 server once a read took it past `after` bytes, then goes on."""

    def __init__(self, data: bytes, after: int, store: Store) -> None:
        super().__init__(data)
        self.after, self.store = after, store

    def read(self, size: int | None = -1, /) -> bytes:
        data = super().read(size)
        if self.tell() > self.after:
            self.store.stop()
        return data

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        chunk = self.read(len(buffer))
        buffer[:len(chunk)] = chunk
        return len(chunk)


@pytest.mark.parametrize(("part", "data"), SHAPES)
def test_the_store_stopped_while_a_part_arrives(node, store, part, data):
    uid = node.begin(data, part)
    assert node.send(uid, 0, data, part).status_code == 200
    body = _StopsStore(data[part:2 * part], part // 2, store)
    assert_unavailable(node.send(uid, 1, data, part, body))
    assert node.listed_parts(uid) == [0]  # the part cut short is not listed: the client sends it again
    assert node.contents() == []
    store.start()
    for n in range(1, -(-len(data) // part)):
        assert node.send(uid, n, data, part).status_code == 200
    node.assert_completes(uid, data)


@pytest.mark.parametrize(("part", "data"), SHAPES)
def test_the_store_stopped_before_complete(node, store, part, data):
    uid = node.begin(data, part)
    for n in range(-(-len(data) // part)):
        assert node.send(uid, n, data, part).status_code == 200
    store.stop()
    assert_unavailable(node.complete(uid))
    assert node.contents() == [] and node.open_uploads() == [uid]  # still open, its parts as they were
    assert node.listed_parts(uid) == list(range(-(-len(data) // part)))
    store.start()
    node.assert_completes(uid, data)


@pytest.mark.parametrize(("part", "data"), SHAPES)
def test_the_store_stopped_in_the_middle_of_complete(node, store, part, data, monkeypatch):
    """Parts sent out of order: complete reads the assembled object back to hash it (S3 parts), or copies the staged
    parts into it; the server goes away once that reading has begun. An object the store assembled before it went
    away is nobody's file until a complete records it."""
    uid = node.begin(data, part)
    for n in reversed(range(-(-len(data) // part))):
        assert node.send(uid, n, data, part).status_code == 200
    files = node.app.extensions["repository"].files
    reader = "read" if part == PART else "read_staged"
    real = getattr(files, reader)

    def stops_the_store(*args: Any, **kwargs: Any) -> Iterator[bytes]:
        store.stop()
        yield from real(*args, **kwargs)

    monkeypatch.setattr(files, reader, stops_the_store)
    assert_unavailable(node.complete(uid))
    monkeypatch.undo()
    assert node.contents() == [] and node.open_uploads() == [uid]
    store.start()
    assert node.contents() == []
    node.assert_completes(uid, data)
    assert len([key for key in stored_objects(node.settings) if not key.startswith(".multipart/")]) == 1
