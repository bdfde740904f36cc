"""Connections a client opens all at once (a proxy's pool of upstream connections, a benchmark's keep-alive
connections) are shared out among the worker processes (repository/serving/worker.py, `_accept`): an event loop's
server accepts every waiting connection at once, so the first worker to wake used to take them all, and one core
served what three processes were started for."""

from __future__ import annotations

import re
import socket
import ssl
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import requests

from tests.serving.test_serving import _address, read_response

BURSTS, CONNECTIONS = 3, 9


def _answered_by(server: dict) -> dict[str, str]:
    """Which worker process answered each request of this test (by its `spread` tag)."""
    with open(server["log"]) as handle:
        return {tag: pid for pid, tag in re.findall(r"pid=<?(\d+)>? GET /api/\?spread=(\S+) ", handle.read())}


def _handshake(server: dict):  # type: ignore[no-untyped-def]
    context = ssl.create_default_context(cafile=server["cert"])
    return lambda raw: context.wrap_socket(raw, server_hostname="127.0.0.1")


def _wait_for_workers(server: dict, count: int, seconds: float = 120) -> None:
    """CORS preflights (no limit counts them) on new connections until `count` workers have answered: they boot
    slowly on a busy machine, and a worker still starting takes no connection."""
    deadline = time.monotonic() + seconds
    preflight = {"Origin": "https://elsewhere.example", "Access-Control-Request-Method": "GET"}
    while time.monotonic() < deadline:
        with open(server["log"]) as handle:
            if len(set(re.findall(r"pid=<?(\d+)>? ", handle.read()))) >= count:
                return
        with requests.Session() as session:
            session.trust_env = False
            try:
                session.options(server["url"] + "/api/", headers=preflight, verify=server["cert"], timeout=30)
            except requests.RequestException:
                time.sleep(0.2)


def test_connections_opened_together_are_shared_out_among_the_workers(live_server_3_workers):
    server = live_server_3_workers
    _wait_for_workers(server, 3)
    time.sleep(1)  # the workers' connections from the wait closed: each starts the bursts holding none
    for burst in range(BURSTS):
        # Connected in a row (microseconds: the kernel queues them for accept), then the TLS handshakes.
        raws = [socket.create_connection(_address(server), timeout=30) for _ in range(CONNECTIONS)]
        with ThreadPoolExecutor(CONNECTIONS) as pool:
            socks = list(pool.map(_handshake(server), raws))
        for n, sock in enumerate(socks):
            sock.sendall(f"GET /api/?spread={burst}-{n} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                         .encode())
        assert [read_response(sock)[0] for sock in socks] == [200] * CONNECTIONS
        for sock in socks:
            sock.close()
    deadline = time.monotonic() + 10  # the access log is written as each answer goes out
    while len(_answered_by(server)) < BURSTS * CONNECTIONS and time.monotonic() < deadline:
        time.sleep(0.1)
    answered = _answered_by(server)
    assert len(answered) == BURSTS * CONNECTIONS
    bursts = [Counter(pid for tag, pid in answered.items() if tag.startswith(f"{burst}-")) for burst in range(BURSTS)]
    # An even share is 3 of each burst of 9; the first worker to wake used to take most of a burst, or all of it.
    assert max(max(shares.values()) for shares in bursts) <= 5, bursts
    assert len(set(answered.values())) == 3, bursts
