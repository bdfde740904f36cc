"""Facet counts brought from one index state to the next by delta: the counts of the records a commit touched are
taken out as they were and put back as they are, so a commit that touches a popular search does not make its facet
counts (several times the search's own cost) be counted again from scratch (result_cache).

Exact or nothing. A record's facet values at a state are what that state's engine counts for it (one aggregation
over the touched records, by recid: `RECORD_SPEC`), the same columns the cold count reads. A facet answered in full
(the years; a terms facet whose every term is listed) stays exact under any delta: counts move, a bucket at 0
disappears, a new term appears. A terms facet cut at its top N (keywords, file types, communities; types past ten)
keeps the exact counts of the terms it knows (`Terms.counts`: the top N, or the longer list facets.py proved) and a
bound on every other term (`Terms.bound`; with the key those at the bound sort after, when the top N itself gave
it). A delta raises the bound of a term it adds to (by term: `raised`), and the cached top N stays only while its
N-th term still beats every bound under the cold order (count descending, then key ascending), and while no other
term could count more than what the known counts leave of the (document, term) pairs, which move exactly. Past
that the entry is dropped and computed again, with a fresh proof.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from repository.search.backend import SUBTYPE, TERMS_FACETS, terms_aggregation, year_bucket

EVERY = 2**32 - 1
YEARS = "publication_date"
RAISED_MAX = 1024  # other terms whose bound a delta raised, kept one by one; past it they share the highest
Values = dict[str, dict[Any, Any]]  # facet -> term -> documents (`type`: term -> (documents, subtype values))
Proof = tuple[dict[str, int], int]  # exact counts of some terms, and the most any other term counts


def _every(name: str) -> dict[str, Any]:
    return {"terms": {"field": name, "size": EVERY, "segment_size": EVERY}}


# Every facet's values of each of a few records, as the engine counts them (a document counts once per term).
RECORD_SPEC = {"recid": {**_every("recid"), "aggs": {
    **{name: _every(index_field) for name, (index_field, _) in TERMS_FACETS.items() if name != "type"},
    "type": {**_every(TERMS_FACETS["type"][0]), "aggs": {"subtype": _every(SUBTYPE[0])}},
    YEARS: {"histogram": {"field": "year", "interval": 1, "min_doc_count": 1}}}}}


def record_values(raw: dict[str, Any]) -> dict[int, Values]:
    """recid -> its facet values, from the answer to `RECORD_SPEC`."""
    out: dict[int, Values] = {}
    for record in raw["recid"]["buckets"]:
        values: Values = {name: {b["key"]: b["doc_count"] for b in record[name]["buckets"]}
                          for name in TERMS_FACETS if name != "type"}
        values["type"] = {b["key"]: (b["doc_count"], {s["key"]: s["doc_count"] for s in b["subtype"]["buckets"]})
                          for b in record["type"]["buckets"]}
        values[YEARS] = {int(b["key"]): b["doc_count"] for b in record[YEARS]["buckets"] if b["doc_count"]}
        out[int(record["key"])] = values
    return out


class Unproven(Exception):
    """The delta leaves counts the cold computation might not give: the entry must be computed again."""


@dataclass
class Terms:
    """A terms facet: exact counts of the terms listed; every other term counts at most `bound` + its `raised`
    (and when `tie` is set, those counting exactly `bound` with no raise sort after `tie`)."""

    counts: dict[str, int]
    bound: int
    size: int
    pairs: int  # (document, term) pairs over all terms: exact
    tie: str | None = None
    raised: dict[str, int] = field(default_factory=dict)
    subtypes: dict[str, Terms] | None = None  # `type` only: the subtype facet of each listed type

    @classmethod
    def answered(cls, answer: dict[str, Any], size: int, proof: Proof | None = None,
                 nested: str | None = None) -> Terms:
        """From a cold answer (its top `size` is exact, so every other term sorts after its last), or from the
        longer list and bound facets.py proved it with."""
        buckets = answer["buckets"]
        pairs = sum(b["doc_count"] for b in buckets) + int(answer.get("sum_other_doc_count") or 0)
        if proof is not None:
            counts, bound, tie = {t: n for t, n in proof[0].items() if n > 0}, proof[1], None
        else:
            counts = {b["key"]: b["doc_count"] for b in buckets}
            full = len(buckets) >= size
            bound, tie = (buckets[-1]["doc_count"], buckets[-1]["key"]) if full else (0, None)
        rest = pairs - sum(counts.values())  # what the other terms count together
        if rest < bound:
            bound, tie = max(rest, 0), None
        subtypes = None
        if nested is not None:
            subtypes = {b["key"]: cls.answered(b[nested], SUBTYPE[1]) for b in buckets}
            if set(subtypes) != set(counts):
                raise Unproven("a listed type without its subtypes")
        return cls(counts, bound, size, pairs, tie, subtypes=subtypes)

    def move(self, values: dict[str, Any], sign: int) -> None:
        """Take out (-1) or put back (+1) one record's values."""
        for term, value in values.items():
            n, sub = value if self.subtypes is not None else (value, None)
            if term in self.counts:
                self.counts[term] += sign * n
                if self.counts[term] < 0:
                    raise Unproven("a count below zero")
            elif self.bound == 0:  # every term with a count is listed: this one counted nothing
                if sign < 0:
                    raise Unproven("a record took out of a term that counted nothing")
                self.counts[term] = n
                if self.subtypes is not None:
                    self.subtypes[term] = Terms({}, 0, SUBTYPE[1], 0)
            else:
                self.raised[term] = self.raised.get(term, 0) + sign * n
                if len(self.raised) > RAISED_MAX:
                    self.bound, self.tie = self.bound + max(0, *self.raised.values()), None
                    self.raised.clear()
            self.pairs += sign * n
            if sub is not None and self.subtypes is not None and term in self.subtypes:
                self.subtypes[term].move(sub, sign)

    def answer(self) -> dict[str, Any]:
        """The cold answer, or Unproven when another term might belong in the top `size`."""
        ranked = sorted(((t, n) for t, n in self.counts.items() if n > 0), key=lambda kv: (-kv[1], str(kv[0])))
        top = ranked[:self.size]
        rest = self.pairs - sum(n for _, n in ranked)  # every other term counts at most this
        if rest < 0:
            raise Unproven("fewer pairs than listed counts")
        last = top[-1] if len(top) == self.size else None

        def beaten(bound: int, after: str | None) -> bool:  # a term counting at most `bound` sorts after `last`
            bound = min(bound, rest)
            if last is None:
                return bound < 1
            return bound < last[1] or (bound == last[1] and after is not None and after > str(last[0]))

        if not beaten(self.bound, self.tie):
            raise Unproven("a term outside the list may reach the top")
        for term, more in self.raised.items():
            if term in self.counts:
                continue
            if more > 0 and not beaten(self.bound + more, str(term)):
                raise Unproven(f"{term} may reach the top")
        out = terms_aggregation(dict(top), self.size, self.pairs - sum(n for _, n in top))
        if self.subtypes is not None:
            for bucket in out["buckets"]:
                bucket["subtype"] = self.subtypes[bucket["key"]].answer()
        return out


