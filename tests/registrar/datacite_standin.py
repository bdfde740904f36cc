"""A stand-in for DataCite's REST API on 127.0.0.1: the part of https://support.datacite.org/docs/api-create-dois
the registrar uses, answered the way DataCite answers (JSON:API documents, `{"errors": [...]}` bodies).

Implemented: basic auth (401), the JSON:API content type (415), `PUT /dois/<doi>` creating (201) or updating (200)
with the events publish/register/hide and DataCite's state rules (draft -> registered -> findable, findable ->
registered by hide, an event that does not apply is ignored), validation (url and xml required, xml base64 and well-formed with a matching identifier: 422;
a prefix outside the account: 403), and `GET /dois/<doi>` (404 for unknown DOIs, and for non-findable ones without
credentials). `fail(status, times)` and `delay` simulate an agency in trouble.
"""

from __future__ import annotations

import base64
import binascii
import json
import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

from lxml import etree

JSONAPI = "application/vnd.api+json"


class StandinError(Exception):
    def __init__(self, status: int, *errors: dict[str, str]) -> None:
        super().__init__(status)
        self.status = status
        self.errors = list(errors)


class DataCiteStandin:
    """The server and its state: `dois` maps a lower-case DOI to its stored attributes; `requests` logs calls."""

    def __init__(
        self, username: str = "TEST.REPOSITORY", password: str = "s3cret", prefixes: tuple[str, ...] = ("10.5072",)
    ) -> None:
        self.username = username
        self.password = password
        self.prefixes = tuple(prefixes)
        self.dois: dict[str, dict[str, Any]] = {}
        self.requests: list[dict[str, Any]] = []
        self.delay = 0.0
        self._faults: list[tuple[int, dict[str, str], bytes]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.standin = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> DataCiteStandin:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def fail(self, status: int, times: int = 1, headers: dict[str, str] | None = None, body: bytes | None = None):
        """Answer the next `times` requests with `status` (DataCite's error body unless `body` is given)."""
        if body is None:
            body = json.dumps({"errors": [{"status": str(status), "title": "Simulated failure"}]}).encode()
        with self._lock:
            self._faults.extend([(status, headers or {}, body)] * times)

    def take_fault(self) -> tuple[int, dict[str, str], bytes] | None:
        with self._lock:
            return self._faults.pop(0) if self._faults else None

    # The protocol ---------------------------------------------------------------------------------------------

    def authorized(self, header: str | None) -> bool:
        if not header or not header.startswith("Basic "):
            return False
        try:
            user, _, password = base64.b64decode(header[6:], validate=True).decode().partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return False
        return (user, password) == (self.username, self.password)

    def put(self, doi: str, body: bytes) -> tuple[int, dict[str, Any]]:
        try:
            document = json.loads(body)
            data = document["data"]
            attributes = data.get("attributes") or {}
        except (ValueError, KeyError, TypeError, AttributeError):
            raise StandinError(400, {"status": "400", "title": "You need to provide a payload following the JSONAPI spec"}) from None
        if data.get("type") != "dois":
            raise StandinError(400, {"status": "400", "title": "Type must be dois"})
        if attributes.get("doi") and attributes["doi"].lower() != doi.lower():
            raise StandinError(422, {"source": "doi", "title": "Does not match the DOI in the URL"})
        prefix = doi.partition("/")[0]
        if prefix not in self.prefixes:
            raise StandinError(403, {"status": "403", "title": "You are not authorized to access this resource."})
        with self._lock:
            existing = self.dois.get(doi.lower())
            record = dict(existing or {"doi": doi.lower(), "state": "draft", "url": None, "xml": None})
            if "url" in attributes:
                record["url"] = attributes["url"]
            if "xml" in attributes:
                record["xml"] = _decode_xml(doi, attributes["xml"])
            record["state"] = _next_state(record["state"], attributes.get("event"))
            if record["state"] != "draft":
                _check_complete(record)
            now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            record.setdefault("created", now)
            record["updated"] = now
            self.dois[doi.lower()] = record
        return (200 if existing else 201), _document(record)

    def get(self, doi: str, authorized: bool) -> dict[str, Any]:
        with self._lock:
            record = self.dois.get(doi.lower())
        if record is None or (record["state"] != "findable" and not authorized):
            raise StandinError(404, {"status": "404", "title": "The resource you are looking for doesn't exist."})
        return _document(record)


def _next_state(state: str, event: str | None) -> str:
    # DataCite's state machine (lupo, AASM with whiny_transitions: false) ignores an event that does not apply:
    # hiding a registered DOI, or registering a findable one, answers 200 and changes nothing.
    if event is None:
        return state
    if event == "publish":
        return "findable"
    if event == "register":
        return "registered" if state == "draft" else state
    if event == "hide":
        return "registered" if state == "findable" else state
    raise StandinError(422, {"source": "event", "title": f"Unknown event {event}"})


def _decode_xml(doi: str, encoded: Any) -> bytes:
    try:
        xml = base64.b64decode(str(encoded), validate=True)
    except (binascii.Error, ValueError):
        raise StandinError(422, {"source": "xml", "title": "Is not valid base64"}) from None
    try:
        root = etree.fromstring(xml, etree.XMLParser(resolve_entities=False, no_network=True))
    except etree.XMLSyntaxError as exc:
        raise StandinError(422, {"source": "xml", "title": f"Is not well-formed: {exc}"}) from None
    identifier = root.find("{*}identifier")
    if identifier is None or identifier.get("identifierType") != "DOI":
        raise StandinError(422, {"source": "identifier", "title": "Missing child element identifier"})
    if (identifier.text or "").strip().lower() != doi.lower():
        raise StandinError(422, {"source": "identifier", "title": f"Does not match the DOI {doi}"})
    return xml


def _check_complete(record: dict[str, Any]) -> None:
    errors = []
    if not record["url"]:
        errors.append({"source": "url", "title": "Can't be blank"})
    elif not str(record["url"]).startswith(("http://", "https://")):
        errors.append({"source": "url", "title": "Is not a valid URL"})
    if not record["xml"]:
        errors.append({"source": "xml", "title": "Can't be blank"})
    if errors:
        raise StandinError(422, *errors)


def _document(record: dict[str, Any]) -> dict[str, Any]:
    prefix, _, suffix = record["doi"].partition("/")
    xml = base64.b64encode(record["xml"]).decode() if record["xml"] else None
    attributes = {
        "doi": record["doi"],
        "prefix": prefix,
        "suffix": suffix,
        "state": record["state"],
        "url": record["url"],
        "xml": xml,
        "created": record["created"],
        "updated": record["updated"],
    }
    return {"data": {"id": record["doi"], "type": "dois", "attributes": attributes}}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as requests sessions expect

    def do_GET(self) -> None:
        self._serve("GET")

    def do_PUT(self) -> None:
        self._serve("PUT")

    def do_POST(self) -> None:
        self._serve("POST")

    def _serve(self, method: str) -> None:
        standin: DataCiteStandin = self.server.standin  # type: ignore[attr-defined]
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        standin.requests.append(
            {"method": method, "path": self.path, "headers": dict(self.headers.items()), "body": body}
        )
        if standin.delay:
            time.sleep(standin.delay)
        fault = standin.take_fault()
        if fault:
            status, headers, payload = fault
            self._send(status, payload, headers.get("Content-Type", JSONAPI), headers)
            return
        try:
            status, document = self._route(standin, method, body)
        except StandinError as exc:
            status, document = exc.status, {"errors": exc.errors}
        self._send(status, json.dumps(document).encode(), JSONAPI)

    def _route(self, standin: DataCiteStandin, method: str, body: bytes) -> tuple[int, dict[str, Any]]:
        if not self.path.startswith("/dois/"):
            raise StandinError(404, {"status": "404", "title": "The resource you are looking for doesn't exist."})
        doi = unquote(self.path[len("/dois/"):].partition("?")[0])
        authorized = standin.authorized(self.headers.get("Authorization"))
        if method == "GET":
            return 200, standin.get(doi, authorized)
        if method != "PUT":
            raise StandinError(405, {"status": "405", "title": "Method not allowed"})
        if not authorized:
            raise StandinError(401, {"status": "401", "title": "Bad credentials."})
        if (self.headers.get("Content-Type") or "").split(";")[0].strip() != JSONAPI:
            raise StandinError(415, {"status": "415", "title": "The content type is not recognized."})
        return standin.put(doi, body)

    def _send(self, status: int, payload: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            for name, value in (headers or {}).items():
                if name != "Content-Type":
                    self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean
