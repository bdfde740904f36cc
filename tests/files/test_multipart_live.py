"""A multipart upload through the real server (gunicorn, TLS) whose connection is cut in the middle of a part: the
listing then shows only that part missing, the client re-sends only it, and the upload completes with the right
bytes and checksums."""

from __future__ import annotations

import hashlib
import http.client
import os
import ssl
from urllib.parse import urlsplit

import pytest
from helpers.http import token_session

PART = 1024 * 1024
DATA = os.urandom(3 * PART - 12345)


@pytest.fixture(scope="module")
def session(live_server):  # type: ignore[no-untyped-def]
    http = token_session(live_server, "resume@example.org")
    yield http
    http.close()


def cut_mid_part(live_server: dict, url: str, token: str, body: bytes) -> None:
    """Send the headers of a PUT of `body` and half of its bytes, then close the connection."""
    parts = urlsplit(url)
    context = ssl.create_default_context(cafile=live_server["cert"])
    connection = http.client.HTTPSConnection(parts.hostname, parts.port, context=context, timeout=30)
    connection.putrequest("PUT", f"{parts.path}?{parts.query}")
    connection.putheader("Authorization", token)
    connection.putheader("Content-Length", str(len(body)))
    connection.endheaders()
    connection.send(body[: len(body) // 2])
    connection.close()


def test_a_cut_part_is_the_only_one_sent_again(live_server, session):
    dep = session.post(f"{live_server['url']}/api/deposit/depositions", json={}).json()
    url = f"{dep['links']['bucket']}/resumed.bin"
    started = session.post(f"{url}?uploads&size={len(DATA)}&partSize={PART}")
    assert started.status_code == 200, started.text
    uid = started.json()["id"]

    def part_url(n: int) -> str:
        return f"{url}?uploadId={uid}&partNumber={n}"

    for n in (0, 2):
        answer = session.put(part_url(n), data=DATA[n * PART:(n + 1) * PART], timeout=60)
        assert answer.status_code == 200, answer.text
    cut_mid_part(live_server, part_url(1), session.headers["Authorization"], DATA[PART:2 * PART])

    listed = session.get(f"{url}?uploadId={uid}").json()  # a part is listed only once whole and verified
    assert [p["part_number"] for p in listed["parts"]] == [0, 2] and listed["missing"] == [1]

    resent = session.put(part_url(listed["missing"][0]), data=DATA[PART:2 * PART], timeout=60)
    assert resent.status_code == 200, resent.text
    done = session.post(f"{url}?uploadId={uid}", timeout=60)
    assert done.status_code == 200, done.text
    assert done.json()["checksum"] == "md5:" + hashlib.md5(DATA).hexdigest()
    assert done.json()["checksums"]["sha256"] == hashlib.sha256(DATA).hexdigest()
    assert session.get(url, timeout=60).content == DATA
