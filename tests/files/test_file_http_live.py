"""The key and range rules through the real server: its own path decoding (percent-encoded slashes, invalid UTF-8,
dot segments sent as is) must end in the same answers as in-process."""

import http.client
import json
import ssl
import subprocess
import sys
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests


@pytest.fixture(scope="module")
def target(live_server):  # type: ignore[no-untyped-def]
    token = subprocess.run(
        [sys.executable, "scripts/create_token.py", "--email", "keys@example.org"],
        env=live_server["env"], capture_output=True, text=True, check=True,
    ).stdout.strip()
    auth = {"Authorization": f"Bearer {token}"}
    dep = requests.post(f"{live_server['url']}/api/deposit/depositions", json={}, headers=auth,
                        verify=live_server["cert"], timeout=30).json()
    return live_server, auth, urlsplit(dep["links"]["bucket"]).path


def raw(live_server, method: str, path: str, headers: dict, body: bytes = b"") -> tuple[int, Any, bytes]:  # type: ignore[no-untyped-def]
    """One request with the path sent byte for byte (no client-side normalisation of `..` or escapes)."""
    url = urlsplit(live_server["url"])
    context = ssl.create_default_context(cafile=live_server["cert"])
    connection = http.client.HTTPSConnection(url.hostname, url.port, context=context, timeout=30)
    try:
        connection.request(method, path, body=body, headers={**headers, "Content-Length": str(len(body))})
        response = connection.getresponse()
        return response.status, response.headers, response.read()  # case-insensitive names
    finally:
        connection.close()


@pytest.mark.parametrize(
    ("path", "status", "key"),
    [
        ("dir/sub/file.txt", 200, "file.txt"),
        ("a%2Fb.txt", 200, "b.txt"),
        ("Cafe%CC%81.txt", 200, "Caf\u00e9.txt"),
        ("..", 400, None),
        ("a/../b.txt", 400, None),
        ("%2E%2E/x.txt", 400, None),
        ("%FF.txt", 400, None),
        ("nul%00.txt", 400, None),
        ("back%5Cslash.txt", 400, None),
    ],
)
def test_keys_through_the_real_server(target, path, status, key):
    live_server, auth, bucket = target
    code, _, body = raw(live_server, "PUT", f"{bucket}/{path}", auth, b"x")
    assert code == status, body[:300]
    if key is not None:
        assert json.loads(body)["key"] == key


def test_ranges_and_partial_uploads_through_the_real_server(target):
    live_server, auth, bucket = target
    content = bytes(range(256)) * 8
    assert raw(live_server, "PUT", f"{bucket}/r.bin", {**auth, "Content-Range": "bytes 0-9/20"}, b"x" * 10)[0] == 400
    assert raw(live_server, "PUT", f"{bucket}/r.bin", auth, content)[0] == 200
    code, headers, body = raw(live_server, "GET", f"{bucket}/r.bin", {**auth, "Range": "bytes=-5000"})
    assert code == 206 and body == content and headers["Content-Range"] == f"bytes 0-{len(content) - 1}/{len(content)}"
    code, _, body = raw(live_server, "GET", f"{bucket}/r.bin", {**auth, "Range": "bytes=1000-1009"})
    assert code == 206 and body == content[1000:1010]
    code, _, body = raw(live_server, "GET", f"{bucket}/r.bin", {**auth, "Range": "bytes=0-1,5-6"})
    assert code == 200 and body == content
    code, headers, _ = raw(live_server, "GET", f"{bucket}/r.bin", {**auth, "Range": "bytes=4096-"})
    assert code == 416 and headers["Content-Range"] == f"bytes */{len(content)}"
