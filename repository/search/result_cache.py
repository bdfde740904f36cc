"""Search results kept per process and brought up to date by every index commit: the same search against the same
index state always has the same answer, so it is computed once, and a commit changes only the answers it touches.

Why: counting and aggregating a common term over a million records costs tens to hundreds of milliseconds, and
search traffic is dominated by a few searches (the default listing, popular terms, facet clicks). On a live instance
every publish, edit and take-down is a commit, so a cache emptied by each commit serves almost nothing.

How it stays exact: a commit changes the documents of a known set of records (`touched`: the writer logs them with
the commit, see embedded.CHANGES). An answer computed at the previous state can differ at the new one only if one of
those records matched its query before or matches it now — checked on the two states' searchers with a query
narrowed to the touched records, which costs microseconds. Untouched answers are carried over; touched ones are
dropped and computed again when asked. Two kinds of answer are kept:

- whole results (page of hits, total, cursor, facets) by request;
- facet counts by (query, filters, facets), shared by every page, order and post-filter of the same search.

A page ordered by relevance is dropped at every commit whatever it matched: its scores depend on statistics of the
whole index (document count, average field length), so its order and cursor may change although its matches did
not. Its facet counts stay. When the commits in between are not known (another process has not logged its commit
yet, the index was rebuilt and swapped in, the log was cut), everything is dropped: never a stale answer.
`SEARCH_CACHE_ENTRIES=0` switches the cache off.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from repository.search.backend import SearchResult
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
        """Equal keys: the same documents."""


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
    volatile: bool  # depends on index-wide statistics too (relevance order): dropped at every commit
    cost: float  # seconds it took to compute


class ResultCache(Generic[S]):
    """Thread-safe LRUs of results and of facet counts for the state last seen. Results are shared: callers must
    not mutate them.

    `touched(old, new)` gives the records whose documents differ between two states (None: unknown);
    `matches(state, node, recids)` tells whether any of those records matches `node` in `state`.
    """

    def __init__(self, entries: int, touched: Callable[[S, S], frozenset[int] | None] | None = None,
                 matches: Callable[[S, Node, frozenset[int]], bool] | None = None) -> None:
        self.entries = entries
        self._touched, self._matches = touched, matches
        self._results: OrderedDict[Hashable, _Entry[SearchResult]] = OrderedDict()
        self._facets: OrderedDict[Hashable, _Entry[dict[str, Any]]] = OrderedDict()
        self._state: S | None = None
        self._lock = threading.Lock()
        self.carried = self.dropped = 0  # entries kept or dropped by commits (for the benchmark's report)
        self.upkeep = 0.0  # seconds spent bringing entries to new commits
        self.check_cost = 0.0  # seconds one entry's check takes, a moving average: cheaper answers are dropped

    def get_or_compute(self, state: S, req: SearchRequest,
                       compute: Callable[[Callable[[], dict[str, Any]]], SearchResult],
                       aggregate: Callable[[], dict[str, Any]]) -> SearchResult:
        """The result of `req` at `state`: cached, or `compute(facets)` where `facets()` gives the facet counts
        (cached by `facets_key`, or `aggregate()`)."""
        if self.entries <= 0:
            return compute(aggregate)
        key = request_key(req)
        with self._lock:
            self._advance(state)
            hit = self._results.get(key)
            if hit is not None:
                self._results.move_to_end(key)
                return hit.value

        def facets() -> dict[str, Any]:
            if not req.facets:
                return {}
            fkey = facets_key(req)
            with self._lock:
                self._advance(state)
                known = self._facets.get(fkey)
                if known is not None:
                    self._facets.move_to_end(fkey)
                    return known.value
            began = time.perf_counter()
            counted = aggregate()
            self._store(self._facets, state, fkey, _Entry(counted, combined(req, with_post_filters=False), False,
                                                          time.perf_counter() - began))
            return counted

        began = time.perf_counter()
        result = compute(facets)  # outside the lock: concurrent misses compute in parallel rather than queue
        cost = time.perf_counter() - began
        volatile = req.sort == "bestmatch" and not req.constant_score
        # The hits depend on the post-filters, the facets on the wider search: an answer depends on the wider one.
        self._store(self._results, state, key, _Entry(result, combined(req, with_post_filters=False), volatile, cost))
        return result

    def _store(self, items: OrderedDict[Hashable, _Entry[V]], state: S, key: Hashable, entry: _Entry[V]) -> None:
        with self._lock:
            if self._state is not None and self._state.key == state.key:  # not computed against an older state
                items[key] = entry
                items.move_to_end(key)
                while len(items) > self.entries:
                    items.popitem(last=False)

    def _advance(self, state: S) -> None:
        """Bring every entry from the state last seen to `state` (under the lock)."""
        old = self._state
        if old is not None and old.key == state.key:
            return
        self._state = state
        if old is None:
            return
        began = time.perf_counter()
        try:
            self._bring(old, state)
        finally:
            self.upkeep += time.perf_counter() - began

    def _bring(self, old: S, state: S) -> None:
        touched = self._touched(old, state) if self._touched is not None else None
        if touched is None or self._matches is None:
            self.dropped += len(self._results) + len(self._facets)
            self._results.clear()
            self._facets.clear()
            return
        self._carry(self._results, old, state, touched)
        self._carry(self._facets, old, state, touched)

    def _carry(self, items: OrderedDict[Hashable, _Entry[V]], old: S, new: S, touched: frozenset[int]) -> None:
        """Keep the entries that no touched record matched at `old` or matches at `new` (under the lock)."""
        assert self._matches is not None
        deadline = time.perf_counter() + UPKEEP_BUDGET
        for key, entry in reversed(list(items.items())):  # the most recently used first
            if entry.volatile or (touched and (entry.cost < self.check_cost or time.perf_counter() > deadline)):
                del items[key]  # computing again costs less, or the commit's budget is spent
                self.dropped += 1
                continue
            began = time.perf_counter()
            if touched and (self._matches(old, entry.node, touched) or self._matches(new, entry.node, touched)):
                del items[key]
                self.dropped += 1
            else:
                self.carried += 1
            if touched:
                self.check_cost += (time.perf_counter() - began - self.check_cost) * 0.05
