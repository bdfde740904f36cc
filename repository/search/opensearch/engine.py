"""The OpenSearch backend: the query tree written in the documented query DSL, aliases for zero-downtime swaps."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

import orjson
from opensearchpy import OpenSearch
from opensearchpy.exceptions import ConnectionError as OSConnectionError
from opensearchpy.exceptions import NotFoundError, RequestError, TransportError

from repository.errors import ServiceUnavailable
from repository.search.analysis import closest
from repository.search.backend import SUBTYPE, SUGGEST_FIELDS, TERMS_FACETS, SearchResult
from repository.search.documents import DOCUMENT_VERSION, add_member
from repository.search.mapping import (
    BEFORE_PAIRS,
    BEFORE_STEMMING,
    SOURCE_FIELD,
    load_template,
    template_digest,
)
from repository.search.params import SearchRequest
from repository.search.query import (
    Bool,
    Exists,
    GeoBox,
    MatchAll,
    MatchNone,
    Node,
    Range,
    Regex,
    Term,
    Terms,
    Text,
    Wildcard,
    invalid,
)


def _value(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


def to_dsl(node: Node) -> dict[str, Any]:
    """One query tree node as an OpenSearch query clause."""
    if isinstance(node, MatchAll):
        return {"match_all": {}}
    if isinstance(node, MatchNone):
        return {"match_none": {}}
    if isinstance(node, Term):
        return {"term": {node.field: {"value": node.value}}}
    if isinstance(node, Terms):
        return {"terms": {node.field: list(node.values)}}
    if isinstance(node, Text):
        return {"match_phrase": {node.field: {"query": node.text}}}
    if isinstance(node, Wildcard):
        return {"wildcard": {node.field: {"value": node.pattern}}}
    if isinstance(node, Regex):
        return {"regexp": {node.field: {"value": node.pattern}}}
    if isinstance(node, Range):
        bounds = {k: _value(getattr(node, k)) for k in ("gte", "gt", "lte", "lt") if getattr(node, k) is not None}
        if any(isinstance(getattr(node, k), datetime) for k in ("gte", "gt", "lte", "lt")):
            bounds["format"] = "strict_date_optional_time"
        return {"range": {node.field: bounds}}
    if isinstance(node, Exists):
        return {"exists": {"field": node.field}}
    if isinstance(node, GeoBox):
        return {"geo_bounding_box": {node.field: {"top_left": {"lat": node.max_lat, "lon": node.min_lon},
                                                  "bottom_right": {"lat": node.min_lat, "lon": node.max_lon}}}}
    clauses = {name: [to_dsl(n) for n in getattr(node, name)] for name in ("must", "filter", "should", "must_not")}
    body = {name: items for name, items in clauses.items() if items}
    if not body.get("must") and not body.get("filter") and not body.get("should"):
        body["must"] = [{"match_all": {}}]  # same meaning the embedded engine gives a purely negative query
    return {"bool": body}


def aggregations_body(facets: Iterable[str]) -> dict[str, Any]:
    """The `aggs` of the reference's facets (terms size 10, nested subtype size 20, yearly histogram)."""
    aggs: dict[str, Any] = {}
    for name in facets:
        if name == "publication_date":
            # "year" rather than "1y": the server takes both, but OpenSearch's API specification lists "1Y" (an
            # error: the server refuses it), so only "year" is valid for both (tests/search/test_opensearch_wire.py).
            aggs[name] = {"date_histogram": {"field": "publication_date", "calendar_interval": "year",
                                             "format": "yyyy", "min_doc_count": 1}}
            continue
        field, size = TERMS_FACETS[name]
        aggs[name] = {"terms": {"field": field, "size": size}}
        if name == "type":
            aggs[name]["aggs"] = {"subtype": {"terms": {"field": SUBTYPE[0], "size": SUBTYPE[1]}}}
    return aggs


def sort_body(req: SearchRequest) -> list[dict[str, Any]]:
    """Score with recid breaking ties, or the precomputed `sort_<option>` key (unique: it ends with recid)."""
    order = "desc" if req.descending else "asc"
    if req.sort == "bestmatch":
        return [{"_score": {"order": order}}, {"recid": {"order": "asc" if req.descending else "desc"}}]
    return [{f"sort_{req.sort}": {"order": order}}]


