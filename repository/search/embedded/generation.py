"""Facet counts kept with one committed state of the index (a generation) for the searches without words.

Why: the listing (`GET /api/records/` without `q`), each of its sort orders and its filters count their facets over
most of the index, and the facets cost several times the page itself: every match's keywords and file types are
read (docs/performance.md#searches-at-the-engines-limit). Their counts depend only on the documents of the state and
the request's filters, never on the order or the page, so a state computes them once, and every later listing at
that state, in any order, pays no facet pass. A new commit (or another process's commit read by a reload) is a new
state with an empty memo: the counts are computed again there, exactly as before (the result cache, when on, moves
its own copy by delta instead; see result_cache.py). Kept apart from the result cache so that it holds with the
cache off too (`SEARCH_CACHE_ENTRIES=0`): it is bounded by `GENERATION_FACETS` per state, and a state's memo goes
with its searcher.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

from repository.search.embedded.result_cache import facets_key
from repository.search.params import SearchRequest
from repository.search.query import MatchAll

# Distinct (filters, facets) of word-less searches kept per state: the listing, its facet clicks, communities.
GENERATION_FACETS = 32
T = TypeVar("T")


def kept(memo: dict[Hashable, T], req: SearchRequest, compute: Callable[[], T]) -> T:
    """`compute()` for the facets of `req`, kept in `memo` (one state's) when `req` has no words: the same filters
    and facets at the same state always count the same."""
    if not req.facets or not isinstance(req.query, MatchAll):
        return compute()
    key = facets_key(req)
    known = memo.get(key)
    if known is None:
        known = compute()
        if len(memo) < GENERATION_FACETS:
            known = memo.setdefault(key, known)  # two threads computing at once keep the first
    return known
