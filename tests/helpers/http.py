"""Small helpers shared by tests."""

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import requests
from flask import Flask
from flask.testing import FlaskClient


class HttpsClient(FlaskClient):
    """A test client whose requests arrive over HTTPS, as the service requires."""

    def open(self, *args: Any, **kwargs: Any) -> Any:
        if not args or isinstance(args[0], str):
            kwargs.setdefault("base_url", "https://localhost")
        return super().open(*args, **kwargs)


def https_client(app: Flask) -> FlaskClient:
    """A test client speaking HTTPS to `app`."""
    app.test_client_class = HttpsClient
    return app.test_client()


def download(client: FlaskClient, url: str, **kwargs: Any) -> Any:
    """GET a file and close the response (its file handle) before returning it with its body read."""
    response = client.get(url, **kwargs)
    response.get_data()
    response.close()
    return response


# The project's root (tests import this rather than `conftest`, whose name several test folders share).
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def token_session(live_server: dict, email: str) -> requests.Session:
    """A requests session speaking to the live server with a new token of `email` (made by scripts/create_token.py)."""
    token = subprocess.run(
        [sys.executable, "scripts/create_token.py", "--email", email],
        env=live_server["env"], cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.strip()
    http = requests.Session()
    http.verify = live_server["cert"]
    http.trust_env = False  # a CA bundle named in the environment must not replace the server certificate
    http.headers["Authorization"] = f"Bearer {token}"
    return http


def worker_pids(master: int) -> list[int]:
    with open(f"/proc/{master}/task/{master}/children") as handle:
        return [int(pid) for pid in handle.read().split()]


def peak_rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise AssertionError("no VmHWM")


def wait_until_serving(base: str, cert: str) -> None:
    """Wait for a live server's workers, which load the app after the server listens: seconds on a busy machine."""
    for _ in range(60):
        try:
            if requests.get(base + "/healthz", verify=cert, timeout=30).status_code == 200:
                return
        except requests.ConnectionError:
            pass
    raise AssertionError("the server never answered /healthz")


def log_text(path: str, ready: Callable[[str], bool], timeout: float = 60.0) -> str:
    """A live server's log once `ready(text)` holds: a request's access line is written after its response is
    sent, so it may lag the answer (for long on a busy machine). Returns what is there after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        with open(path) as handle:
            text = handle.read()
        if ready(text) or time.monotonic() > deadline:
            return text
        time.sleep(0.05)


def workers_answering(server: dict) -> set[str]:
    """The worker processes that have answered the live server (`live_server_3_workers`: its log names each one)."""
    with open(server["log"]) as handle:
        return set(re.findall(r"pid=<?(\d+)>? ", handle.read()))


def wait_for_workers(server: dict, count: int, seconds: float = 120) -> None:
    """Send CORS preflights (which no limit counts) on new connections until `count` workers have answered: they
    boot slowly on a busy machine, and a worker still starting neither answers nor takes a connection."""
    deadline = time.monotonic() + seconds
    preflight = {"Origin": "https://elsewhere.example", "Access-Control-Request-Method": "GET"}
    while len(workers_answering(server)) < count and time.monotonic() < deadline:
        with requests.Session() as session:
            session.trust_env = False
            try:
                session.options(server["url"] + "/api/", headers=preflight, verify=server["cert"], timeout=30)
            except requests.RequestException:
                time.sleep(0.2)
