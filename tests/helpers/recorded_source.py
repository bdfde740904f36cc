"""A real HTTP server on loopback that answers as a recorded OAI-PMH repository (tests/imports/fixtures/, their
origin in SOURCES.md) and serves files: each request is looked up in a script the test writes, so a test can make
the source answer garbage, stop mid-page, repeat a token or fail for a while."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from lxml import etree

FIXTURES = Path(__file__).resolve().parents[1] / "imports" / "fixtures"
OAI = "{http://www.openarchives.org/OAI/2.0/}"


def fixture(name: str) -> bytes:
    """The bytes of a recorded answer."""
    return (FIXTURES / name).read_bytes()


def token_of(body: bytes) -> str | None:
    """The resumption token a recorded answer hands out, if any."""
    root = etree.fromstring(body)
    found = root.find(f"{OAI}ListRecords/{OAI}resumptionToken")
    return (found.text or "").strip() or None if found is not None else None


@dataclass
class RecordedSource:
    """The script: answers by key (`first` for a request without a token, else the token; `/path` for files),
    each a list of (status, body) given in turn, the last one repeated; and the requests received."""

    url: str = ""
    answers: dict[str, list[tuple[int, bytes]]] = field(default_factory=dict)
    received: list[dict[str, str]] = field(default_factory=list)

    def chain(self, *names: str, then: tuple[int, bytes] | None = None) -> None:
        """Serve the recorded pages `names` in order, each under the token the page before handed out; the last
        page's token (if it has one) gets `then`."""
        key = "first"
        for name in names:
            body = fixture(name)
            self.answers[key] = [(200, body)]
            key = token_of(body) or ""
        if key and then is not None:
            self.answers[key] = [then]

    def key_of(self, path: str, query: dict[str, str]) -> str:
        if path != "/oai":
            return path
        return query.get("resumptionToken", "first")


def _handler(source: RecordedSource) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
            parts = urlsplit(self.path)
            query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
            source.received.append({"path": parts.path, **query})
            queue = source.answers.get(source.key_of(parts.path, query))
            status, body = (queue.pop(0) if len(queue) > 1 else queue[0]) if queue else (404, b"not found")
            self.send_response(status)
            self.send_header("Content-Type", "text/xml; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    return Handler


@contextmanager
def recorded_source() -> Iterator[RecordedSource]:
    """A RecordedSource listening on 127.0.0.1 (a port of its own) until the block ends."""
    source = RecordedSource()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(source))
    source.url = f"http://127.0.0.1:{server.server_address[1]}/oai"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)  # a quick stop
    thread.start()
    try:
        yield source
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
