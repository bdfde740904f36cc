"""Search results kept per process until the index changes: the same search against the same index generation
always has the same answer, so it is computed once.

Why: counting and aggregating a common term over a million records costs tens to hundreds of milliseconds, and
search traffic is dominated by a few searches (the default listing, popular terms, facet clicks). OpenSearch keeps a
request cache for the same reason. Entries are keyed by the index generation (the live index and its last commit,
as seen by this process), so any commit — a publish, an edit, a reindex — makes every older entry unreachable; no
result can be served stale. `SEARCH_CACHE_ENTRIES=0` switches it off.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

from repository.search.backend import SearchResult
from repository.search.params import SearchRequest


def request_key(req: SearchRequest) -> Hashable:
    """Everything about a request that can change its result (the query nodes are frozen dataclasses)."""
    return (req.query, req.filters, req.post_filters, req.sort, req.descending, req.offset, req.size, req.facets,
            req.after, req.fingerprint, req.cursor_key)


class ResultCache:
    """A thread-safe LRU of results by (generation, request). Results are shared: callers must not mutate them."""

    def __init__(self, entries: int) -> None:
        self.entries = entries
        self._items: OrderedDict[Hashable, SearchResult] = OrderedDict()
        self._generation: Hashable = None
        self._lock = threading.Lock()

    def get_or_compute(self, generation: Hashable, req: SearchRequest,
                       compute: Callable[[], SearchResult]) -> SearchResult:
        if self.entries <= 0:
            return compute()
        key = request_key(req)
        with self._lock:
            if generation != self._generation:
                self._items.clear()  # a commit happened: nothing computed before it may be served
                self._generation = generation
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
                return hit
        result = compute()  # outside the lock: concurrent misses compute in parallel rather than queue
        with self._lock:
            if generation == self._generation:
                self._items[key] = result
                while len(self._items) > self.entries:
                    self._items.popitem(last=False)
        return result
