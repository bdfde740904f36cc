"""End to end on the real server (gunicorn, several worker processes, TLS): a streamed upload of hundreds of MB
keeps the server's memory flat, and a publish is searchable from every worker process at once."""

import hashlib
import os

import pytest
import requests
from helpers.http import peak_rss_kb, token_session, worker_pids

UPLOAD_MB = 300
CHUNK = b"0123456789abcdef" * 65536  # 1 MiB


@pytest.fixture(scope="module")
def session(live_server):
    http = token_session(live_server, "big@example.org")
    yield http
    http.close()


def test_streamed_upload_keeps_server_memory_flat(live_server, session):
    base = live_server["url"]
    dep = session.post(f"{base}/api/deposit/depositions", json={}).json()
    workers = worker_pids(live_server["pid"])
    before = {pid: peak_rss_kb(pid) for pid in workers}
    digest = hashlib.md5()

    def body():
        for _ in range(UPLOAD_MB):
            digest.update(CHUNK)
            yield CHUNK

    response = session.put(f"{dep['links']['bucket']}/big.bin", data=body(), timeout=300)
    assert response.status_code == 200, response.text
    assert response.json()["size"] == UPLOAD_MB * len(CHUNK)
    assert response.json()["checksum"] == "md5:" + digest.hexdigest()
    growth_mb = max(peak_rss_kb(pid) - before[pid] for pid in workers) / 1024
    print(f"\nstreamed {UPLOAD_MB} MB; largest peak-memory growth of a worker: {growth_mb:.1f} MB")
    assert growth_mb < 40, f"server memory grew by {growth_mb:.0f} MB for a {UPLOAD_MB} MB upload"


def test_publish_is_searchable_from_every_worker(live_server, session):
    base = live_server["url"]
    dep = session.post(
        f"{base}/api/deposit/depositions",
        json={"metadata": {"title": "Searchable everywhere", "upload_type": "software",
                           "description": "Found at once.", "creators": [{"name": "Doe, Jo"}]}},
    ).json()
    assert session.put(f"{dep['links']['bucket']}/code.zip", data=b"zip").status_code == 200
    assert session.post(dep["links"]["publish"]).status_code == 202
    # Connections are spread over the worker processes; every answer must already see the record.
    for _ in range(12):
        with requests.get(f"{base}/api/records/?q=everywhere", verify=live_server["cert"],
                          headers={"Connection": "close"}, timeout=10) as response:
            assert response.json()["hits"]["total"] == 1


def test_interrupted_upload_leaves_nothing(live_server, session):
    import socket
    import ssl

    base = live_server["url"]
    dep = session.post(f"{base}/api/deposit/depositions", json={}).json()
    path = dep["links"]["bucket"].split(base, 1)[1] + "/partial.bin"
    context = ssl.create_default_context(cafile=live_server["cert"])
    host, port = base.split("//")[1].split(":")
    with socket.create_connection((host, int(port))) as raw, context.wrap_socket(raw, server_hostname=host) as tls:
        head = (f"PUT {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: {session.headers['Authorization']}\r\n"
                f"Content-Length: {10 * len(CHUNK)}\r\n\r\n")
        tls.sendall(head.encode() + CHUNK * 2)  # then the client dies mid-body
    listing = session.get(dep["links"]["bucket"]).json()
    assert listing["contents"] == []
    tmp = os.path.join(live_server["env"]["INSTANCE_PATH"], "files", ".tmp")
    import time

    deadline = time.monotonic() + 60  # the server removes it once it sees the connection gone: seconds when busy
    while os.listdir(tmp) and time.monotonic() < deadline:
        time.sleep(0.1)
    # Seen once in CI (PostgreSQL run) and never reproduced in 150 interrupted uploads since: the server's log
    # says whether a worker was killed mid-upload (WORKER TIMEOUT) or what the upload's thread raised.
    with open(live_server["log"], errors="replace") as log:
        assert os.listdir(tmp) == [], "server log (end):\n" + log.read()[-6000:]
