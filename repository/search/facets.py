"""The facets of the embedded engine: exact counts, from one aggregation pass over the query in the common case.

Asked as OpenSearch is asked (the top `size` terms of each segment's top `segment_size`), tantivy's terms
aggregation undercounts a term that falls outside one segment's top list, so the answer depended on how the index
happened to be cut into segments (tests/search/test_facets.py builds such an index). Asking every segment for every
term is exact, and cheap for closed vocabularies (access rights, resource types), but not for keywords: tens of
thousands of terms per segment, each turned into a string and merged.

So for an open vocabulary (keywords, file types, communities) the same pass asks, side by side:

- each segment's top `SEGMENT_TOP` terms with the error bound (`show_term_doc_count_error`): counts that are
  lower bounds, a bound E on what each segment left out, and the exact number of (document, term) pairs;
- the exact counts of the field's most frequent terms in the whole index (a filter each: candidates, kept a while).

A term's true count is at most its reported count + E. When no term outside the exactly counted ones can reach
the `size`-th exact count, the top `size` is proven exact; otherwise a second pass counts exactly the few terms
that could (or, when the bound is too loose, tantivy's `terms_with_prefix` counts every term of the field).
"""

from __future__ import annotations

import threading
import time
from typing import Any

import tantivy

from repository.search.backend import SUBTYPE, TERMS_FACETS, terms_aggregation, year_bucket

EVERY = 2**32 - 1  # a size no segment reaches: every term of every segment is returned
CLOSED = ("access_right", "type")  # validated vocabularies of a few dozen values: every term, always exact
SEGMENT_TOP = 100  # terms per segment for an open vocabulary (each one becomes a string: the cost that grows)
CANDIDATES = 20  # the index's most frequent terms of an open-vocabulary field, counted exactly in the first pass
REFRESH = 60.0  # seconds a candidate list is used: any list gives exact answers, a recent one fewer second passes
KNOWN = "{}__{}"  # the name of the exact count of a facet's candidate number n in the aggregation request


class Facets:
    """Computes the facets of one backend; keeps each open-vocabulary field's candidate terms between searches."""

    def __init__(self) -> None:
        self._candidates: dict[str, tuple[float, list[str]]] = {}  # field -> (when listed, most frequent terms)
        self._lock = threading.Lock()

    def candidates(self, searcher: tantivy.Searcher, field: str) -> list[str]:
        """The most frequent terms of `field` in the index as a recent searcher saw it (document frequencies)."""
        now = time.monotonic()
        with self._lock:
            listed = self._candidates.get(field)
        if listed is not None and now - listed[0] < REFRESH:
            return listed[1]
        listed_terms = searcher.terms_with_prefix(field, "", limit=max(CANDIDATES, SEGMENT_TOP + 1))
        # A vocabulary that fits in one segment's top list is counted exactly by it: no candidates needed.
        terms = [term for term, _ in listed_terms[:CANDIDATES]] if len(listed_terms) > SEGMENT_TOP else []
        with self._lock:
            self._candidates[field] = (now, terms)
        return terms

    def aggregate(self, searcher: tantivy.Searcher, query: tantivy.Query, names: tuple[str, ...]) -> dict[str, Any]:
        """The facets `names` in the OpenSearch response format, over the documents `query` matches."""
        if not names:
            return {}
        if not searcher.num_docs:
            return {name: _empty(name) for name in names}
        spec: dict[str, Any] = {}
        candidates: dict[str, list[str]] = {}  # the terms asked for exactly, by facet
        for name in names:
            request, candidates[name] = self._request(searcher, name)
            spec.update(request)
        raw = searcher.aggregate(query, spec)
        out: dict[str, Any] = {}
        for name in names:
            if name == "publication_date":
                out[name] = {"buckets": [year_bucket(int(b["key"]), b["doc_count"])
                                         for b in raw[name]["buckets"] if b["doc_count"]]}
            elif name == "type":
                out[name] = _types(raw[name])
            elif name in CLOSED:
                out[name] = terms_aggregation(_counts(raw[name]), TERMS_FACETS[name][1])
            else:
                out[name] = _open_vocabulary(searcher, query, name, raw, candidates[name])
        return out

    def _request(self, searcher: tantivy.Searcher, name: str) -> tuple[dict[str, Any], list[str]]:
        """The aggregations that answer facet `name`, and the terms they count exactly (open vocabularies)."""
        if name == "publication_date":
            return {name: {"histogram": {"field": "year", "interval": 1, "min_doc_count": 1}}}, []
        field = TERMS_FACETS[name][0]
        if name in CLOSED:
            request: dict[str, Any] = {name: _every(field)}
            if name == "type":
                request[name]["aggs"] = {"subtype": _every(SUBTYPE[0])}
            return request, []
        request = {name: {"terms": {"field": field, "size": SEGMENT_TOP, "segment_size": SEGMENT_TOP,
                                    "show_term_doc_count_error": True}}}
        candidates = self.candidates(searcher, field)
        request.update(_filters(name, field, candidates))
        return request, candidates


def _filters(name: str, field: str, terms: list[str]) -> dict[str, Any]:
    """One filter aggregation per term: the engine reads the term's postings into a bitset once per segment, then
    tests each match against it (cheaper than an `include` list, which reads every match's terms again and walks
    each segment's whole dictionary: as much again as the facet itself)."""
    return {KNOWN.format(name, number): {"filter": f'{field}:"{_quoted(term)}"'} for number, term in enumerate(terms)}


def _quoted(term: str) -> str:
    """`term` inside double quotes of the engine's query syntax, which takes the character after a backslash as it
    is and everything else up to the closing quote verbatim (the field's raw tokenizer then keeps it whole)."""
    return term.replace("\\", "\\\\").replace('"', '\\"')


def _every(field: str) -> dict[str, Any]:
    return {"terms": {"field": field, "size": EVERY, "segment_size": EVERY}}


def _counts(result: dict[str, Any]) -> dict[str, int]:
    return {b["key"]: b["doc_count"] for b in result.get("buckets") or []}


def _types(result: dict[str, Any]) -> dict[str, Any]:
    subtypes = {b["key"]: _counts(b.get("subtype") or {}) for b in result.get("buckets") or []}
    out = terms_aggregation(_counts(result), TERMS_FACETS["type"][1])
    for bucket in out["buckets"]:
        bucket["subtype"] = terms_aggregation(subtypes.get(bucket["key"], {}), SUBTYPE[1])
    return out


def _empty(name: str) -> dict[str, Any]:
    return {"buckets": []} if name == "publication_date" else terms_aggregation({}, TERMS_FACETS[name][1])


def _open_vocabulary(searcher: tantivy.Searcher, query: tantivy.Query, name: str, raw: dict[str, Any],
                     candidates: list[str]) -> dict[str, Any]:
    """The exact top terms of an open-vocabulary facet from the first pass, with a second one when needed."""
    field, size = TERMS_FACETS[name]
    first = raw[name]
    reported = _counts(first)  # lower bounds of the true counts
    error = int(first.get("doc_count_error_upper_bound") or 0)  # what any segment may have left out of a count
    pairs = sum(reported.values()) + int(first.get("sum_other_doc_count") or 0)  # exact: (document, term) pairs
    # A term not reported was below the last reported one everywhere (or nowhere when fewer came back).
    floor = min(reported.values()) if len(reported) >= SEGMENT_TOP else 0
    exact = dict(reported) if not error else {}
    exact.update(_filtered(raw, name, candidates))
    # The `size`-th largest count is at least the `size`-th largest of what is known of each term.
    threshold = _nth({**reported, **exact}, size)
    if _bound(reported, exact, error, floor) < max(threshold, 1):
        return _terms(exact, pairs, size)  # no other term can reach the top: the common case, one pass
    if floor + error >= threshold:  # terms no segment reported may get there: count every term
        top = searcher.terms_with_prefix(field, "", filter_query=query, limit=size)
        return _terms(dict(top), pairs, size)
    unsure = [t for t, n in reported.items() if t not in exact and n + error >= threshold]
    exact.update(_filtered(searcher.aggregate(query, _filters(name, field, unsure)), name, unsure))
    return _terms(exact, pairs, size)


def _filtered(raw: dict[str, Any], name: str, terms: list[str]) -> dict[str, int]:
    """The exact counts of `terms` from the answer to their `_filters`."""
    return {term: raw[KNOWN.format(name, number)]["doc_count"] for number, term in enumerate(terms)}


def _bound(reported: dict[str, int], exact: dict[str, int], error: int, floor: int) -> int:
    """The most a term without an exact count can count."""
    return max([n + error for t, n in reported.items() if t not in exact] + [floor + error])


def _nth(counts: dict[str, int], size: int) -> int:
    """The `size`-th largest positive count (0 when there are fewer)."""
    ordered = sorted((n for n in counts.values() if n > 0), reverse=True)
    return ordered[size - 1] if len(ordered) >= size else 0


def _terms(exact: dict[str, int], pairs: int, size: int) -> dict[str, Any]:
    """The terms aggregation of exact counts; `pairs` (all (document, term) pairs) gives what the others count."""
    out = terms_aggregation({t: n for t, n in exact.items() if n > 0}, size)
    out["sum_other_doc_count"] = pairs - sum(b["doc_count"] for b in out["buckets"])
    return out
