"""The server as documented (scripts/serve.py → gunicorn) keeps serving while clients are slow or malformed, answers
its own errors with the error object, keeps tokens out of its log and believes no forwarded header by itself."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import socket
import ssl
import struct
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import pytest
import requests
from helpers.http import ROOT, free_port, https_client

from app import create_app

SLOW_CLIENTS = 200


def _address(server: dict) -> tuple[str, int]:
    url = urlsplit(server["url"])
    return url.hostname, url.port


def tls_connection(server: dict, timeout: float = 10, rcvbuf: int | None = None) -> ssl.SSLSocket:
    raw = socket.socket()
    if rcvbuf:
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    raw.settimeout(timeout)
    raw.connect(_address(server))
    return ssl.create_default_context(cafile=server["cert"]).wrap_socket(raw, server_hostname="127.0.0.1")


def read_response(sock: ssl.SSLSocket) -> tuple[int, dict[str, str], bytes]:
    """One response read until the server closes the connection."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), {k.lower(): v for k, v in headers.items()}, body


def raw_request(server: dict, data: bytes) -> tuple[int, dict[str, str], bytes]:
    with tls_connection(server) as sock:
        sock.sendall(data)
        return read_response(sock)


def open_many(count: int, start) -> list:  # type: ignore[no-untyped-def]
    """`count` connections opened at once by `start(i)`; failures (a server too busy to accept) are kept out."""

    def attempt(i: int):  # type: ignore[no-untyped-def]
        try:
            return start(i)
        except OSError:
            return None

    with ThreadPoolExecutor(32) as pool:
        return [sock for sock in pool.map(attempt, range(count)) if sock is not None]


def close_all(socks: list) -> None:
    for sock in socks:
        try:
            sock.close()
        except OSError:
            pass


def answers_promptly(server: dict, headers: dict | None = None) -> None:
    """A normal request still gets its answer (the bound is generous: before the fix it never came)."""
    response = requests.get(server["url"] + "/api/", headers=headers, verify=server["cert"], timeout=10)
    assert response.status_code == 200


@pytest.fixture(scope="module", autouse=True)
def ready(live_server) -> None:
    """The fixture waits for the port only: wait for the workers to answer (they start the app first)."""
    requests.get(live_server["url"] + "/api/", verify=live_server["cert"], timeout=120)


@pytest.fixture(scope="module")
def token(live_server) -> str:
    return subprocess.run(
        [sys.executable, "scripts/create_token.py", "--email", "serving@example.org"],
        env=live_server["env"], capture_output=True, text=True, check=True, cwd=ROOT,
    ).stdout.strip()


def test_slow_headers_do_not_block_other_clients(live_server):
    def start(i: int) -> ssl.SSLSocket:
        sock = tls_connection(live_server)
        sock.sendall(b"GET /api/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1\r\n")
        return sock

    slow = open_many(SLOW_CLIENTS, start)
    try:
        for sock in slow:  # one more header line each: alive, and still not done
            sock.sendall(b"X-Slower: 2\r\n")
        answers_promptly(live_server)
        # The headers have a deadline: the server gives up on them with an error object, then closes.
        slow[0].settimeout(30)
        status, headers, body = read_response(slow[0])
        assert status == 408 and json.loads(body)["status"] == 408
    finally:
        close_all(slow)


def test_slow_bodies_do_not_block_other_clients(live_server):
    def start(i: int) -> ssl.SSLSocket:
        sock = tls_connection(live_server)
        sock.sendall(b"POST /api/metadata/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100000\r\n\r\n{")
        return sock

    slow = open_many(SLOW_CLIENTS, start)
    try:
        for sock in slow:
            sock.sendall(b'"title": "')
        answers_promptly(live_server)
    finally:
        close_all(slow)


def test_clients_that_do_not_read_do_not_block_others(live_server, token):
    auth = {"Authorization": f"Bearer {token}"}
    session = requests.Session()
    session.verify, session.trust_env = live_server["cert"], False
    deposit = session.post(live_server["url"] + "/api/deposit/depositions", json={}, headers=auth).json()
    url = urlsplit(deposit["links"]["bucket"] + "/big.bin")
    size = 24 * 1024 * 1024
    stored = session.put(deposit["links"]["bucket"] + "/big.bin", data=b"x" * size, headers=auth, timeout=60)
    assert stored.status_code == 200, stored.text

    def start(i: int) -> ssl.SSLSocket:  # asks for the file, then reads nothing
        sock = tls_connection(live_server, rcvbuf=4096)
        sock.sendall(f"GET {url.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n\r\n".encode())
        return sock

    stalled = open_many(40, start)  # many more than the server's threads, whichever process accepts them
    try:
        time.sleep(1)  # let the server fill what the sockets hold
        answers_promptly(live_server, auth)
    finally:
        close_all(stalled)
        session.close()


