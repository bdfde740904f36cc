"""Search results kept per process and brought up to date by every index commit: the same search against the same
index state always has the same answer, so it is computed once, and a commit changes only the answers it touches.

Why: counting and aggregating a common term over a million records costs tens to hundreds of milliseconds, and
search traffic is dominated by a few searches (the default listing, popular terms, facet clicks). On a live instance
every publish, edit and take-down is a commit, so a cache emptied by each commit serves almost nothing.

How it stays exact: a commit changes the documents of a known set of records (`touched`: the writer logs them with
the commit, see embedded.CHANGES). An answer computed at the previous state can differ at the new one only if one of
those records matched its query before or matches it now — checked on the two states' searchers with a query
narrowed to the touched records, which costs microseconds. Untouched answers are carried over. Two kinds of answer
are kept:

- whole results (page of hits, total, cursor, facets) by request: touched ones are dropped and computed again
  when asked (relevance, hits and cursors change);
- facet counts by (query, filters, facets), shared by every page, order and post-filter of the same search: touched
  ones are moved by delta (facet_delta.py: the touched records that matched at the old state taken out with their
  values there, those matching at the new one put in), and dropped only when the delta cannot prove a top N the
  cold count would give. A page computed again after a commit then takes its facets from there.

Two kinds of answer depend on more than their matches and are dropped at every new state, a merge included (a
merge keeps the documents and the opstamp but moves them to other segments):

- a page ordered by relevance: BM25 scores follow statistics of the whole index (document count, average field
  length), and tantivy counts deleted documents in them until a merge purges them, so the order and the cursor's
  score may change although the page's matches did not. Its facet counts stay.
- facet counts the engine had to approximate (a segment held more terms than `segment_size` and cut them; see
  `embedded._aggregate`): they depend on how the documents are spread over segments.

When the commits in between are not known (another process has not logged its commit yet, the index was rebuilt
and swapped in, the log was cut), everything is dropped: never a stale answer.
`SEARCH_CACHE_ENTRIES=0` switches the cache off.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from repository.search.backend import SearchResult
from repository.search.embedded.facet_delta import FacetCounts, Proof, Unproven, Values
from repository.search.params import SearchRequest, combined
from repository.search.query import Node

# Seconds a process spends at each commit checking entries of each kind, the most recently used first; the rest
# are dropped (one check costs ~0.1-1 ms, and a commit a second must not cost a worker much of a core).
UPKEEP_BUDGET = 0.005
V = TypeVar("V")
S = TypeVar("S", bound="State")


class State(Protocol):
    """One committed state of the index as a process sees it (embedded.Snapshot)."""

    @property
    def key(self) -> Hashable:
        """Equal keys: the same documents in the same segments."""

    @property
    def seq(self) -> int:
        """The order in which the process took its states: a larger one is newer."""


def request_key(req: SearchRequest) -> Hashable:
    """Everything about a request that can change its result (the query nodes are frozen dataclasses)."""
    return (req.query, req.filters, req.post_filters, req.sort, req.descending, req.offset, req.size, req.facets,
            req.after, req.fingerprint, req.cursor_key)


def facets_key(req: SearchRequest) -> Hashable:
    """Everything that decides a request's facet counts: post-filters, order and page do not."""
    return (req.query, req.filters, req.facets)


@dataclass
class _Entry(Generic[V]):
    value: V
    node: Node  # the documents this answer depends on: those matching it
    volatile: bool  # depends on more than its matches (see the module's docstring): dropped at every new state
    cost: float  # seconds it took to compute
    counts: FacetCounts | None = None  # facet counts only: the form a delta moves (facet_delta)