@dataclass
class FacetCounts:
    """The facet counts of one search at one state, in a form a delta can move."""

    names: tuple[str, ...]  # in the order of the answer
    terms: dict[str, Terms]
    years: dict[int, int] | None  # publication_date, when asked

    @classmethod
    def answered(cls, answer: dict[str, Any], proofs: dict[str, Proof]) -> FacetCounts:
        terms = {name: Terms.answered(answer[name], TERMS_FACETS[name][1], proofs.get(name),
                                      "subtype" if name == "type" else None)
                 for name in answer if name in TERMS_FACETS}
        years = None
        if YEARS in answer:
            years = {int(b["key_as_string"]): b["doc_count"] for b in answer[YEARS]["buckets"]}
        return cls(tuple(answer), terms, years)

    def moved(self, taken: list[Values], put: list[Values]) -> dict[str, Any]:
        """Bring these counts to the next state, where the records `taken` (their values before) no longer count
        and `put` (their values now) do; returns the new answer. Raises Unproven (the counts are then unusable)."""
        for values, sign in [(v, -1) for v in taken] + [(v, 1) for v in put]:
            for name, facet in self.terms.items():
                facet.move(values[name], sign)
            if self.years is not None:
                for year, n in values[YEARS].items():
                    self.years[year] = self.years.get(year, 0) + sign * n
                    if self.years[year] < 0:
                        raise Unproven("a year below zero")
        return self.answer()

    def answer(self) -> dict[str, Any]:
        years = self.years or {}
        return {name: {"buckets": [year_bucket(y, n) for y, n in sorted(years.items()) if n > 0]} if name == YEARS
                else self.terms[name].answer() for name in self.names}
