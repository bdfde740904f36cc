"""An HTTP listener on 127.0.0.1 speaking OpenSearch's REST protocol to the real `opensearch-py` client: every
request is checked against OpenSearch's API specification (`opensearch_spec`), and every answer is built in the
shape the specification gives the operation's response (and checked against it before it is sent).

It keeps what the protocol needs to answer consistently (templates, indices, aliases) and nothing more: it does
not search. A search answers the hits a test queued with `answer_hits`, or none.

With `upstream` (a real node's URL) it is a checking proxy instead: every request is checked as above and then
sent to the node, and the node's real answer is checked against the specification's response shape and passed
back. The contract suite and the wire tests run through it against the node the tests start
(tests/helpers/opensearch_node.py), so a real engine answers and the specification still sees every request.
"""

from __future__ import annotations

import fnmatch
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import jsonschema
import orjson
import urllib3
from helpers.http import free_port

from .opensearch_spec import Check, Spec, document_schema, spec

Answer = tuple[int, Any]


class Listener:
    """The stand-in cluster: `url` to point a backend at, `checks` of every request, `problems` found."""

    def __init__(self, checker: Spec | None = None, upstream: str | None = None) -> None:
        self.spec = checker or spec()
        self.upstream = upstream.rstrip("/") if upstream else None
        self._shapes: dict[tuple[str, int, bytes], list[str]] = {}
        self._pool = urllib3.PoolManager(maxsize=8, retries=False, timeout=urllib3.Timeout(connect=5, read=120))
        self.checks: list[Check] = []
        self.answer_problems: list[str] = []
        self.templates: dict[str, dict[str, Any]] = {}
        self.aliases: dict[str, set[str]] = {}  # index -> its aliases
        self.versions: dict[tuple[str, str], int] = {}  # (index, id) -> version, for bulk answers
        self.hits: deque[tuple[list[dict[str, Any]], int | None]] = deque()
        self.failures: deque[Answer] = deque()
        self._validators: dict[str, Any] = {}
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), _Handler)
        self.server.daemon_threads = True
        self.server.listener = self  # type: ignore[attr-defined]
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    # --- what tests read and set ---------------------------------------------------------------------
    @property
    def problems(self) -> list[str]:
        """Every problem of every request so far (and of the listener's own answers), one line each."""
        return [f"{c.method} {c.target}: {p}" for c in self.checks for p in c.problems] + self.answer_problems

    def answer_hits(self, *pages: list[dict[str, Any]], total: int | None = None) -> None:
        """Queue the `_source` + `sort` of the hits the next searches answer, one list per search, and the total
        they claim (default: as many as answered)."""
        self.hits.extend((page, total) for page in pages)

    def fail_next(self, status: int, body: Any) -> None:
        """Answer the next (valid) request with `status` and `body` instead, as a failing cluster would."""
        self.failures.append((status, body))

    # --- the protocol --------------------------------------------------------------------------------
    def handle(self, method: str, target: str, body: bytes, content_type: str) -> Answer:
        with self._lock:
            check = self.spec.check(method, target, body, content_type, documents=self.documents)
            op = check.operation
            self.checks.append(check)
            if op is None:
                return 400, _error("illegal_argument_exception", "; ".join(check.problems), 400)
            if check.problems:
                return 400, _error("x_content_parse_exception", "; ".join(check.problems)[:2000], 400)
            if self.failures:
                return self.failures.popleft()
            if self.upstream:
                status, answer = self.forward(op.spec["x-operation-group"], method, target, body, content_type)
            else:
                status, answer = self.dispatch(op.spec["x-operation-group"], target, body)
            if method != "HEAD":
                self.answer_problems += [f"answer to {method} {target}: {p}"
                                         for p in self.check_answer(op, status, answer)]
            return status, answer

    def check_answer(self, op: Any, status: int, answer: Any) -> list[str]:
        """The problems of an answer's shape. A real node's answers are cut to one element per list (a page's
        hits, a facet's buckets: every element has the same schema) and checked once per distinct shape: the
        specification's aggregation schemas are unions, and checking each bucket of each facet took seconds."""
        if not self.upstream:
            return self.spec.check_response(op, status, _sample(answer))
        reduced = _first_of_lists(answer)
        key = (op.id, status, orjson.dumps(_skeleton(reduced), option=orjson.OPT_SORT_KEYS))
        if key not in self._shapes:
            self._shapes[key] = self.spec.check_response(op, status, reduced)
        return self._shapes[key]

    def forward(self, group: str, method: str, target: str, body: bytes, content_type: str) -> Answer:
        """The real node's answer to a request that passed the checks. The listener's own bookkeeping (templates
        and aliases: what the document checks need) follows the request when it succeeded."""
        response = self._pool.request(method, self.upstream + target, body=body or None,
                                      headers={"Content-Type": content_type or "application/json"})
        answer = orjson.loads(response.data) if response.data.strip() else None
        if response.status < 300 and group in _BOOKKEPT:
            self.dispatch(group, target, body)
        return response.status, answer

    def documents(self, name: str) -> Any:
        """The document validator of the index (or alias) `name`: from the template whose pattern it matches."""
        indices = self.resolve(name)
        if len(indices) != 1:
            return None
        for template in self.templates.values():
            if any(fnmatch.fnmatchcase(indices[0], p) for p in template.get("index_patterns", [])):
                mappings = template["template"]["mappings"]
                key = orjson.dumps(mappings, option=orjson.OPT_SORT_KEYS).decode()
                if key not in self._validators:
                    self._validators[key] = jsonschema.Draft202012Validator(
                        document_schema(mappings["properties"], strict=mappings.get("dynamic") == "strict"))
                return self._validators[key]
        return None

    def resolve(self, name: str) -> list[str]:
        """Concrete indices named by an index name, an alias, or a pattern."""
        return sorted(i for i, aliases in self.aliases.items()
                      if fnmatch.fnmatchcase(i, name) or name in aliases)

    def dispatch(self, group: str, target: str, body: bytes) -> Answer:
        parts = urlsplit(target)
        segments = [unquote(s) for s in parts.path.strip("/").split("/")]
        data: Any = orjson.loads(body) if body.strip() and group != "bulk" else None
        ack = {"acknowledged": True}
        if group == "ping":
            return 200, None
        if group == "indices.put_index_template":
            self.templates[segments[1]] = data
            return 200, ack
        if group == "indices.delete_index_template":
            return (200, ack) if self.templates.pop(segments[1], None) else (404, _error(
                "index_template_missing_exception", f"index_template [{segments[1]}] missing", 404))
        if group == "indices.exists_alias":
            return (200 if any(segments[1] in a for a in self.aliases.values()) else 404), None
        if group == "indices.get_alias":
            found: dict[str, Any] = {i: {"aliases": {segments[1]: {}}} for i, a in self.aliases.items()
                                     if segments[1] in a}
            return (200, found) if found else (404, {"error": f"alias [{segments[1]}] missing", "status": 404})
        if group == "indices.create":
            if segments[0] in self.aliases:
                return 400, _error("resource_already_exists_exception", f"index [{segments[0]}] already exists", 400)
            self.aliases[segments[0]] = set((data or {}).get("aliases", {}))
            return 200, {**ack, "shards_acknowledged": True, "index": segments[0]}
        if group == "indices.delete":
            names = [i for pattern in segments[0].split(",") for i in self.resolve(pattern)]
            if not names and "*" not in segments[0]:
                return 404, _error("index_not_found_exception", f"no such index [{segments[0]}]", 404)
            for name in names:
                self.aliases.pop(name, None)
            return 200, ack
        if group == "indices.put_settings":
            return 200, ack
        if group == "indices.refresh":
            return 200, {"_shards": {"total": 1, "successful": 1, "failed": 0}}
        if group == "indices.update_aliases":
            for action in data["actions"]:
                (kind, spec_), = action.items()
                if kind == "add":
                    self.aliases[spec_["index"]].add(spec_["alias"])
                elif kind == "remove":
                    self.aliases[spec_["index"]].discard(spec_["alias"])
            return 200, ack
        if group == "bulk":
            return 200, self.bulk(body)
        if group == "search":
            return self.search(segments[0], data or {})
        raise AssertionError(f"the listener does not answer {group} yet")

    def bulk(self, body: bytes) -> dict[str, Any]:
        lines = [orjson.loads(line) for line in body.splitlines() if line.strip()]
        items, i = [], 0
        while i < len(lines):
            (kind, meta), = lines[i].items()
            i += 1 if kind == "delete" else 2
            index = self.resolve(meta["_index"])[0]
            key = (index, meta["_id"])
            result = {"_index": index, "_id": meta["_id"], "_shards": {"total": 1, "successful": 1, "failed": 0},
                      "_seq_no": len(self.versions), "_primary_term": 1}
            if kind == "delete":
                found = self.versions.pop(key, None) is not None
                items.append({kind: {**result, "_version": 1, "result": "deleted" if found else "not_found",
                                     "status": 200 if found else 404}})
            else:
                version = int(meta.get("version", self.versions.get(key, 0) + 1))
                created = key not in self.versions
                self.versions[key] = version
                items.append({kind: {**result, "_version": version, "result": "created" if created else "updated",
                                     "status": 201 if created else 200}})
        return {"took": 1, "errors": False, "items": items}

    def search(self, index: str, body: dict[str, Any]) -> Answer:
        names = self.resolve(index)
        if not names:
            return 404, _error("index_not_found_exception", f"no such index [{index}]", 404)
        page, total = self.hits.popleft() if self.hits else ([], None)
        hits = [{"_index": names[0] if names else index, "_id": str(n), "_score": None, **hit}
                for n, hit in enumerate(page)]
        answer: dict[str, Any] = {
            "took": 1, "timed_out": False, "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
            "hits": {"total": {"value": len(hits) if total is None else total, "relation": "eq"}, "max_score": None, "hits": hits}}
        aggs = body.get("aggs") or body.get("aggregations") or {}
        if aggs:
            answer["aggregations"] = {name: _empty_aggregate(agg) for name, agg in aggs.items()}
        return 200, answer

    # --- serving -------------------------------------------------------------------------------------
    @contextmanager
    def running(self) -> Iterator[Listener]:
        thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.server.shutdown()
            self.server.server_close()
            thread.join()


