"""A real HTTP server on loopback in front of a live server, passing every request on and answering what the
test asks for instead where it asks (a 500, a 429 with Retry-After, garbage, a body cut short, altered bytes):
a source that misbehaves for `import api`. The live server's address in its answers becomes the proxy's, so that
the links a client follows come back through it."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import requests


@dataclass
class Fault:
    """What to answer for a path containing `where`, `times` times (None: always)."""

    where: str
    kind: str  # status | retry-after | window | garbage | cut | altered | no-creators (records without
    # creators) | duplicate (a search page listing its first hit twice) | result-window (a search listing that
    # ends after `limit` results, as the reference service's ends at its 10,000th)
    times: int | None = None
    seconds: int = 3  # of retry-after, and the window's reset from now
    status: int = 500  # of `status`
    record: int | None = None  # of no-creators: only the hits of this record (None: every hit)
    limit: int = 1  # of result-window
    drop_query: bool = False  # of result-window: the search's `q` is not passed on (a source that ignores it)


@dataclass
class FaultyProxy:
    url: str
    upstream: str
    faults: list[Fault] = field(default_factory=list)
    seen: list[str] = field(default_factory=list)  # the paths asked for, in order

    def fault_for(self, path: str) -> Fault | None:
        for fault in self.faults:
            if fault.where in path and (fault.times is None or fault.times > 0):
                if fault.times is not None:
                    fault.times -= 1
                return fault
        return None


@contextmanager
def faulty_proxy(upstream: str, cert: str) -> Iterator[FaultyProxy]:
    """A proxy on 127.0.0.1 in front of `upstream` (a live server, trusted with `cert`)."""
    session = requests.Session()
    session.verify, session.trust_env = cert, False
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
            with lock:
                proxy.seen.append(self.path)
                fault = proxy.fault_for(self.path)
            headers = {k: v for k, v in self.headers.items() if k.lower() in ("authorization", "accept")}
            path = self.path
            if fault is not None and fault.drop_query:
                path = re.sub(r"([?&])q=[^&]*&?", r"\1", path).rstrip("&?")
            answer = session.get(upstream + path, headers=headers, timeout=60)
            body = answer.content
            if "json" in answer.headers.get("Content-Type", ""):
                body = body.replace(upstream.encode(), proxy.url.encode())
            status, extra = answer.status_code, {}
            if fault is not None and fault.kind == "status":
                status, body = fault.status, b'{"message": "broken", "status": %d}' % fault.status
            elif fault is not None and fault.kind == "retry-after":
                status, body, extra = 429, b'{"message": "slow down", "status": 429}', {"Retry-After": str(fault.seconds)}
            elif fault is not None and fault.kind == "window":
                extra = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(time.time()) + fault.seconds)}
            elif fault is not None and fault.kind == "garbage":
                body = b"<html>Service temporarily replaced by a cat</html>"
            elif fault is not None and fault.kind == "result-window":
                page = json.loads(body)
                page["hits"]["hits"] = page["hits"]["hits"][:fault.limit]
                page.get("links", {}).pop("next", None)
                body = json.dumps(page).encode()
            elif fault is not None and fault.kind in ("no-creators", "duplicate"):
                page = json.loads(body)
                for hit in page["hits"]["hits"]:
                    if fault.kind == "no-creators" and fault.record in (None, hit.get("id")):
                        hit["metadata"].pop("creators", None)
                if fault.kind == "duplicate":
                    page["hits"]["hits"].append(page["hits"]["hits"][0])
                body = json.dumps(page).encode()
            elif fault is not None and fault.kind == "altered":
                body = bytes(reversed(body)) if len(body) > 1 else b"?"
            self.send_response(status)
            self.send_header("Content-Type", answer.headers.get("Content-Type", "application/octet-stream"))
            self.send_header("Content-Length", str(len(body)))
            for name, value in extra.items():
                self.send_header(name, value)
            self.end_headers()
            if fault is not None and fault.kind == "cut":
                self.wfile.write(body[: len(body) // 2])  # then the connection closes: the body stops mid-way
                self.close_connection = True
                return
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    proxy = FaultyProxy(f"http://127.0.0.1:{server.server_address[1]}", upstream)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)  # a quick stop
    thread.start()
    try:
        yield proxy
    finally:
        server.shutdown()
        server.server_close()
        session.close()