def test_bodies_arriving_in_odd_pieces_keep_every_byte_and_the_connection(live_server, token):
    """Uploads cross the front's buffered start, its 1 MiB fetches and the pieces TLS delivers at sizes that
    match none of them; the stored bytes are the sent ones, and a request pipelined right behind each body on the
    same connection is answered (the front read the body to its end, not past it)."""
    auth = {"Authorization": f"Bearer {token}"}
    session = requests.Session()
    session.verify, session.trust_env = live_server["cert"], False
    deposit = session.post(live_server["url"] + "/api/deposit/depositions", json={}, headers=auth).json()
    path = urlsplit(deposit["links"]["bucket"]).path
    session.close()
    pieces = random.Random(7)
    for size in (256 * 1024 + 1, 1024 * 1024 - 1, 3 * 1024 * 1024 + 12345):
        body = os.urandom(size)
        head = (f"PUT {path}/odd-{size}.bin HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
                f"Content-Length: {size}\r\n\r\n").encode()
        follow = f"GET {path}/odd-{size}.bin HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n" \
                 "Connection: close\r\n\r\n"
        with tls_connection(live_server, timeout=60) as sock:
            sock.sendall(head)
            sent = 0
            while sent < size:
                step = pieces.randint(1, 200_000)
                sock.sendall(body[sent:sent + step])
                sent += step
            sock.sendall(follow.encode())
            status, _, answer = read_response(sock)
        assert status == 200, answer[:300]
        stored, _, second = answer.partition(b"HTTP/1.1 200")
        assert json.loads(stored)["checksum"] == "md5:" + hashlib.md5(body).hexdigest()
        assert second.partition(b"\r\n\r\n")[2] == body  # the pipelined GET: the same bytes back


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (b"NOT A REQUEST LINE\r\n\r\n", 400),
        (b"GET /api/ HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header Name: x\r\n\r\n", 400),
        (b"GET /api/" + b"a" * 5000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 414),
        (b"GET /api/ HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"".join(b"X-H%d: v\r\n" % i for i in range(101)) + b"\r\n",
         431),
        (b"GET /api/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"v" * 9000 + b"\r\n\r\n", 431),
        # Request smuggling: both framings at once, or a Transfer-Encoding other than chunked, are refused.
        (b"POST /api/metadata/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4\r\n"
         b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
        (b"POST /api/metadata/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\n"
         b"abcde", 400),
        (b"POST /api/metadata/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
         400),
    ],
    ids=["request-line", "header-name", "uri-too-long", "too-many-headers", "header-too-large",
         "length-and-chunked", "two-lengths", "unknown-coding"],
)
def test_the_servers_own_errors_are_error_objects(live_server, request_bytes, status):
    got, headers, body = raw_request(live_server, request_bytes)
    assert got == status
    assert headers["content-type"] == "application/json"
    answer = json.loads(body)
    assert answer["status"] == status and answer["message"]


def test_pipelined_requests_are_answered_in_order(live_server):
    with tls_connection(live_server) as sock:
        sock.sendall(b"GET /api/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                     b"GET /api/licenses/cc-by HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        status, _, body = read_response(sock)
    assert status == 200
    assert body.count(b"HTTP/1.1 200") == 1  # the second answer follows the first on the same connection


def test_https_answers_carry_hsts(live_server):
    response = requests.get(live_server["url"] + "/api/", verify=live_server["cert"], timeout=10)
    assert response.headers["Strict-Transport-Security"] == "max-age=31536000"


def test_access_tokens_never_reach_the_log(live_server):
    secret = "s3cr3t-token-value-4711"
    response = requests.get(live_server["url"] + f"/api/records/?q=x&access_token={secret}",
                            headers={"Referer": f"https://elsewhere.example/?access_token={secret}"},
                            verify=live_server["cert"], timeout=10)
    assert response.status_code == 401
    # A request the server itself refuses is logged too.
    raw_request(live_server, f"GET /api/?access_token={secret} HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header: x\r\n\r\n"
                .encode())
    time.sleep(0.5)  # the access log line is written after the response
    with open(os.path.join(live_server["env"]["INSTANCE_PATH"], "server.log")) as handle:
        log = handle.read()
    assert "access_token=[redacted]" in log
    assert secret not in log


def _reset(sock: ssl.SSLSocket) -> None:
    """Leave as a client that gives up does: the connection reset, nothing more read or sent."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def _access_lines(server: dict, marker: str, count: int) -> list[str]:
    """The access lines naming `marker`, once there are `count` (each is written when its request is done)."""
    deadline = time.monotonic() + 15
    while True:
        with open(os.path.join(server["env"]["INSTANCE_PATH"], "server.log")) as handle:
            lines = [line for line in handle if marker in line and "HTTP/1.1\"" in line]
        if len(lines) >= count or time.monotonic() > deadline:
            return lines
        time.sleep(0.1)


def test_a_request_whose_client_left_is_logged_499_not_500(live_server, token):
    """gunicorn logs a request whose client left before the answer as a 500 with no byte sent, whether the client
    left while the request was arriving or while the app was answering it: an operator reading the log would see
    a server error. Such a line says 499 (nginx's "client closed request"); the app's own answers keep theirs."""
    auth = {"Authorization": f"Bearer {token}"}
    marker = f"left-{random.randrange(10**9)}"
    # 1. The body stops half way: the app is never called.
    sock = tls_connection(live_server)
    sock.sendall(f"POST /api/deposit/depositions?{marker}=body HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                 f"application/json\r\nAuthorization: Bearer {token}\r\nContent-Length: 1000\r\n\r\n{{\"a\"".encode())
    time.sleep(0.3)
    _reset(sock)
    # 2. An upload given up while the app reads it: the app answers, to nobody.
    bucket = requests.post(live_server["url"] + "/api/deposit/depositions", json={}, headers=auth,
                           verify=live_server["cert"], timeout=10).json()["links"]["bucket"]
    sock = tls_connection(live_server)
    sock.sendall(f"PUT {urlsplit(bucket).path}/{marker}.bin HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                 f"{token}\r\nContent-Length: 100000000\r\n\r\n".encode() + b"x" * 2_000_000)
    time.sleep(0.5)
    _reset(sock)
    # 3. An answer the server did write keeps its status (a 404 here).
    assert requests.get(live_server["url"] + f"/api/records/999999?{marker}=kept", verify=live_server["cert"],
                        timeout=10).status_code == 404
    lines = _access_lines(live_server, marker, 3)
    statuses = {next(p for p in ("=body", ".bin", "=kept") if p in line): line.split('" ')[1].split()[0]
                for line in lines}
    assert statuses == {"=body": "499", ".bin": "499", "=kept": "404"}, lines


@pytest.mark.slow  # a subprocess: seconds of start-up
def test_bare_gunicorn_believes_no_forwarded_header(tmp_path):
    """`gunicorn 'app:create_app()'` run in the checkout, plain HTTP, TRUSTED_PROXIES=0: X-Forwarded-Proto from
    127.0.0.1 does not make a request HTTPS."""
    port = free_port()
    env = {**os.environ, "INSTANCE_PATH": str(tmp_path), "BASE_URL": f"https://127.0.0.1:{port}",
           "SECRET_KEY": "bare", "DATABASE_URL": f"sqlite:///{tmp_path}/repository.db", "TRUSTED_PROXIES": "0"}
    env.pop("GUNICORN_CMD_ARGS", None)
    gunicorn = os.path.join(os.path.dirname(sys.executable), "gunicorn")
    with open(tmp_path / "server.log", "w") as log:
        proc = subprocess.Popen([gunicorn, "app:create_app()", "--bind", f"127.0.0.1:{port}", "--workers", "1"],
                                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            for _ in range(300):  # until the server listens (it may take a while to start on a busy machine)
                try:
                    response = requests.get(f"http://127.0.0.1:{port}/api/", timeout=30,
                                            headers={"X-Forwarded-Proto": "https", "X-Forwarded-Ssl": "on"})
                    break
                except requests.ConnectionError:
                    if proc.poll() is not None:
                        pytest.fail("gunicorn exited:\n" + (tmp_path / "server.log").read_text())
                    time.sleep(0.2)
            else:
                pytest.fail("gunicorn never listened:\n" + (tmp_path / "server.log").read_text())
            assert response.status_code == 403
            assert "Plain HTTP" in response.json()["message"]
            assert "Strict-Transport-Security" not in response.headers
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def test_hsts_on_https_answers_only(client, make_settings):
    assert client.get("/api/").headers["Strict-Transport-Security"] == "max-age=31536000"
    plain = client.get("/api/", base_url="http://localhost")
    assert plain.status_code == 403 and "Strict-Transport-Security" not in plain.headers


def test_a_scheme_a_server_took_from_forwarded_headers_is_not_believed(client):
    """gunicorn's own workers set https from X-Forwarded-Proto (from 127.0.0.1 by default) on a plain socket."""
    with socket.socket() as plain_socket:
        response = client.get("/api/", headers={"X-Forwarded-Proto": "https"},
                              environ_overrides={"gunicorn.socket": plain_socket})
    assert response.status_code == 403
    assert "Plain HTTP" in response.get_json()["message"]


def test_forwarded_proto_counts_behind_trusted_proxies(make_settings):
    app = create_app(make_settings(TRUSTED_PROXIES=1, HSTS_MAX_AGE=600))
    try:
        response = https_client(app).get("/api/", base_url="http://localhost", headers={"X-Forwarded-Proto": "https"})
        assert response.status_code == 200
        assert response.headers["Strict-Transport-Security"] == "max-age=600"
    finally:
        app.extensions["repository"].db.dispose()


def test_app_log_lines_are_redacted_too(caplog):
    from repository.serving.logs import install_redaction

    install_redaction()
    logging.getLogger("repository").warning("failed %s", "GET /api/records/1/files/a.csv?access_token=abc123&x=1")
    logging.getLogger("repository").warning("header: Authorization: Bearer xyz789")
    assert "abc123" not in caplog.text and "xyz789" not in caplog.text
    assert "access_token=[redacted]&x=1" in caplog.text