# The operations whose effect the listener keeps (the rest it only answers offline).
_BOOKKEPT = frozenset({"indices.put_index_template", "indices.delete_index_template", "indices.create",
                       "indices.delete", "indices.update_aliases"})


def _sample(answer: Any) -> Any:
    """The answer with at most 20 hits or bulk items: the rest have the same shape (a page of 1000 took seconds)."""
    if isinstance(answer, dict) and isinstance(answer.get("hits"), dict):
        return {**answer, "hits": {**answer["hits"], "hits": answer["hits"]["hits"][:20]}}
    if isinstance(answer, dict) and isinstance(answer.get("items"), list):
        return {**answer, "items": answer["items"][:20]}
    return answer


def _first_of_lists(value: Any) -> Any:
    """`value` with every list cut to its first element, at every depth."""
    if isinstance(value, dict):
        return {k: _first_of_lists(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_first_of_lists(v) for v in value[:1]]
    return value


def _skeleton(value: Any) -> Any:
    """The shape of a value: its keys and the types of its leaves (what decides which schema branch it meets)."""
    if isinstance(value, dict):
        return {k: _skeleton(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_skeleton(v) for v in value]
    return type(value).__name__


def _empty_aggregate(agg: dict[str, Any]) -> dict[str, Any]:
    """The answer of a bucket aggregation over no documents, in the shape OpenSearch gives each kind."""
    if "terms" in agg:
        return {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": []}
    return {"buckets": []}


def _error(kind: str, reason: str, status: int) -> dict[str, Any]:
    cause = {"type": kind, "reason": reason}
    return {"error": {"root_cause": [cause], **cause}, "status": status}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are two writes: without it each answer waited 40 ms

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        listener: Listener = self.server.listener  # type: ignore[attr-defined]
        try:
            status, answer = listener.handle(self.command, self.path, body, self.headers.get("Content-Type", ""))
        except Exception as exc:  # a listener bug must show in the test, not hang the client
            listener.answer_problems.append(f"listener failed on {self.command} {self.path}: {exc!r}")
            status, answer = 500, _error("listener_exception", repr(exc), 500)
        data = b"" if answer is None or self.command == "HEAD" else orjson.dumps(answer)
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _serve

    def log_message(self, format: str, *args: Any) -> None:  # the checks are the log
        pass


def query_of(check: Check) -> dict[str, str]:
    """The query parameters of a checked request."""
    return dict(parse_qsl(urlsplit(check.target).query))
