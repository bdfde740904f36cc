"""The embedded search engine: tantivy index directories under one root, schema derived from the template."""

from __future__ import annotations

import fcntl
import os
import shutil
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import tantivy

from repository.errors import ApiError, ServiceUnavailable
from repository.search import query as ast
from repository.search.backend import SUBTYPE, TERMS_FACETS, SearchResult, terms_aggregation, year_bucket
from repository.search.mapping import SOURCE_FIELD, fields
from repository.search.params import SearchRequest, combined
from repository.search.tantivy_query import Translator, build_schema, to_tantivy

CURRENT, NEXT, LOCK = "CURRENT", "NEXT", "writer.lock"


class EmbeddedBackend:
    """Index directories `records-<stamp>` under `root`; `CURRENT` names the live one, `NEXT` one being built."""

    def __init__(self, root: Path, heap_size: int = 50_000_000, lock_timeout: float = 30.0) -> None:
        self.root, self.heap_size, self.lock_timeout = Path(root), heap_size, lock_timeout
        self.fields = fields()
        self.schema = build_schema(self.fields)
        self._mutex = threading.Lock()  # guards the cache of open indexes only: reads never wait for writes
        self._write_mutex = threading.RLock()
        self._open: dict[str, tuple[tantivy.Index, tuple[int, int, int]]] = {}
        self.root.mkdir(parents=True, exist_ok=True)
        if not (self.root / CURRENT).exists():
            with self._writing():
                if not (self.root / CURRENT).exists():
                    self._write_pointer(CURRENT, self._create())

    # --- directories and pointers --------------------------------------------------------------
    def _create(self) -> str:
        name = f"records-{datetime.now(UTC):%Y%m%dT%H%M%S%f}"
        (self.root / name).mkdir()
        tantivy.Index(self.schema, path=str(self.root / name))
        return name

    def _write_pointer(self, pointer: str, name: str) -> None:
        tmp = self.root / f".{pointer}.{os.getpid()}.tmp"
        tmp.write_text(name, encoding="utf-8")
        os.replace(tmp, self.root / pointer)  # atomic: readers see the old or the new name, never half

    def _pointer(self, pointer: str) -> str | None:
        try:
            return (self.root / pointer).read_text(encoding="utf-8").strip() or None
        except FileNotFoundError:
            return None

    def _index(self, name: str) -> tantivy.Index:
        """The open index `name`, reloaded when its meta.json changed (a commit by any process)."""
        meta = (self.root / name / "meta.json").stat()
        signature = (meta.st_mtime_ns, meta.st_ino, meta.st_size)
        with self._mutex:
            cached = self._open.get(name)
            if cached is None:
                index = tantivy.Index.open(str(self.root / name))
                self._open[name] = (index, signature)
                return index
            index, seen = cached
            if seen != signature:
                index.reload()
                self._open[name] = (index, signature)
            return index

    def _live(self) -> tantivy.Index:
        try:
            name = self._pointer(CURRENT)
            if name is None:
                raise FileNotFoundError(self.root / CURRENT)
            return self._index(name)
        except (OSError, ValueError) as exc:
            raise ServiceUnavailable("The search engine is unavailable.") from exc

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """One writer at a time across threads and processes (tantivy allows one IndexWriter per index)."""
        with self._write_mutex, open(self.root / LOCK, "a+b") as handle:
            deadline = time.monotonic() + self.lock_timeout
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise ServiceUnavailable("The search index is busy; try again.") from None
                    time.sleep(0.01)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _targets(self) -> list[str]:
        return [n for n in (self._pointer(CURRENT), self._pointer(NEXT)) if n]

    # --- writes ----------------------------------------------------------------------------------
    def _write(self, name: str, docs: list[dict[str, Any]], deletes: Iterable[int] = ()) -> None:
        index = self._index(name)
        index.reload()
        searcher = index.searcher()
        recids = [d["recid"] for d in docs]
        indexed: dict[int, int] = {}
        if recids:
            found = searcher.search(tantivy.Query.term_set_query(index.schema, "recid", recids), len(recids)).hits
            addresses = [a for _, a in found]
            indexed = dict(zip(searcher.fast_field_values("recid", addresses),
                               searcher.fast_field_values("revision", addresses), strict=True))
        writer = index.writer(heap_size=self.heap_size, num_threads=1)
        try:
            for recid in deletes:
                writer.delete_documents_by_term("recid", int(recid))
            for doc in docs:
                if indexed.get(doc["recid"], -1) > doc.get("revision", 0):
                    continue  # a late retry of an older revision must not undo a newer one
                if doc["recid"] in indexed:
                    writer.delete_documents_by_term("recid", doc["recid"])
                writer.add_document(to_tantivy(doc, self.fields))
            writer.commit()
        except BaseException:
            writer.rollback()
            raise
        finally:
            writer.wait_merging_threads()
        index.reload()

    def index(self, docs: list[dict[str, Any]]) -> None:
        """Upsert by recid into the live index (and the one being built); searchable on return."""
        latest = {d["recid"]: d for d in docs}  # the same record twice in one batch: keep the last
        with self._writing():
            for name in self._targets():
                self._write(name, list(latest.values()))

    def delete(self, recids: Iterable[int]) -> None:
        """Remove records by id from the live index (and the one being built)."""
        ids = list(recids)
        with self._writing():
            for name in self._targets():
                self._write(name, [], ids)

    def create_new_index(self) -> str:
        """An empty index that receives every write until `swap` makes it live."""
        with self._writing():
            name = self._create()
            self._write_pointer(NEXT, name)
        return name

    def bulk_load(self, docs: Iterable[dict[str, Any]], batch_size: int = 500) -> int:
        """Load into the index being built, batch by batch so live writes are never blocked for long."""
        loaded, batch = 0, []
        for doc in docs:
            batch.append(doc)
            if len(batch) >= batch_size:
                loaded += self._load_batch(batch)
                batch = []
        if batch:
            loaded += self._load_batch(batch)
        return loaded

    def _load_batch(self, batch: list[dict[str, Any]]) -> int:
        with self._writing():
            name = self._pointer(NEXT)
            if name is None:
                raise RuntimeError("create_new_index() first")
            self._write(name, batch)
        return len(batch)

    def swap(self) -> None:
        """Point CURRENT at the new index; keep the previous directory for readers still on it."""
        with self._writing():
            name = self._pointer(NEXT)
            if name is None:
                raise RuntimeError("create_new_index() first")
            previous = self._pointer(CURRENT)
            self._write_pointer(CURRENT, name)
            (self.root / NEXT).unlink()
            for old in self.root.glob("records-*"):
                if old.name not in (name, previous):
                    shutil.rmtree(old, ignore_errors=True)
                    with self._mutex:
                        self._open.pop(old.name, None)

    # --- reads -----------------------------------------------------------------------------------
    def ping(self) -> bool:
        """True when the live index opens and answers."""
        try:
            self._live().searcher().num_docs  # noqa: B018 - touching the searcher is the check
            return True
        except ApiError:
            return False

    def get_revisions(self) -> dict[int, int]:
        """recid -> revision for every document of the live index."""
        searcher = self._live().searcher()
        count = searcher.num_docs
        if not count:
            return {}
        addresses = [a for _, a in searcher.search(tantivy.Query.all_query(), count).hits]
        return dict(zip(searcher.fast_field_values("recid", addresses),
                        searcher.fast_field_values("revision", addresses), strict=True))

    def search(self, req: SearchRequest) -> SearchResult:
        """One page of hits with the exact total, aggregations and the next cursor."""
        index = self._live()
        searcher = index.searcher()
        try:
            translate = Translator(index.schema, searcher, self.fields)
            query = translate(combined(req))
            total = searcher.search(query, 1).count
            if req.sort == "bestmatch":
                page, after = self._by_score(searcher, query, req, total)
            else:
                page, after = self._by_key(index, searcher, query, req)
            hits = [orjson.loads(searcher.doc(a).get_first(SOURCE_FIELD)) for a in page]
            aggregations = self._aggregate(searcher, translate(combined(req, with_post_filters=False)), req)
        except ApiError:
            raise
        except (OSError, ValueError, RuntimeError) as exc:
            raise ServiceUnavailable("The search engine failed to answer.") from exc
        position = req.offset + len(hits)
        cursor = req.cursor_for(after, position) if hits and after is not None and position < total else None
        return SearchResult(hits=hits, total=total, aggregations=aggregations, next_cursor=cursor)

    def _by_score(self, searcher: tantivy.Searcher, query: tantivy.Query, req: SearchRequest,
                  total: int) -> tuple[list[Any], list[Any] | None]:
        """Score order with recid breaking ties, so pages and cursors never repeat or skip a hit.

        tantivy cuts ties arbitrarily, so fetch more than the page until the page's last score is strictly
        above the lowest fetched one: then nothing unfetched can belong before or inside the page.
        """
        if not total:
            return [], None
        limit = min(total, req.offset + req.size + 1) if req.descending else total
        while True:
            scored = searcher.search(query, limit).hits
            recids = searcher.fast_field_values("recid", [a for _, a in scored])
            keyed = sorted(((float(s), -r, a) for (s, a), r in zip(scored, recids, strict=True)),
                           key=lambda t: (t[0], t[1]), reverse=req.descending)
            if req.after is not None:
                mark = (float(req.after[0]), -int(req.after[1]))
                chosen = [t for t in keyed if ((t[0], t[1]) < mark if req.descending else (t[0], t[1]) > mark)]
                chosen = chosen[:req.size]
            else:
                chosen = keyed[req.offset:req.offset + req.size]
            lowest = min(float(s) for s, _ in scored)
            if limit >= total or (len(chosen) == req.size and chosen[-1][0] > lowest):
                break
            limit = min(total, limit * 2)
        last = [chosen[-1][0], -chosen[-1][1]] if chosen else None
        return [a for _, _, a in chosen], last

    def _by_key(self, index: tantivy.Index, searcher: tantivy.Searcher, query: tantivy.Query,
                req: SearchRequest) -> tuple[list[Any], list[Any] | None]:
        """Order by the precomputed `sort_<option>` key; a cursor becomes a range past its key."""
        key_field = f"sort_{req.sort}"
        offset = req.offset
        if req.after is not None:
            key = str(req.after[0])
            if not key or any(c not in "0123456789abcdef" for c in key):
                raise ast.invalid("Invalid cursor: use the links.next URL of a previous page.", "cursor")
            past = index.parse_query(f"{key_field}:{'<' if req.descending else '>'}{key}", [key_field])
            query = tantivy.Query.boolean_query([(tantivy.Occur.Must, query), (tantivy.Occur.Must, past)])
            offset = 0
        order = tantivy.Order.Desc if req.descending else tantivy.Order.Asc
        found = searcher.search(query, req.size, count=False, order_by_field=key_field, offset=offset,
                                order=order).hits
        return [a for _, a in found], ([found[-1][0]] if found else None)

    def _aggregate(self, searcher: tantivy.Searcher, query: tantivy.Query, req: SearchRequest) -> dict[str, Any]:
        """The requested facets in the OpenSearch response format, over the query without post-filters."""
        spec: dict[str, Any] = {}
        for name in req.facets:
            if name == "publication_date":
                spec[name] = {"histogram": {"field": "year", "interval": 1, "min_doc_count": 1}}
            else:
                # Ask the engine for the top buckets only (as OpenSearch does): asking for every term of a large
                # vocabulary (keywords) and sorting them here cost 4x the search itself on 100,000 records.
                field, size = TERMS_FACETS[name]
                spec[name] = {"terms": {"field": field, "size": size, "segment_size": size * 10}}
                if name == "type":
                    spec[name]["aggs"] = {"subtype": {"terms": {"field": SUBTYPE[0], "size": SUBTYPE[1],
                                                                "segment_size": SUBTYPE[1] * 10}}}
        if not spec:
            return {}
        raw = searcher.aggregate(query, spec) if searcher.num_docs else {}
        out: dict[str, Any] = {}
        for name in req.facets:
            buckets = (raw.get(name) or {}).get("buckets") or []
            if name == "publication_date":
                out[name] = {"buckets": [year_bucket(int(b["key"]), b["doc_count"]) for b in buckets
                                         if b["doc_count"]]}
                continue
            out[name] = terms_aggregation({b["key"]: b["doc_count"] for b in buckets}, TERMS_FACETS[name][1],
                                          raw[name].get("sum_other_doc_count", 0) if buckets else 0)
            if name == "type":
                subtypes = {b["key"]: b.get("subtype", {}) for b in buckets}
                for bucket in out[name]["buckets"]:
                    sub = subtypes[bucket["key"]]
                    bucket["subtype"] = terms_aggregation(
                        {s["key"]: s["doc_count"] for s in sub.get("buckets", [])}, SUBTYPE[1],
                        sub.get("sum_other_doc_count", 0))
        return out