def search_body(req: SearchRequest) -> dict[str, Any]:
    """The request body of one search: query + filters, post_filter, aggs, sort, page or search_after."""
    query = Bool(must=(req.query,), filter=req.filters) if req.filters else req.query
    body: dict[str, Any] = {
        "query": to_dsl(query), "sort": sort_body(req), "size": req.size, "track_total_hits": True,
        "_source": [SOURCE_FIELD],
    }
    if req.post_filters:
        body["post_filter"] = to_dsl(Bool(filter=req.post_filters))
    aggs = aggregations_body(req.facets)
    if aggs:
        body["aggs"] = aggs
    if req.after is not None:
        body["search_after"] = list(req.after)
    else:
        body["from"] = req.offset
    return body


def parse_response(response: dict[str, Any], req: SearchRequest) -> SearchResult:
    """An OpenSearch response -> SearchResult (records from `_source.record`, the next cursor from `sort`)."""
    found = response["hits"]["hits"]
    total = response["hits"]["total"]
    total = total["value"] if isinstance(total, dict) else int(total)
    position = req.offset + len(found)
    cursor = req.cursor_for(found[-1]["sort"], position) if found and position < total else None
    return SearchResult(hits=[h["_source"][SOURCE_FIELD] for h in found], total=total,
                        aggregations=response.get("aggregations") or {}, next_cursor=cursor)


def suggest_body(words: list[str]) -> dict[str, Any]:
    """A term suggester per field of SUGGEST_FIELDS over `words` (no hits, no count)."""
    # The text once for all suggesters: OpenSearch's API specification allows a named suggester one property only.
    suggesters: dict[str, Any] = {"text": " ".join(words)}
    for n, field in enumerate(SUGGEST_FIELDS):
        suggesters[f"s{n}"] = {"term": {"field": field, "suggest_mode": "missing", "sort": "score", "max_edits": 2,
                                        "prefix_length": 1, "min_word_length": 3}}
    return {"size": 0, "track_total_hits": False, "suggest": suggesters}


def chosen_suggestions(words: list[str], suggest: dict[str, Any]) -> list[str]:
    """The words with each one the suggesters answered options for replaced by the nearest option (fewest edits,
    then most documents). "missing" mode answers none for a word its field holds; a word held by one field only
    may still be replaced by another field's option, which the page asks only when nothing matched (a held word
    would have matched)."""
    out = []
    for position, word in enumerate(words):
        options = [(o["text"], int(o.get("freq", 0))) for found in suggest.values() if position < len(found)
                   for o in found[position].get("options", [])]
        out.append(closest(word, options) or word)
    return out


# How long deletes are remembered in an index being loaded: longer than any load (a million records take minutes).
GC_DELETES_WHILE_BUILDING = "12h"
GC_DELETES_LIVE = "60s"  # OpenSearch's default


