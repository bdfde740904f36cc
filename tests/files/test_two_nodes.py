"""Two application servers that share nothing but the services (docs/operators/object-storage.md#multipart-uploads):
two real servers (scripts/serve.py: gunicorn over TLS), each with its own instance directory (FILES_ROOT, keys,
certificate), on one PostgreSQL database, one Redis (the rate-limit counters) and one S3 bucket (SeaweedFS).

The embedded search index is the one thing they share on disk: both point SEARCH_URL at one directory, as the
worker processes of one server do (the index's writer is held by one process at a time); a scaled installation
points every node at OpenSearch instead. Each node reindexing its own copy would leave each blind to what the
other wrote.

A file uploaded through node A downloads byte for byte through node B; a resumable multipart upload started on A
completes on B; a limit exhausted through A is refused through B; node A killed (SIGKILL) in the middle of a large
streamed PUT leaves no visible file nor object, and after a sweep (the worker, as a third machine would run it)
nothing of that PUT is left in the bucket, while an open multipart upload survives the sweep and completes."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from types import SimpleNamespace

import pytest
import redis
import requests
from conftest import ROOT, _serve
from helpers.databases import TEST_DATABASE_URL, drop_database, empty_database
from helpers.seaweed import Weed, empty_bucket, s3_uploads, stored_objects
from sqlalchemy import select

from repository.accounts.tokens import SCOPES, create_token, create_user
from repository.storage import open_database
from repository.storage.tables.multipart import multipart_uploads

pytestmark = [
    pytest.mark.slow,
    pytest.mark.e2e,
    pytest.mark.skipif(not TEST_DATABASE_URL.startswith("postgresql"),
                       reason="two nodes share a PostgreSQL database (TEST_DATABASE_URL)"),
]

REDIS_URL = "redis://127.0.0.1:6379/14"
MIB = 1024 * 1024
PART = 5 * MIB
GUEST_LIMIT = 5


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory, weed: Weed) -> Iterator[dict[str, str]]:
    """The settings both nodes share: the database (a fresh one), Redis, the bucket and the search index."""
    url = empty_database(tmp_path_factory.mktemp("two-nodes-db"), "two_nodes")
    bucket = f"t-nodes-{os.urandom(8).hex()}"
    index = tmp_path_factory.mktemp("two-nodes-index")
    redis.Redis.from_url(REDIS_URL).flushdb()
    yield {**{k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in weed.settings(bucket).items()},
           "DATABASE_URL": url, "RATELIMIT_STORAGE_URI": REDIS_URL, "SEARCH_URL": f"embedded://{index}/index",
           "RATELIMIT_GUEST": f"{GUEST_LIMIT}/hour", "RATELIMIT_USER": "100000/hour", "SECRET_KEY": "two-nodes-secret"}
    empty_bucket(weed, bucket)
    drop_database(url)


@pytest.fixture(scope="module")
def node_a(tmp_path_factory: pytest.TempPathFactory, shared: dict[str, str]) -> Iterator[dict]:
    yield from _serve(tmp_path_factory, "--workers", "1", "--threads", "4",
                      settings={**shared, "AUTO_MIGRATE": "true"})


@pytest.fixture(scope="module")
def node_b(tmp_path_factory: pytest.TempPathFactory, shared: dict[str, str], node_a: dict) -> Iterator[dict]:
    yield from _serve(tmp_path_factory, "--workers", "1", "--threads", "4",  # once A migrated the database
                      settings={**shared, "AUTO_MIGRATE": "false"})


@pytest.fixture(scope="module")
def token(shared: dict[str, str], node_a: dict) -> str:
    db = open_database(shared["DATABASE_URL"])
    try:
        with db.write() as conn:
            return create_token(conn, create_user(conn, "nodes@example.org"), list(SCOPES))[1]
    finally:
        db.dispose()


def session(node: dict, token: str | None = None) -> requests.Session:
    http = requests.Session()
    http.trust_env = False
    http.verify = node["cert"]
    if token:
        http.headers["Authorization"] = f"Bearer {token}"
    return http


def new_bucket(http: requests.Session, node: dict) -> str:
    made = http.post(f"{node['url']}/api/deposit/depositions", json={}, timeout=60)
    assert made.status_code == 201, made.text
    return made.json()["links"]["bucket"].split("/api/", 1)[1]


def bucket_of(shared: dict[str, str]) -> SimpleNamespace:
    """What the bucket listings of tests/helpers/seaweed.py read of settings."""
    return SimpleNamespace(S3_ENDPOINT_URL=shared["S3_ENDPOINT_URL"], S3_BUCKET=shared["S3_BUCKET"])


def test_two_nodes_share_files_uploads_limits_and_recover_from_a_killed_node(
        node_a: dict, node_b: dict, token: str, shared: dict[str, str], tmp_path) -> None:
    a, b = session(node_a, token), session(node_b, token)
    assert os.path.realpath(node_a["env"]["INSTANCE_PATH"]) != os.path.realpath(node_b["env"]["INSTANCE_PATH"])
    bucket = new_bucket(a, node_a)
    url_a, url_b = f"{node_a['url']}/api/{bucket}", f"{node_b['url']}/api/{bucket}"

    # A file uploaded through A downloads, byte for byte, through B.
    data = os.urandom(3 * MIB + 17)
    put = a.put(f"{url_a}/one.bin", data=data, timeout=120)
    assert put.status_code == 200, put.text
    got = b.get(f"{url_b}/one.bin", timeout=120)
    assert got.status_code == 200 and got.content == data

    # A resumable multipart upload started on A (its first part) completes on B.
    big = os.urandom(2 * PART + 1234)
    uid = a.post(f"{url_a}/two.bin?uploads&size={len(big)}&partSize={PART}", timeout=60).json()["id"]
    assert a.put(f"{url_a}/two.bin?uploadId={uid}&partNumber=0", data=big[:PART], timeout=120).status_code == 200
    for n in (1, 2):
        sent = b.put(f"{url_b}/two.bin?uploadId={uid}&partNumber={n}", data=big[n * PART:(n + 1) * PART], timeout=120)
        assert sent.status_code == 200, sent.text
    done = b.post(f"{url_b}/two.bin?uploadId={uid}", timeout=120)
    assert done.status_code == 200, done.text
    assert done.json()["checksum"] == "md5:" + hashlib.md5(big).hexdigest()
    assert done.json()["checksums"]["sha256"] == hashlib.sha256(big).hexdigest()
    assert a.get(f"{url_a}/two.bin", timeout=120).content == big

    # An upload left open on A, through everything that follows.
    open_id = a.post(f"{url_a}/open.bin?uploads&size={len(big)}&partSize={PART}", timeout=60).json()["id"]
    assert a.put(f"{url_a}/open.bin?uploadId={open_id}&partNumber=0", data=big[:PART], timeout=120).status_code == 200

    # Rate limits are counted in Redis: what A let through counts on B.
    redis.Redis.from_url(REDIS_URL).flushdb()  # a fresh window (the start-up probes were guests too)
    guest_a, guest_b = session(node_a), session(node_b)
    assert [guest_a.get(f"{node_a['url']}/api/records", timeout=60).status_code
            for _ in range(GUEST_LIMIT)] == [200] * GUEST_LIMIT
    refused = guest_b.get(f"{node_b['url']}/api/records", timeout=60)
    assert refused.status_code == 429, refused.text  # B's first guest request of the window

    # Node A killed in the middle of a large streamed PUT.
    settings = bucket_of(shared)
    objects, uploads = set(stored_objects(settings)), set(s3_uploads(settings))
    halfway, go_on = threading.Event(), threading.Event()

    def body() -> Iterator[bytes]:
        for sent in range(256):
            if sent == 40:
                halfway.set()
                go_on.wait(120)
            yield os.urandom(MIB)

    outcome: list[object] = []
    sender = threading.Thread(target=lambda: outcome.append(_put(a, f"{url_a}/killed.bin", body())))
    sender.start()
    assert halfway.wait(120)
    deadline = time.monotonic() + 60  # the PUT's own S3 upload has begun: it is mid-way into the store
    while not set(s3_uploads(settings)) - uploads and time.monotonic() < deadline:
        time.sleep(0.2)
    left = set(s3_uploads(settings)) - uploads
    assert left, "the PUT should have started its S3 multipart upload"
    os.killpg(node_a["pid"], signal.SIGKILL)
    go_on.set()
    sender.join(120)
    assert isinstance(outcome[0], requests.RequestException)

    listing = b.get(url_b, timeout=60).json()
    assert sorted(item["key"] for item in listing["contents"]) == ["one.bin", "two.bin"]
    assert b.get(f"{url_b}/killed.bin", timeout=60).status_code == 404
    assert set(stored_objects(settings)) == objects  # no partial object visible in the bucket either
    assert set(s3_uploads(settings)) == uploads | left  # only the dead PUT's parts, invisible

    # The sweep (the worker of a third machine, its own FILES_ROOT), with no orphan age to wait for.
    worker_env = {**node_b["env"], "INSTANCE_PATH": str(tmp_path / "worker"), "FILES_ORPHAN_AGE": "0"}
    swept = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "worker.py"), "--once"], cwd=ROOT,
                           env=worker_env, capture_output=True, text=True, timeout=300)
    assert swept.returncode == 0, swept.stdout + swept.stderr
    assert set(s3_uploads(settings)) == uploads  # the dead PUT's aborted; the open multipart upload kept
    assert set(stored_objects(settings)) == objects

    # The upload left open survived the sweep and the death of the node that started it.
    for n in (1, 2):
        sent = b.put(f"{url_b}/open.bin?uploadId={open_id}&partNumber={n}", data=big[n * PART:(n + 1) * PART],
                     timeout=120)
        assert sent.status_code == 200, sent.text
    done = b.post(f"{url_b}/open.bin?uploadId={open_id}", timeout=120)
    assert done.status_code == 200, done.text
    assert b.get(f"{url_b}/open.bin", timeout=120).content == big
    assert set(s3_uploads(settings)) == uploads - {_store_upload_id(shared, open_id)}


def _put(http: requests.Session, url: str, body: Iterator[bytes]) -> object:
    try:
        return http.put(url, data=body, timeout=120)
    except requests.RequestException as exc:
        return exc


def _store_upload_id(shared: dict[str, str], upload_id: str) -> str | None:
    db = open_database(shared["DATABASE_URL"])
    try:
        with db.read() as conn:
            return conn.execute(select(multipart_uploads.c.store_upload_id)
                                .where(multipart_uploads.c.id == upload_id)).scalar_one()
    finally:
        db.dispose()
