"""The embedded search engine: tantivy index directories under one root, schema derived from the template."""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import tantivy

from repository.errors import ApiError, ServiceUnavailable
from repository.search.analysis import closest
from repository.search.backend import SUGGEST_FIELDS, SearchResult
from repository.search.documents import DOCUMENT_VERSION
from repository.search.embedded import facets as facet_paths  # FEW read at each call (tests set it)
from repository.search.embedded.deep_pages import by_column, by_first_part
from repository.search.embedded.facet_delta import RECORD_SPEC, Proof, Values, record_values
from repository.search.embedded.facets import Candidates, aggregate
from repository.search.embedded.generation import kept
from repository.search.embedded.result_cache import ResultCache
from repository.search.embedded.tantivy_query import (
    DISTINCT,
    FORM,
    Translator,
    add_distinct,
    add_exact,
    add_json,
    build_schema,
    hit_count,
    int_column,
    pairs_scored,
    register_analyzers,
    stored_source,
    to_tantivy_json,
    with_source_json,
)
from repository.search.embedded.writer_lease import LOCK, WriterLease
from repository.search.mapping import BEFORE_PAIRS, BEFORE_STEMMING, fields, template_digest
from repository.search.params import SearchRequest, combined
from repository.search.query import Node, invalid

CURRENT, NEXT = "CURRENT", "NEXT"
# Inside an index being built: writes that arrive while `load_documents` owns it, applied by `swap`.
JOURNAL = "pending.journal"
# Inside each index: one line per commit, `<opstamp before> <opstamp after> <recid>,<recid>...`, the records whose
# documents the commit changed. Readers in every process bring their cached answers from one commit to the next
# with it (result_cache); a commit missing from it makes them drop everything instead. Cut to its newer half past
# CHANGES_MAX bytes.
CHANGES, CHANGES_MAX = "changes.log", 256 * 1024
Entry = tuple[int, int, bytes]  # recid, revision, engine-ready document (to_tantivy_json)
# The most frequent terms of a field with a word's first letter that "did you mean" compares the word with.
SUGGEST_TERMS = 2000

__all__ = ["CHANGES", "CURRENT", "LOCK", "NEXT", "EmbeddedBackend", "Snapshot"]


@dataclass(frozen=True, eq=False)
class Snapshot:
    """One committed state of one index: the searcher holds its segments, whatever is committed later."""

    name: str
    meta: bytes  # the content of meta.json that this searcher reflects
    opstamp: int
    searcher: tantivy.Searcher
    seq: int  # the order in which this process took its snapshots: a larger one is newer
    # Facet counts of the searches without words at this state (generation.py): computed once per commit.
    facets: dict[Any, Any] = field(default_factory=dict, repr=False)

    @property
    def key(self) -> tuple[str, bytes]:
        return self.name, self.meta


def _opstamp(meta: bytes) -> int:
    return int(json.loads(meta)["opstamp"])