def bulk_body(index: str, docs: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Bulk index actions: id = recid, external version = revision, so an older revision never wins."""
    actions: list[dict[str, Any]] = []
    for doc in docs:
        actions.append({"index": {"_index": index, "_id": str(doc["recid"]), "version": int(doc.get("revision", 0)),
                                  "version_type": "external_gte"}})
        actions.append(doc)
    return actions


def bulk_lines(index: str, documents: Iterable[tuple[int, int, bytes]]) -> bytes:
    """The NDJSON `_bulk` body indexing engine-ready documents (recid, revision, document line), as `bulk_body`."""
    out = bytearray()
    for recid, revision, document in documents:
        out += orjson.dumps({"index": {"_index": index, "_id": str(recid), "version": int(revision),
                                       "version_type": "external_gte"}})
        out += b"\n" + document + b"\n"
    return bytes(out)


def delete_action(index: str, recid: int, revision: int | None) -> dict[str, Any]:
    """The bulk delete of a record: versioned above `revision` when it is known."""
    action: dict[str, Any] = {"_index": index, "_id": str(recid)}
    if revision is not None:
        action.update(version=int(revision) + 1, version_type="external_gte")
    return {"delete": action}


def bulk_errors(response: dict[str, Any]) -> list[dict[str, Any]]:
    """Failed bulk items, except version conflicts (stale revisions) and deletes of absent documents."""
    failed = []
    for item in response.get("items", []):
        (op, result), = item.items()
        status = result.get("status", 200)
        if status >= 300 and status != 409 and not (op == "delete" and status == 404):
            failed.append(result)
    return failed


class OpenSearchBackend:
    """Reads go to alias `<prefix>`, writes to it and to `<prefix>_next` while a rebuild runs."""

    def __init__(self, url: str, prefix: str = "records", client: OpenSearch | None = None,
                 timeout: float = 10.0, replicas: int = 0, **client_options: Any) -> None:
        self.prefix, self.next_alias = prefix, f"{prefix}_next"
        self.replicas = replicas
        # The engine-ready form of `engine_document` (stored in built_records, so a change means a rebuild).
        self.engine = f"opensearch-{DOCUMENT_VERSION}-{template_digest()}"
        # The template's stemming analyzers and its word pairs (`index_phrases`) changed the mapping but not the
        # documents (the server indexes each text value again for each): documents stored before them load as they are.
        self.upgrades: dict[str, Callable[[bytes], bytes]] = {
            f"opensearch-{DOCUMENT_VERSION}-{before}": lambda document: document
            for before in (BEFORE_STEMMING, BEFORE_PAIRS)}
        self.client = client or OpenSearch(hosts=[url], timeout=timeout, **client_options)
        self._ready = False

    # --- set-up ----------------------------------------------------------------------------------
    def template(self) -> dict[str, Any]:
        """The shipped template with index_patterns following the prefix."""
        template = copy.deepcopy(load_template())
        template["index_patterns"] = [f"{self.prefix}-*"]
        # A deployment's choice, not part of the mapping: the engine's form (template_digest) does not change.
        template["template"]["settings"]["number_of_replicas"] = self.replicas
        return template

    def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except OSConnectionError as exc:
            raise ServiceUnavailable("The search engine is unavailable.") from exc
        except RequestError as exc:
            raise invalid(f"The search engine rejected the query: {exc.error}.") from exc
        except NotFoundError:
            raise
        except TransportError as exc:
            raise ServiceUnavailable(f"The search engine failed: {exc.error}.") from exc

    def _ensure(self) -> None:
        """Install the template and a first index behind the alias (once per process)."""
        if self._ready:
            return
        self._call(self.client.indices.put_index_template, name=self.prefix, body=self.template())
        if not self._call(self.client.indices.exists_alias, name=self.prefix):
            name = self._new_name()
            self._call(self.client.indices.create, index=name, body={"aliases": {self.prefix: {}}})
        self._ready = True

    def _new_name(self) -> str:
        return f"{self.prefix}-{datetime.now(UTC):%Y%m%dt%H%M%S%f}"

    def _aliased(self, alias: str) -> list[str]:
        try:
            return sorted(self._call(self.client.indices.get_alias, name=alias))
        except NotFoundError:
            return []

    def _bulk(self, actions: list[dict[str, Any]] | bytes, refresh: Any = "wait_for") -> None:
        if not actions:
            return
        response = self._call(self.client.bulk, body=actions, refresh=refresh)
        failed = bulk_errors(response)
        if failed:
            raise ServiceUnavailable(f"Indexing failed for {len(failed)} documents: {failed[0]}")

    # --- the protocol ----------------------------------------------------------------------------
    def index(self, docs: list[dict[str, Any]]) -> None:
        """Upsert into the live alias and any index being built; refresh=wait_for makes them visible."""
        self._ensure()
        for target in [self.prefix, *self._aliased(self.next_alias)]:
            self._bulk(bulk_body(target, docs))

    def index_documents(self, entries: list[tuple[int, int, bytes]]) -> None:
        """As `index`, for engine-ready documents (recid, revision, engine_document) of distinct records."""
        self._ensure()
        for target in [self.prefix, *self._aliased(self.next_alias)]:
            self._bulk(bulk_lines(target, entries))

    def delete(self, recids: Iterable[int], revisions: Mapping[int, int] | None = None) -> None:
        """Delete by recid from the live alias and any index being built. With a record's revision the delete is
        versioned (revision + 1, external): its tombstone refuses every older document of the record, such as the
        one a rebuild read before the removal and loads after it (kept for GC_DELETES_WHILE_BUILDING there)."""
        self._ensure()
        ids, known = list(recids), revisions or {}
        for target in [self.prefix, *self._aliased(self.next_alias)]:
            self._bulk([delete_action(target, r, known.get(r)) for r in ids])

    def search(self, req: SearchRequest) -> SearchResult:
        """One page with the exact total, aggregations and the next cursor; 503 when unreachable."""
        self._ensure()
        try:
            # request_cache: OpenSearch caches only size=0 requests unless asked; with it, each shard keeps this
            # answer until a refresh changes that shard (never stale), the role the result cache plays embedded.
            response = self._call(self.client.search, index=self.prefix, body=search_body(req), request_cache=True)
        except NotFoundError as exc:
            raise ServiceUnavailable("The search index is missing; run scripts/reindex.py.") from exc
        return parse_response(response, req)

    def suggest(self, words: list[str]) -> list[str]:
        """Each word no title or description holds -> OpenSearch's term suggestion from those fields (the one of
        most documents among the nearest, as the embedded engine chooses)."""
        self._ensure()
        if not words:
            return []
        response = self._call(self.client.search, index=self.prefix, body=suggest_body(words))
        return chosen_suggestions(words, response.get("suggest") or {})

    def get_revisions(self) -> dict[int, int]:
        """recid -> revision of every live document, read with search_after over recid."""
        self._ensure()
        revisions: dict[int, int] = {}
        body: dict[str, Any] = {"size": 1000, "sort": [{"recid": "asc"}], "_source": ["recid", "revision"],
                                "query": {"match_all": {}}}
        while True:
            found = self._call(self.client.search, index=self.prefix, body=body)["hits"]["hits"]
            for hit in found:
                revisions[int(hit["_source"]["recid"])] = int(hit["_source"].get("revision", 0))
            if len(found) < body["size"]:
                return revisions
            body["search_after"] = found[-1]["sort"]

    def create_new_index(self) -> str:
        """A new concrete index under the `_next` alias (only one rebuild at a time)."""
        self._ensure()
        for stale in self._aliased(self.next_alias):
            self._call(self.client.indices.delete, index=stale)
        name = self._new_name()
        # Deletes made while the index is loaded must outlive the load: their tombstones refuse the older
        # documents the load may still write (OpenSearch forgets them after index.gc_deletes, 60 s by default).
        # Every copy of its shards started before the load begins (SEARCH_REPLICAS): a node that leaves mid-load
        # then leaves a copy behind, where a primary created moments before on that node would take the load down.
        self._call(self.client.indices.create, index=name, wait_for_active_shards="all", body={
            "aliases": {self.next_alias: {}}, "settings": {"index": {"gc_deletes": GC_DELETES_WHILE_BUILDING}}})
        return name

    def building(self) -> bool:
        """True while an index is aliased as `_next` (a rebuild or bulk load not yet swapped in)."""
        return bool(self._aliased(self.next_alias))

    def bulk_load(self, docs: Iterable[dict[str, Any]], batch_size: int = 500) -> int:
        """Bulk load into the index being built (refreshed once at the end)."""
        entries = ((int(d["recid"]), int(d.get("revision", 0)), self.engine_document(d)) for d in docs)
        return self.load_documents(entries, batch_size)

    def engine_document(self, doc: dict[str, Any]) -> bytes:
        """The index document as the `_bulk` body line that indexes it."""
        return orjson.dumps(doc)

    def with_source(self, document: bytes, record: bytes) -> bytes:
        return add_member(document, b'"%s":%s' % (SOURCE_FIELD.encode(), record))

    def load_documents(self, documents: Iterable[tuple[int, int, bytes]], batch_size: int = 2000) -> int:
        """Bulk load engine-ready documents into the index being built, as NDJSON written with no serialization
        per document (refreshed once at the end)."""
        targets = self._aliased(self.next_alias)
        if not targets:
            raise RuntimeError("create_new_index() first")
        loaded, batch = 0, []
        for entry in documents:
            batch.append(entry)
            if len(batch) >= batch_size:
                self._bulk(bulk_lines(targets[0], batch), refresh=False)
                loaded, batch = loaded + len(batch), []
        if batch:
            self._bulk(bulk_lines(targets[0], batch), refresh=False)
        self._call(self.client.indices.refresh, index=targets[0])
        return loaded + len(batch)

    def swap(self) -> None:
        """Move the read alias to the new index in one atomic alias update, then delete the old indices."""
        new = self._aliased(self.next_alias)
        if not new:
            raise RuntimeError("create_new_index() first")
        old = self._aliased(self.prefix)
        actions = [{"remove": {"index": name, "alias": self.prefix}} for name in old]
        actions += [{"add": {"index": new[0], "alias": self.prefix}},
                    {"remove": {"index": new[0], "alias": self.next_alias}}]
        self._call(self.client.indices.update_aliases, body={"actions": actions})
        # Live now: back to OpenSearch's default (the specification has no null to reset a setting with).
        self._call(self.client.indices.put_settings, index=new[0], body={"index": {"gc_deletes": GC_DELETES_LIVE}})
        for name in old:
            if name != new[0]:
                self._call(self.client.indices.delete, index=name)

    def ping(self) -> bool:
        """True when the cluster answers."""
        try:
            return bool(self.client.ping())
        except Exception:  # ping must answer, never raise
            return False