class ResultCache(Generic[S]):
    """Thread-safe LRUs of results and of facet counts for the state last seen. Results are shared: callers must
    not mutate them.

    `touched(old, new)` gives the records whose documents differ between two states (None: unknown);
    `matches(state, node, recids)` tells whether any of those records matches `node` in `state`;
    `matching(state, node, recids)` which of them do, and `values(state, recids)` their facet values there (both
    optional: without them a touched facet entry is dropped, not moved by delta).
    """

    def __init__(self, entries: int, touched: Callable[[S, S], frozenset[int] | None] | None = None,
                 matches: Callable[[S, Node, frozenset[int]], bool] | None = None,
                 matching: Callable[[S, Node, frozenset[int]], frozenset[int]] | None = None,
                 values: Callable[[S, frozenset[int]], dict[int, Values]] | None = None) -> None:
        self.entries = entries
        self._touched, self._matches = touched, matches
        self._matching, self._values = matching, values
        self._known: dict[int, dict[int, Values]] = {}  # id(state) -> values of the touched records (one commit)
        self._results: OrderedDict[Hashable, _Entry[SearchResult]] = OrderedDict()
        self._facets: OrderedDict[Hashable, _Entry[dict[str, Any]]] = OrderedDict()
        self._state: S | None = None
        self._lock = threading.Lock()
        # What new states did to the entries, for the benchmark's report: `states` seen, entries `carried`, facet
        # entries moved by `delta`, and entries dropped as `volatile`, `touched`, `unproven` (a delta could not prove
        # a top N), `unchecked` (cheaper to compute than to check, or past the budget) or `unknown` (no way from
        # the old state to the new one).
        self.counts: Counter[str] = Counter()
        self.aggregated, self.aggregating = 0, 0.0  # facet counts computed from scratch, and their seconds
        self.upkeep = 0.0  # seconds spent bringing entries to new states (wall clock)
        self.upkeep_cpu = 0.0  # the same in this thread's CPU time (the wall clock also counts waiting for a core)
        self.check_cost = 0.0  # seconds one entry's check takes, a moving average: cheaper answers are dropped
        # Seconds of checks per kind of entry at each new state; None: check every entry, however long it takes and
        # however cheap the entry (the bounds are timing-dependent; a test that must know what is carried lifts them).
        self.upkeep_budget: float | None = UPKEEP_BUDGET

    @property
    def carried(self) -> int:
        return self.counts["carried"]

    @property
    def dropped(self) -> int:
        return sum(n for reason, n in self.counts.items() if reason not in ("carried", "delta", "states"))

    def get_or_compute(self, state: S, req: SearchRequest,
                       compute: Callable[[Callable[[], dict[str, Any]]], SearchResult],
                       aggregate: Callable[[], tuple[dict[str, Any], bool, dict[str, Proof]]]) -> SearchResult:
        """The result of `req` at `state`: cached, or `compute(facets)` where `facets()` gives the facet counts
        (cached by `facets_key`, or `aggregate()`: the counts, whether they are exact, and the proofs of the top
        terms of the facets that have one, facets.aggregate)."""
        if self.entries <= 0:
            return compute(lambda: aggregate()[0])
        key = request_key(req)
        with self._lock:
            current = self._advance(state)
            hit = self._results.get(key) if current else None
            if hit is not None:
                self._results.move_to_end(key)
                return hit.value
        if not current:  # this search read the index before another one read a newer commit
            return compute(lambda: aggregate()[0])
        exact = True

        def facets() -> dict[str, Any]:
            nonlocal exact
            if not req.facets:
                return {}
            fkey = facets_key(req)
            with self._lock:
                known = self._facets.get(fkey) if self._current(state) else None
                if known is not None:
                    self._facets.move_to_end(fkey)
                    exact = not known.volatile
                    return known.value
            began = time.perf_counter()
            counted, exact, proofs = aggregate()
            cost = time.perf_counter() - began
            self.aggregated += 1
            self.aggregating += cost
            movable = None
            if exact and self._values is not None:
                try:
                    movable = FacetCounts.answered(counted, proofs)
                except Unproven:
                    pass
            self._store(self._facets, state, fkey, _Entry(counted, combined(req, with_post_filters=False), not exact,
                                                          cost, movable))
            return counted

        began = time.perf_counter()
        result = compute(facets)  # outside the lock: concurrent misses compute in parallel rather than queue
        cost = time.perf_counter() - began
        volatile = (req.sort == "bestmatch" and not req.constant_score) or not exact
        # The hits depend on the post-filters, the facets on the wider search: an answer depends on the wider one.
        self._store(self._results, state, key, _Entry(result, combined(req, with_post_filters=False), volatile, cost))
        return result

    def _current(self, state: S) -> bool:
        return self._state is not None and self._state.key == state.key

    def _store(self, items: OrderedDict[Hashable, _Entry[V]], state: S, key: Hashable, entry: _Entry[V]) -> None:
        with self._lock:
            if self._current(state):  # not computed against an older state
                items[key] = entry
                items.move_to_end(key)
                while len(items) > self.entries:
                    items.popitem(last=False)

    def _advance(self, state: S) -> bool:
        """Bring every entry from the state last seen to `state` (under the lock). False when `state` is older
        than that one (a search that read the index before a concurrent one read a newer commit): its answer is
        computed, not cached, and the entries stay at the newer state rather than being carried back and forth."""
        old = self._state
        if old is not None and old.key == state.key:
            return True
        if old is not None and state.seq < old.seq:
            return False
        self._state = state
        if old is None:
            return True
        began, began_cpu = time.perf_counter(), time.thread_time()
        try:
            self.counts["states"] += 1
            self._bring(old, state)
        finally:
            self.upkeep += time.perf_counter() - began
            self.upkeep_cpu += time.thread_time() - began_cpu
        return True

    def _bring(self, old: S, state: S) -> None:
        touched = self._touched(old, state) if self._touched is not None else None
        if touched is None or self._matches is None:
            self.counts["unknown"] += len(self._results) + len(self._facets)
            self._results.clear()
            self._facets.clear()
            return
        self._carry(self._results, old, state, touched)
        try:
            self._carry(self._facets, old, state, touched)
        finally:
            self._known.clear()

    def _carry(self, items: OrderedDict[Hashable, _Entry[V]], old: S, new: S, touched: frozenset[int]) -> None:
        """Keep the entries that no touched record matched at `old` or matches at `new` (under the lock)."""
        assert self._matches is not None
        budget = self.upkeep_budget
        deadline = time.perf_counter() + (budget if budget is not None else 0.0)
        for key, entry in reversed(list(items.items())):  # the most recently used first
            if entry.volatile:
                del items[key]
                self.counts["volatile"] += 1
                continue
            if touched and budget is not None and (entry.cost < self.check_cost or time.perf_counter() > deadline):
                del items[key]  # computing again costs less, or the commit's budget is spent
                self.counts["unchecked"] += 1
                continue
            began = time.perf_counter()
            if not touched:
                self.counts["carried"] += 1
            elif entry.counts is not None and self._matching is not None and self._values is not None:
                moved = self._move(entry, old, new, touched)
                self.counts[moved] += 1
                if moved == "unproven":
                    del items[key]
            elif self._matches(old, entry.node, touched) or self._matches(new, entry.node, touched):
                del items[key]
                self.counts["touched"] += 1
            else:
                self.counts["carried"] += 1
            if touched:
                self.check_cost += (time.perf_counter() - began - self.check_cost) * 0.05

    def _move(self, entry: _Entry[Any], old: S, new: S, touched: frozenset[int]) -> str:
        """Bring a facet entry to `new` by delta: the touched records that matched its search at `old` taken out
        with their values there, those matching at `new` put in with theirs (under the lock). Returns what became of
        it: `carried` (no touched record matches), `delta`, or `unproven` (its counts are then None: drop it)."""
        assert self._matching is not None and self._values is not None and entry.counts is not None
        taken, put = self._matching(old, entry.node, touched), self._matching(new, entry.node, touched)
        if not taken and not put:
            return "carried"
        try:
            entry.value = entry.counts.moved([self._values_at(old, touched)[r] for r in sorted(taken)],
                                             [self._values_at(new, touched)[r] for r in sorted(put)])
        except (Unproven, KeyError):
            entry.counts = None
            return "unproven"
        return "delta"

    def _values_at(self, state: S, touched: frozenset[int]) -> dict[int, Values]:
        """The facet values of the touched records at `state`, read once per commit."""
        assert self._values is not None
        if id(state) not in self._known:
            self._known[id(state)] = self._values(state, touched)
        return self._known[id(state)]
