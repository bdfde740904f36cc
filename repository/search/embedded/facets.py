"""The facets of the embedded engine: exact counts, from one aggregation pass over the query when it suffices.

Asked as OpenSearch is asked (the top `size` terms of each segment's top `segment_size`), tantivy's terms
aggregation undercounts a term that falls outside one segment's top list, so the answer depended on how the index
happened to be cut into segments (tests/search/test_facets.py builds such an index). Asking every segment for every
term is exact, and cheap for closed vocabularies (access rights, resource types), but not for keywords: thousands
of terms per segment, each turned into a string and merged (15-20 times the facet, measured).

A search with few matches (`FEW`) asks every segment for every term of an open vocabulary too: its matches have few
terms, and a complete list is exact in one pass. Otherwise an open vocabulary (keywords, file types, communities)
asks each segment for its top `SEGMENT_TOP` terms with
the error bound (`show_term_doc_count_error`): counts that are lower bounds, E the most any segment left out of
one term's count, and the exact number of (document, term) pairs. A term's true count is at most its reported
count + E. When E is 0 (no segment had more terms than its list), the reported counts are exact. A search with
many matches also counts, in the same pass, the field's most frequent terms in the index with one filter each (the
term's postings as a bitset, tested against each match): when no other term's bound reaches the `size`-th largest
count, the top `size` is proven. Otherwise a second pass counts the same way the few terms whose bound reaches it.
Only when a term no segment reported could get there (a bound too loose to help) are all the terms counted
(tantivy's `terms_with_prefix`, exact and slow).

A search with many matches over a large vocabulary first tries cheaper: the terms aggregation (reading every
match's terms, half the facets' cost) is left out when the most frequent terms alone can prove the top. Each of the
K most frequent terms of the index is counted with a filter; any other term is in at most as many documents of the
whole index as the (K+1)-th (`Candidates`: document frequencies, deleted documents included, an upper bound grown by
what was added since the list was made). When the `size`-th counted term is above that, the top is proven, and
`sum_other_doc_count` comes from the (document, term) pairs, a sum of each document's number of distinct terms
(tantivy_query.DISTINCT, a plain fast field). K is the fewest the search's share of the index makes likely to be
enough (`Listed.proving`); when the counts fall short anyway, the pass above follows, the candidates known.

What the facets cost is then mostly tantivy's: executing the query a second time (the binding has no collector
that would gather hits, total and aggregations in one pass), a filter per candidate tested against each match, and
reading each match's file types (docs/performance.md#reading-the-figures).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from dataclasses import dataclass
from typing import Any, Protocol

import tantivy

from repository.search.backend import SUBTYPE, TERMS_FACETS, terms_aggregation, year_bucket
from repository.search.embedded.tantivy_query import DISTINCT

EVERY = 2**32 - 1  # a size no segment reaches: every term of every segment is returned
CLOSED = ("access_right", "type")  # validated vocabularies of a few dozen values: every term, always exact
# Terms per segment for an open vocabulary: each becomes a string and is merged (the cost that grows with the
# segments), while a longer list only tightens a bound that a short one already gets under the top terms' counts.
SEGMENT_TOP = 30
COUNT = "{}__{}"  # the name of the exact count of the n-th term a facet counts with a filter
# Searches with this many matches (or more) count the index's most frequent terms of a field with a filter each in
# the first pass (candidates): the second pass would execute the query again, which costs more than testing each
# match against a few bitsets once the query matches that much; a rarer search goes without.
MANY = 2_000
# Searches with fewer matches than this ask each segment for every term of an open vocabulary: few matches have few
# terms, so the list is short, and a complete list is exact in one pass. A top-30 list instead proves nothing when
# the 10th count ties terms left out of it (a rare search's keywords mostly count 1), and the fallback walks the
# field's whole dictionary: a 9-match search at 1,000,000 records spent 17.9 ms on its facets, 13 times its search.
# Facets' CPU at 1,000,000 records, top-30 path against every term (ms): 26 matches 18.3 / 1.3, 111: 5.9 / 1.5,
# 315: 5.9 / 2.3, 633: 6.4 / 3.3, 1,051: 6.9 / 4.2, 1,554: 6.5 / 5.7; past ~3,500 matches every term costs more
# (4,149: 9.3 / 9.9 against the many-match path; 30,963: 15.6 / 30.3), where MANY's candidates take over.
FEW = MANY
CANDIDATES = 20
PROVING = 30  # the most terms a search counts to prove the top of an open vocabulary without its terms aggregation
PAIRS = "{}__pairs"  # the number of (document, term) pairs of an open-vocabulary facet: a sum of DISTINCT
# How far above the other terms' bound the candidates must be expected (from their frequency in the index) before
# a search counts only them: a miss costs a second pass.
LIKELY = 1.1
REFRESH = 60.0  # seconds a candidate list is used (its bound kept up to date meanwhile)


class State(Protocol):
    """One committed state of an index (embedded.Snapshot)."""

    @property
    def name(self) -> str:
        """Of the index."""

    @property
    def opstamp(self) -> int:
        """Of its last commit (-1: unknown)."""

    @property
    def seq(self) -> int:
        """The order in which the process took its states: a larger one is newer."""

    @property
    def searcher(self) -> tantivy.Searcher: ...


class Candidates:
    """The most frequent terms of each open-vocabulary field, and how many documents any other term is in at most.

    Listed again after `REFRESH` seconds (walking a large vocabulary's dictionary costs tens of milliseconds), and
    for any state that is not the same index at the same commit or a later one. In a later state the bound grows by
    the documents added since, which are at most the operations between the two commits (each added document, each
    deletion and each commit takes one opstamp); a merge only lowers document frequencies, which count deleted
    documents until then (an upper bound is all the proof needs)."""

    def __init__(self) -> None:
        self._listed: dict[str, tuple[tuple[str, int, int], float, Listed]] = {}  # field -> (state, when, list)
        self._lock = threading.Lock()

    def __call__(self, state: State, field: str) -> Listed:
        now = time.monotonic()
        with self._lock:
            listed = self._listed.get(field)
        if listed is not None and now - listed[1] < REFRESH and listed[0][0] == state.name and \
                0 <= listed[0][1] <= state.opstamp and listed[0][2] <= state.seq:
            return dataclasses.replace(listed[2], growth=state.opstamp - listed[0][1])
        made = Listed(state.searcher.terms_with_prefix(field, "", limit=max(PROVING, SEGMENT_TOP) + 1), 0)
        with self._lock:
            self._listed[field] = ((state.name, state.opstamp, state.seq), now, made)
        return made


@dataclass(frozen=True)
class Listed:
    """A field's most frequent terms in one state of the index, used in a later one."""

    found: list[tuple[str, int]]  # (term, documents), most first: up to max(PROVING, SEGMENT_TOP) + 1 of them
    growth: int  # the most documents added since

    @property
    def candidates(self) -> list[str]:
        """The terms a search with many matches counts with a filter each beside the terms aggregation (none when
        the vocabulary fits in one segment's top list, which counts it exactly)."""
        return [term for term, _ in self.found[:CANDIDATES]] if len(self.found) > SEGMENT_TOP else []

    def bound(self, count: int) -> int:
        """The most documents a term outside the `count` most frequent is in (0: there is no such term)."""
        return (self.found[count][1] if len(self.found) > count else 0) + self.growth

    def proving(self, size: int, matches: int, total: int) -> int | None:
        """How many of the most frequent terms are likely to prove the top `size` by their counts alone, in a search
        matching `matches` of `total` documents (the fewest whose `size`-th term, met among the matches as often as
        in the index, would be above the bound of every other term); None when no list is that long, or when the
        vocabulary fits in one segment's top list (the terms aggregation then counts it exactly, at less cost than
        a filter per term)."""
        if len(self.found) <= max(SEGMENT_TOP, size):
            return None
        for count in range(size, min(PROVING, len(self.found)) + 1):
            if not self.bound(count) or matches * self.found[size - 1][1] > LIKELY * self.bound(count) * total:
                return count
        return None


def aggregate(state: State, query: tantivy.Query, names: tuple[str, ...], matches: int,
              candidates: Candidates, distinct: bool = False,
              proofs: dict[str, tuple[dict[str, int], int]] | None = None) -> dict[str, Any]:
    """The facets `names` in the OpenSearch response format (exact counts), over the documents `query` matches
    (at least `matches` of them). `distinct`: the index has the fields that count each document's distinct terms
    of an open vocabulary (tantivy_query.DISTINCT). `proofs`, when given, receives for an open-vocabulary facet the
    exact counts it knew and the bound on every other term's count that proved its top terms (the result cache
    moves them by delta, facet_delta.py)."""
    if not names:
        return {}
    searcher = state.searcher
    total = searcher.num_docs
    if not total:
        return {name: _empty(name) for name in names}
    spec: dict[str, Any] = {}
    known: dict[str, list[str]] = {}  # the terms of each open-vocabulary facet counted exactly in the first pass
    proving: dict[str, int] = {}  # facets counted from their candidates alone -> the bound of every other term
    for name in names:
        if name not in TERMS_FACETS or name in CLOSED:
            spec[name] = _request(name)
            continue
        field, size = TERMS_FACETS[name]
        if matches < FEW:
            spec[name], known[name] = _every(field), []
            continue
        listed = candidates(state, field) if matches >= MANY else Listed([], 0)
        count = listed.proving(size, matches, total) if distinct and matches >= MANY else None
        if count is not None:
            known[name] = [term for term, _ in listed.found[:count]]
            proving[name] = listed.bound(count)
            spec[PAIRS.format(name)] = {"sum": {"field": DISTINCT[field]}}
        else:
            known[name] = listed.candidates
            spec[name] = _request(name)
        spec.update(_filters(name, known[name]))
    try:
        raw = searcher.aggregate(query, spec)
    except ValueError:
        if not any(known.values()):
            raise
        # A candidate the engine's query parser refused (none is known to): candidates only save a pass.
        known, proving = dict.fromkeys(known, []), {}
        raw = searcher.aggregate(query, {name: _request(name) for name in names})
    unproven = [name for name, beyond in proving.items() if beyond and
                _nth(_filtered(raw, name, known[name]), TERMS_FACETS[name][1]) <= beyond]
    if unproven:  # some other term may reach the top: a pass as for the other facets, the candidates known
        raw.update(searcher.aggregate(query, {name: _request(name) for name in unproven}))
    out: dict[str, Any] = {}
    for name in names:
        if name == "publication_date":
            out[name] = {"buckets": [year_bucket(int(b["key"]), b["doc_count"])
                                     for b in raw[name]["buckets"] if b["doc_count"]]}
        elif name == "type":
            out[name] = terms_aggregation(_counts(raw[name]), TERMS_FACETS[name][1])
            subtypes = {b["key"]: _counts(b.get("subtype") or {}) for b in raw[name].get("buckets") or []}
            for bucket in out[name]["buckets"]:
                bucket["subtype"] = terms_aggregation(subtypes[bucket["key"]], SUBTYPE[1])
        elif name in CLOSED:
            out[name] = terms_aggregation(_counts(raw[name]), TERMS_FACETS[name][1])
        elif name in proving and name not in unproven:
            # Every term counted, or the `size`-th count above anything another term could have: the top is exact.
            pairs = round(raw[PAIRS.format(name)]["value"])
            exact = _filtered(raw, name, known[name])
            if proofs is not None:  # every other term is in at most `proving[name]` documents, below the top's
                proofs[name] = (exact, proving[name])
            out[name] = _terms(exact, pairs, TERMS_FACETS[name][1])
        else:
            out[name] = _open_vocabulary(searcher, query, name, raw, known[name], proofs, complete=matches < FEW)
    return out


def _request(name: str) -> dict[str, Any]:
    """The aggregation that answers facet `name` in the first pass."""
    if name == "publication_date":
        return {"histogram": {"field": "year", "interval": 1, "min_doc_count": 1}}
    field = TERMS_FACETS[name][0]
    if name == "type":
        return {**_every(field), "aggs": {"subtype": _every(SUBTYPE[0])}}
    if name in CLOSED:
        return _every(field)
    return {"terms": {"field": field, "size": SEGMENT_TOP, "segment_size": SEGMENT_TOP,
                      "show_term_doc_count_error": True}}


def _every(field: str) -> dict[str, Any]:
    return {"terms": {"field": field, "size": EVERY, "segment_size": EVERY}}


def _counts(result: dict[str, Any]) -> dict[str, int]:
    return {b["key"]: b["doc_count"] for b in result.get("buckets") or []}


def _empty(name: str) -> dict[str, Any]:
    return {"buckets": []} if name == "publication_date" else terms_aggregation({}, TERMS_FACETS[name][1])


def _open_vocabulary(searcher: tantivy.Searcher, query: tantivy.Query, name: str, raw: dict[str, Any],
                     known: list[str], proofs: dict[str, tuple[dict[str, int], int]] | None = None,
                     complete: bool = False) -> dict[str, Any]:
    """The exact top terms of an open-vocabulary facet from the first pass, with a second one when needed.
    `complete`: the first pass asked every segment for every term (`FEW`), so its counts are all the counts."""
    field, size = TERMS_FACETS[name]
    reported = _counts(raw[name])  # lower bounds of the true counts
    if complete:
        pairs = sum(reported.values())
        if proofs is not None:  # every term with a count is listed: any other counts nothing
            proofs[name] = (reported, 0)
        return _terms(reported, pairs, size)
    error = int(raw[name].get("doc_count_error_upper_bound") or 0)  # the most a segment left out of one count
    pairs = sum(reported.values()) + int(raw[name].get("sum_other_doc_count") or 0)  # exact (document, term) pairs
    exact = dict(reported) if not error else {}  # no segment left anything out: the reported counts are exact
    exact.update(_filtered(raw, name, known))
    # A term not reported was below the last reported one everywhere (or nowhere when fewer came back).
    floor = min(reported.values()) if len(reported) >= SEGMENT_TOP else 0
    threshold = _nth({**reported, **exact}, size)  # the `size`-th largest true count is at least this
    bound = max([count + error for term, count in reported.items() if term not in exact] + [floor + error])
    if bound < max(threshold, 1):
        if proofs is not None:
            proofs[name] = (exact, bound)
        return _terms(exact, pairs, size)  # no term without an exact count can reach the top: one pass
    if not threshold or floor + error >= threshold:  # terms no segment reported may get there: count every term
        top = searcher.terms_with_prefix(field, "", filter_query=query, limit=size)
        return _terms(dict(top), pairs, size)
    unsure = [term for term, count in reported.items() if term not in exact and count + error >= threshold]
    exact.update(_filtered(searcher.aggregate(query, _filters(name, unsure)), name, unsure))
    if proofs is not None:  # the terms still without an exact count were all below the threshold
        proofs[name] = (exact, max([count + error for term, count in reported.items() if term not in exact]
                                   + [floor + error]))
    return _terms(exact, pairs, size)


def _filters(name: str, terms: list[str]) -> dict[str, Any]:
    """One filter aggregation per term of facet `name`: the engine reads the term's postings into a bitset once
    per segment, then tests each match against it (an `include` list instead reads every match's terms again and
    walks each segment's whole dictionary: as much again as the facet itself)."""
    field = TERMS_FACETS[name][0]
    return {COUNT.format(name, number): {"filter": f'{field}:"{_quoted(term)}"'} for number, term in enumerate(terms)}


def _filtered(raw: dict[str, Any], name: str, terms: list[str]) -> dict[str, int]:
    """The exact counts of `terms` from the answer to their `_filters`."""
    return {term: raw[COUNT.format(name, number)]["doc_count"] for number, term in enumerate(terms)}


def _quoted(term: str) -> str:
    """`term` inside double quotes of the engine's query syntax, which takes the character after a backslash as it
    is and everything else up to the closing quote verbatim (the field's raw tokenizer then keeps it whole)."""
    return term.replace("\\", "\\\\").replace('"', '\\"')


def _nth(counts: dict[str, int], size: int) -> int:
    """The `size`-th largest positive count (0 when there are fewer)."""
    ordered = sorted((n for n in counts.values() if n > 0), reverse=True)
    return ordered[size - 1] if len(ordered) >= size else 0


def _terms(exact: dict[str, int], pairs: int, size: int) -> dict[str, Any]:
    """The terms aggregation of exact counts; `pairs` (all (document, term) pairs) gives what the others count."""
    out = terms_aggregation({t: n for t, n in exact.items() if n > 0}, size)
    out["sum_other_doc_count"] = pairs - sum(b["doc_count"] for b in out["buckets"])
    return out