class EmbeddedBackend:
    """Index directories `records-<stamp>` under `root`; `CURRENT` names the live one, `NEXT` one being built."""

    def __init__(self, root: Path, heap_size: int = 50_000_000, lock_timeout: float = 30.0,
                 cache_entries: int = 256, bulk_heap_size: int = 1_000_000_000, bulk_threads: int = 0,
                 linger: float = 1.0) -> None:
        self.root, self.heap_size, self.lock_timeout = Path(root), heap_size, lock_timeout
        self.bulk_heap_size, self.bulk_threads = bulk_heap_size, bulk_threads
        self.results: ResultCache[Snapshot] = ResultCache(cache_entries, self._touched, self._matches, self._matching,
                                                          self._facet_values)
        self.candidates = Candidates()  # of the facets (repository/search/embedded/facets.py)
        self._distinct: dict[str, bool] = {}  # index name -> whether it has the DISTINCT fields (has_distinct)
        self._pair_scores: dict[str, bool] = {}  # index name -> whether it records its pairs' frequencies
        self.fields = fields()
        self.schema = build_schema(self.fields)
        self._parser = register_analyzers(tantivy.Index(self.schema))  # in memory, empty: its query parser builds key ranges (Translator)
        # The engine-ready form of `engine_document` (stored in built_records, so a change means a rebuild).
        self.engine = f"tantivy-{DOCUMENT_VERSION}-{template_digest()}-{FORM}"
        # Documents stored before FORM d1 gain its fields from their own terms (tantivy_query.add_distinct), and
        # those stored before the stemming analyzers their text fields' companions (add_exact). The word pairs are
        # added as a document enters the index (tantivy_query.with_pairs): documents stored before them are current.
        old = f"tantivy-{DOCUMENT_VERSION}-{BEFORE_STEMMING}"
        self.upgrades: dict[str, Callable[[bytes], bytes]] = {
            old: lambda d: add_exact(add_distinct(d), self.fields), f"{old}-{FORM}": lambda d: add_exact(d, self.fields),
            f"tantivy-{DOCUMENT_VERSION}-{BEFORE_PAIRS}-{FORM}": lambda d: d}
        self._mutex = threading.Lock()  # guards the cache of open indexes only: reads never wait for writes
        self._lease = WriterLease(self.root, lock_timeout, linger)
        self._open: dict[str, tuple[tantivy.Index, Snapshot]] = {}
        self._seq = 0  # snapshots taken (under _mutex)
        self._probes: tuple[frozenset[int], dict[int, Any]] | None = None  # see _matches
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
        """The open index `name` (its searcher is only ever taken through `_snapshot`)."""
        return self._snapshot(name)[0]

    def _snapshot(self, name: str) -> tuple[tantivy.Index, Snapshot]:
        """The open index `name` and a searcher of its last commit (by any process), reloaded when meta.json changed.

        The content, not the file's times: two commits can land within one timestamp tick, and meta.json names every
        segment and the commit's opstamp, so equal content means the same committed state. The reader reloads only
        when asked (`Manual`), and a searcher is taken as belonging to a meta.json only when the file read the same
        before and after the reload: then the cache knows exactly which commit each answer was computed at."""
        meta = (self.root / name / "meta.json").read_bytes()
        with self._mutex:
            cached = self._open.get(name)
            if cached is not None and cached[1].meta == meta:
                return cached
            if cached is None:
                index = register_analyzers(tantivy.Index.open(str(self.root / name)))
                index.config_reader("Manual")
            else:
                index = cached[0]
            self._seq += 1
            for _ in range(5):
                index.reload()
                searcher = index.searcher()
                after = (self.root / name / "meta.json").read_bytes()
                if after == meta:
                    break
                meta = after
            else:
                # Kept changing: a state no log names and no other snapshot shares (its key must not equal one).
                searcher, meta = index.searcher(), b'{"opstamp": -1, "seq": %d}' % self._seq
            opened = self._open[name] = (index, Snapshot(name, meta, _opstamp(meta), searcher, self._seq))
            return opened

    def _live(self) -> tantivy.Searcher:
        return self._live_snapshot()[1].searcher

    def _live_snapshot(self) -> tuple[tantivy.Index, Snapshot]:
        """The live index and the searcher of its last commit."""
        try:
            name = self._pointer(CURRENT)
            if name is None:
                raise FileNotFoundError(self.root / CURRENT)
            return self._snapshot(name)
        except (OSError, ValueError, KeyError) as exc:
            raise ServiceUnavailable("The search engine is unavailable.") from exc

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """One writer at a time across threads and processes (see writer_lease: merges end off the request path)."""
        with self._lease.held():
            yield

    def _targets(self) -> list[str]:
        return [n for n in (self._pointer(CURRENT), self._pointer(NEXT)) if n]

    # --- writes ----------------------------------------------------------------------------------
    def engine_document(self, doc: dict[str, Any]) -> bytes:
        """The index document in the form `load_documents` takes: JSON that tantivy parses against the schema."""
        return to_tantivy_json(doc, self.fields)

    def with_source(self, document: bytes, record: bytes) -> bytes:
        return with_source_json(document, record)

    def _entries(self, docs: list[dict[str, Any]]) -> list[Entry]:
        latest = {d["recid"]: d for d in docs}  # the same record twice in one batch: keep the last
        return [(recid, int(d.get("revision", 0)), self.engine_document(d)) for recid, d in latest.items()]

    def _write(self, name: str, entries: list[Entry], deletes: Iterable[int] = ()) -> None:
        """Upsert `entries` and delete `deletes` in index `name`, committed and searchable on return. The writer
        stays open in the lease, so a merge its commit starts does not hold up the caller."""
        index = self._index(name)
        index.reload()
        searcher = index.searcher()
        recids = [recid for recid, _, _ in entries]
        indexed: dict[int, int] = {}
        if recids:
            found = searcher.search(tantivy.Query.term_set_query(index.schema, "recid", recids), len(recids)).hits
            addresses = [a for _, a in found]
            indexed = dict(zip(int_column(searcher, "recid", addresses),
                               int_column(searcher, "revision", addresses), strict=True))
        writer = self._lease.writer(name, index, self.heap_size)
        before = _opstamp((self.root / name / "meta.json").read_bytes())  # merges keep it: only commits move it
        try:
            for recid in deletes:
                writer.delete_documents_by_term("recid", int(recid))
            for recid, revision, document in entries:
                if indexed.get(recid, -1) > revision:
                    continue  # a late retry of an older revision must not undo a newer one
                if recid in indexed:
                    writer.delete_documents_by_term("recid", recid)
                add_json(writer, document, self.fields)
            after = writer.commit()
        except BaseException:
            self._lease.discard(name)
            raise
        self._log_changes(name, before, after, {int(r) for r in deletes} | set(recids))
        index.reload()

    def _log_changes(self, name: str, before: int, after: int, recids: set[int]) -> None:
        """Append the commit `before` -> `after` and its records to the index's CHANGES (inside `_writing`)."""
        path = self.root / name / CHANGES
        line = b"%d %d %s\n" % (before, after, ",".join(map(str, sorted(recids))).encode())
        try:
            if path.exists() and path.stat().st_size > CHANGES_MAX:
                kept = path.read_bytes()[-CHANGES_MAX // 2:]
                tmp = path.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_bytes(kept[kept.index(b"\n") + 1:] + line)
                os.replace(tmp, path)  # readers see the old log or the new one, each whole up to its last line
                return
            with open(path, "ab") as out:
                out.write(line)
        except OSError:  # readers then find no way from the previous commit and drop their cached answers
            pass

    def _touched(self, old: Snapshot, new: Snapshot) -> frozenset[int] | None:
        """The records whose documents differ between two states of the live index; None when unknown (another
        index, a commit not logged)."""
        if old.name != new.name or old.opstamp < 0 or new.opstamp < old.opstamp:
            return None
        if new.opstamp == old.opstamp:
            return frozenset()  # a merge: the same documents in other segments
        try:
            lines = (self.root / new.name / CHANGES).read_bytes().splitlines()
        except OSError:
            return None
        steps: dict[int, tuple[int, bytes]] = {}
        for line in lines:
            parts = line.split(b" ", 2)
            if len(parts) == 3 and parts[0].isdigit() and parts[1].isdigit():
                steps[int(parts[0])] = (int(parts[1]), parts[2])
        touched: set[int] = set()
        at = old.opstamp
        while at != new.opstamp:
            step = steps.get(at)
            if step is None or step[0] <= at or step[0] > new.opstamp:
                return None
            at = step[0]
            touched.update(int(r) for r in step[1].split(b",") if r)
        return frozenset(touched)

    def _translator(self, searcher: tantivy.Searcher, schema: tantivy.Schema | None = None,
                    scored: bool = True, state: Snapshot | None = None) -> Translator:
        """The query translator for `searcher`; given its `state`, a two-word phrase is scored by its pair where that
        index records the pairs' frequencies (tantivy_query.pairs_scored)."""
        pair_scores = False
        if state is not None:
            if state.name not in self._pair_scores:
                self._pair_scores[state.name] = pairs_scored(state.meta)
            pair_scores = self._pair_scores[state.name]
        return Translator(schema or self.schema, searcher, self.fields, self._parser, scored, pair_scores)

    def _matches(self, state: Snapshot, node: Node, recids: frozenset[int]) -> bool:
        """True when one of `recids` matches `node` in `state` (called under the result cache's lock)."""
        probe = self._probed(state, recids)
        if probe is None:  # none of them before a publish, none after a take-down: nothing to match
            return False
        searcher, narrow = probe
        query = tantivy.Query.boolean_query([(tantivy.Occur.Must, narrow),
                                             (tantivy.Occur.Must, self._translator(searcher)(node))])
        return hit_count(searcher.search(query, 1)) > 0

    def _matching(self, state: Snapshot, node: Node, recids: frozenset[int]) -> frozenset[int]:
        """Which of `recids` match `node` in `state` (under the result cache's lock; its facet deltas)."""
        probe = self._probed(state, recids)
        if probe is None:
            return frozenset()
        searcher, narrow = probe
        query = tantivy.Query.boolean_query([(tantivy.Occur.Must, narrow),
                                             (tantivy.Occur.Must, self._translator(searcher)(node))])
        found = searcher.search(query, len(recids), count=False).hits
        return frozenset(int_column(searcher, "recid", [a for _, a in found])) if found else frozenset()

    def _facet_values(self, state: Snapshot, recids: frozenset[int]) -> dict[int, Values]:
        """The facet values of those of `recids` that `state` holds, as its engine counts them (facet_delta)."""
        probe = self._probed(state, recids)
        if probe is None:
            return {}
        searcher, narrow = probe
        return record_values(searcher.aggregate(narrow, RECORD_SPEC))

    def _probed(self, state: Snapshot, recids: frozenset[int]) -> tuple[tantivy.Searcher, tantivy.Query] | None:
        """`_probe`, once per state and set of records."""
        if self._probes is None or self._probes[0] is not recids:
            self._probes = (recids, {})
        probes = self._probes[1]
        if id(state) not in probes:
            probes[id(state)] = self._probe(state, recids)
        probe: tuple[tantivy.Searcher, tantivy.Query] | None = probes[id(state)]
        return probe

    def _probe(self, state: Snapshot, recids: frozenset[int]) -> tuple[tantivy.Searcher, tantivy.Query] | None:
        """Where to ask whether `recids` match a query in `state`: None when the state holds none of them (before a
        publish, after a take-down), else its searcher and a query narrowing any other to them. (A small in-memory
        index of just their documents was tried: its commit alone costs ~50 ms, more than the checks it saves.)"""
        # Term queries, not a term set: the engine leads an intersection with its smallest clause by the clauses'
        # size hints, and a term set's hint is the whole segment (it costs a scan of the other clause's matches).
        ids = [tantivy.Query.term_query(self.schema, "recid", r) for r in sorted(recids)]
        any_of = ids[0] if len(ids) == 1 else tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in ids])
        return (state.searcher, any_of) if hit_count(state.searcher.search(any_of, 1)) else None

    def _journal(self, name: str) -> Path:
        return self.root / name / JOURNAL

    def _apply(self, name: str, entries: list[Entry], deletes: list[int]) -> None:
        """Write to index `name`, or append to its journal while a bulk load owns it (inside `_writing`)."""
        journal = self._journal(name)
        if not journal.exists():
            self._write(name, entries, deletes)
            return
        lines = [b"D %d\n" % recid for recid in deletes]
        lines += [b"I %d %d %s\n" % (recid, revision, document) for recid, revision, document in entries]
        with open(journal, "ab") as out:
            out.write(b"".join(lines))

    def _replay(self, name: str) -> None:
        """Apply the journal of index `name` (inside `_writing`): per record its last word, deletes being final
        (records are tombstoned), an older revision never replacing a newer one."""
        journal = self._journal(name)
        if not journal.exists():
            return
        latest: dict[int, Entry | None] = {}
        for line in journal.read_bytes().splitlines():
            kind, _, rest = line.partition(b" ")
            if kind == b"D":
                latest[int(rest)] = None
            elif kind == b"I":
                recid, revision, document = rest.split(b" ", 2)
                entry = (int(recid), int(revision), document)
                if entry[0] in latest and ((prior := latest[entry[0]]) is None or prior[1] > entry[1]):
                    continue  # deleted already, or a newer revision came first
                latest[entry[0]] = entry
        self._write(name, [e for e in latest.values() if e is not None],
                    [recid for recid, e in latest.items() if e is None])
        journal.unlink()

    def index(self, docs: list[dict[str, Any]]) -> None:
        """Upsert by recid into the live index (and the one being built); searchable on return."""
        self.index_documents(self._entries(docs))

    def index_documents(self, entries: list[Entry]) -> None:
        """As `index`, for engine-ready documents (recid, revision, engine_document) of distinct records."""
        with self._writing():
            for name in self._targets():
                self._apply(name, entries, [])

    def delete(self, recids: Iterable[int], revisions: Mapping[int, int] | None = None) -> None:
        """Remove records by id from the live index (and the one being built: its journal replays the removal after
        the bulk load, so `revisions` is not needed here)."""
        ids = [int(r) for r in recids]
        with self._writing():
            for name in self._targets():
                self._apply(name, [], ids)

    def create_new_index(self) -> str:
        """An empty index that receives every write until `swap` makes it live (journaled until then, so that
        `load_documents` may own it)."""
        with self._writing():
            name = self._create()
            self._journal(name).touch()
            self._write_pointer(NEXT, name)
        return name

    def building(self) -> bool:
        """True while `NEXT` names an index being built (a rebuild or bulk load not yet swapped in)."""
        return self._pointer(NEXT) is not None

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
        entries = self._entries(batch)
        with self._writing():
            name = self._pointer(NEXT)
            if name is None:
                raise RuntimeError("create_new_index() first")
            self._write(name, entries)
        return len(batch)

    def load_documents(self, documents: Iterable[Entry]) -> int:
        """Load engine-ready documents into the index `create_new_index` just made, the fast way: one writer with
        a big heap and its own threads, no look-ups (the index is empty and each record comes once), one commit.
        Live writes meanwhile go to the journal, which `swap` applies. Returns how many were loaded."""
        with self._writing():
            name = self._pointer(NEXT)
            if name is None or not self._journal(name).exists():
                raise RuntimeError("create_new_index() first")
        index = register_analyzers(tantivy.Index.open(str(self.root / name)))
        if index.searcher().num_docs:
            raise RuntimeError(f"{name} is not empty: load_documents fills a new index")
        writer = index.writer(heap_size=self.bulk_heap_size, num_threads=self.bulk_threads)
        loaded = 0
        try:
            for _recid, _revision, document in documents:
                add_json(writer, document, self.fields)
                loaded += 1
            writer.commit()
        except BaseException:
            writer.rollback()
            raise
        finally:
            writer.wait_merging_threads()
        return loaded

    def swap(self) -> None:
        """Point CURRENT at the new index; keep the previous directory for readers still on it."""
        with self._writing():
            name = self._pointer(NEXT)
            if name is None:
                raise RuntimeError("create_new_index() first")
            self._replay(name)
            previous = self._pointer(CURRENT)
            self._write_pointer(CURRENT, name)
            (self.root / NEXT).unlink()
            for old in self.root.glob("records-*"):
                if old.name not in (name, previous):
                    self._lease.close(old.name)
                    shutil.rmtree(old, ignore_errors=True)
                    with self._mutex:
                        self._open.pop(old.name, None)

    # --- reads -----------------------------------------------------------------------------------
    def ping(self) -> bool:
        """True when the live index opens and answers."""
        try:
            self._live().num_docs  # noqa: B018 - touching the searcher is the check
            return True
        except ApiError:
            return False

    def suggest(self, words: list[str]) -> list[str]:
        """Each word no title or description holds -> the nearest of the terms of those fields that start with its
        first letter (the most frequent ones: a word's misspelling rarely changes its first letter)."""
        index, state = self._live_snapshot()
        searcher = state.searcher
        fields = [self._translator(searcher, index.schema).text_field(f)[0] for f in SUGGEST_FIELDS]
        out = []
        for word in words:
            if not word or any(searcher.doc_freq(f, word) for f in fields):
                out.append(word)
                continue
            terms = [t for f in fields for t in searcher.terms_with_prefix(f, word[0], limit=SUGGEST_TERMS)]
            out.append(closest(word, terms) or word)
        return out

    def get_revisions(self) -> dict[int, int]:
        """recid -> revision for every document of the live index."""
        searcher = self._live()
        count = searcher.num_docs
        if not count:
            return {}
        addresses = [a for _, a in searcher.search(tantivy.Query.all_query(), count).hits]
        return dict(zip(int_column(searcher, "recid", addresses),
                        int_column(searcher, "revision", addresses), strict=True))

    def search(self, req: SearchRequest) -> SearchResult:
        """One page of hits with the exact total, aggregations and the next cursor (answered from the result cache
        when an earlier commit's answer still holds)."""
        index, state = self._live_snapshot()
        searcher = state.searcher
        translate = self._translator(searcher, index.schema, state=state)
        # What reads no score (the facets, an order by a key) cheaper where it can be (tantivy_query.Translator).
        unscored = self._translator(searcher, index.schema, scored=False)

        counted = [0]  # the search's total, set by _search before it asks for the facets
        distinct = self._distinct.get(state.name)
        if distinct is None:
            distinct = self._distinct[state.name] = has_distinct(index)

        def counted_now() -> tuple[dict[str, Any], bool, dict[str, Proof]]:  # always exact
            proofs: dict[str, Proof] = {}  # what proves the top terms of open vocabularies (the cache's deltas)
            return self._guarded(lambda: self._aggregate(
                state, unscored(combined(req, with_post_filters=False)), req, counted[0], distinct, proofs)), \
                True, proofs

        def facet_counts() -> tuple[dict[str, Any], bool, dict[str, Proof]]:
            return kept(state.facets, req, counted_now)  # the listing's: once per commit (generation.py)

        by_score = translate if req.sort == "bestmatch" else unscored
        return self.results.get_or_compute(state, req, lambda facets: self._search(index, searcher, by_score, req,
                                                                                    facets, counted), facet_counts)

    @staticmethod
    def _guarded(action: Callable[[], Any]) -> Any:
        try:
            return action()
        except ApiError:
            raise
        except (OSError, ValueError, RuntimeError) as exc:
            raise ServiceUnavailable("The search engine failed to answer.") from exc

    def _search(self, index: tantivy.Index, searcher: tantivy.Searcher, translate: Translator, req: SearchRequest,
                facets: Callable[[], dict[str, Any]], counted: list[int]) -> SearchResult:
        try:
            query = translate(combined(req))
            if req.sort == "bestmatch":
                page, after, total = self._by_score(searcher, query, req)
            else:
                page, after, total = self._by_key(index, searcher, query, req)
            hits = [stored_source(searcher, a) for a in page]
            counted[0] = total  # before the facets: a hint of how much their query matches (facets.aggregate)
            aggregations = facets()
        except ApiError:
            raise
        except (OSError, ValueError, RuntimeError) as exc:
            raise ServiceUnavailable("The search engine failed to answer.") from exc
        position = req.offset + len(hits)
        cursor = req.cursor_for(after, position) if hits and after is not None and position < total else None
        return SearchResult(hits=hits, total=total, aggregations=aggregations, next_cursor=cursor)

    def _by_score(self, searcher: tantivy.Searcher, query: tantivy.Query,
                  req: SearchRequest) -> tuple[list[Any], list[Any] | None, int]:
        """Score order with recid breaking ties, so pages and cursors never repeat or skip a hit; also the total.

        tantivy cuts ties arbitrarily, so fetch more than the page until the page's last score is strictly
        above the lowest fetched one: then nothing unfetched can belong before or inside the page. The first
        search also counts (one pass over the matches, not two).
        """
        first: tantivy.SearchResult | None
        first = searcher.search(query, req.offset + req.size + 1 if req.descending else 1)
        total = hit_count(first)
        if not total:
            return [], None, 0
        if req.constant_score and first.hits:
            constant = self._by_recid(searcher, query, req, float(first.hits[0][0]))
            if constant is not None:
                return constant[0], constant[1], total
        limit = min(total, req.offset + req.size + 1) if req.descending else total
        while True:
            scored = first.hits if first is not None and len(first.hits) == limit else \
                searcher.search(query, limit, count=False).hits
            first = None
            recids = int_column(searcher, "recid", [a for _, a in scored])
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
        return [a for _, _, a in chosen], last, total

    def _by_recid(self, searcher: tantivy.Searcher, query: tantivy.Query, req: SearchRequest,
                  score: float) -> tuple[list[Any], list[Any] | None] | None:
        """Score order when every hit has the same score (`q=*`, a range, one pattern): recid order, read by the
        engine from the recid column (the general path fetches and sorts every tied hit: seconds at a million
        records). None when a cursor carries another score (the index changed): the general path decides."""
        ascending_recid = req.descending  # ties: recid ascending under descending scores (as OpenSearch sorts)
        offset = req.offset
        if req.after is not None:
            if float(req.after[0]) != score:
                return None
            past = tantivy.Query.range_query(
                self.schema, "recid", tantivy.FieldType.Integer, lower_bound=int(req.after[1]) if ascending_recid
                else None, upper_bound=None if ascending_recid else int(req.after[1]),
                include_lower=not ascending_recid, include_upper=ascending_recid)  # the open side is inclusive
            query = tantivy.Query.boolean_query([(tantivy.Occur.Must, query), (tantivy.Occur.Must, past)])
            offset = 0
        found = searcher.search(query, req.size, count=False, order_by_field="recid", offset=offset,
                                order=tantivy.Order.Asc if ascending_recid else tantivy.Order.Desc).hits
        return [a for _, a in found], ([score, int(found[-1][0])] if found else None)

    def _by_key(self, index: tantivy.Index, searcher: tantivy.Searcher, query: tantivy.Query,
                req: SearchRequest) -> tuple[list[Any], list[Any] | None, int]:
        """Order by the precomputed `sort_<option>` key; a cursor becomes a range past its key; also the total. Deep
        pages of the orders that start with an integer column or a day are read through it (deep_pages: the key
        column costs per hit)."""
        deep = by_column(index.schema, searcher, query, req) or by_first_part(index, searcher, query, req)
        if deep is not None:
            return deep
        key_field = f"sort_{req.sort}"
        offset = req.offset
        total = None
        if req.after is not None:
            key = str(req.after[0])
            if not key or any(c not in "0123456789abcdef" for c in key):
                raise invalid("Invalid cursor: use the links.next URL of a previous page.", "cursor")
            past = index.parse_query(f"{key_field}:{'<' if req.descending else '>'}{key}", [key_field])
            total = hit_count(searcher.search(query, 1))  # the total of the whole search, not of what is left
            query = tantivy.Query.boolean_query([(tantivy.Occur.Must, query), (tantivy.Occur.Must, past)])
            offset = 0
        order = tantivy.Order.Desc if req.descending else tantivy.Order.Asc
        result = searcher.search(query, req.size, count=total is None, order_by_field=key_field, offset=offset,
                                 order=order)
        found = result.hits
        return [a for _, a in found], ([found[-1][0]] if found else None), \
            hit_count(result) if total is None else total

    def _aggregate(self, state: Snapshot, query: tantivy.Query, req: SearchRequest,
                   total: int, distinct: bool, proofs: dict[str, Proof] | None = None) -> dict[str, Any]:
        """The requested facets in the OpenSearch response format, exact (repository/search/embedded/facets.py), over the
        query without post-filters (which matches at least the `total` of the search)."""
        if req.post_filters and req.facets and (distinct or total < facet_paths.FEW):
            # The facets' own matches: how they are best counted depends on it, and a post-filter (a facet click)
            # can leave the search a small part of them. A count costs less than the pass a wrong guess adds (and
            # a search of few matches may have facets of many, which must not be counted as few: facets.FEW).
            total = hit_count(state.searcher.search(query, 1))
        return aggregate(state, query, req.facets, total, self.candidates, distinct, proofs)


def has_distinct(index: tantivy.Index) -> bool:
    """Whether `index` was made with the fields counting each document's distinct terms (tantivy_query.DISTINCT):
    one made before them is read as it is, its facets counted without them (reindexing adds them)."""
    try:
        for field in DISTINCT.values():
            tantivy.Query.term_query(index.schema, field, 0)
    except ValueError:
        return False
    return True
