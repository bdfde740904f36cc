"""Cached answers are exact across commits: after each of many random publishes, new versions, edits and take-downs
(written by this process or by another one), every search of a fixed set answers from the per-process cache what a
process without a cache computes from scratch — hits in order, totals, facets and cursors — at the same index state.

The same state matters: a merge the writer started at a commit ends in the background, at any moment, and although
it keeps the documents and the opstamp it changes relevance scores (tantivy counts deleted documents in BM25's
statistics until a merge purges them) and may change approximate facet counts. Two readings with a merge ending
between them may rightly differ, so answers are compared only when the index state read the same before and after
both readings (`compare`), and read again otherwise — which also brings the cache across that merge."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from helpers.search import run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repository.search.documents import to_index_document
from repository.search.embedded import facets
from repository.search.embedded.engine import CHANGES, CURRENT, EmbeddedBackend
from repository.search.open import open_search

from .factories import make_record

WORDS = ("moss", "lichen", "fern", "sedge", "heather")
TYPES = (("dataset", None), ("publication", "article"), ("publication", "preprint"), ("software", None))
RIGHTS = ("open", "open", "embargoed", "closed")
FILE_TYPES = tuple(f"t{n}" for n in range(12))  # more than the ten a facet lists
SEARCHES: tuple[dict[str, str], ...] = (
    {},
    {"page": "2", "size": "3"},
    {"q": "moss"},
    {"q": "moss", "size": "1"},  # its cursor holds a score, which any commit may change
    {"q": "moss", "size": "2", "page": "2"},
    {"q": '"moss lichen"'},
    {"q": "fern", "sort": "mostrecent"},
    {"q": "fern", "sort": "-mostrecent", "size": "2"},
    {"q": "*"},
    {"q": "*", "size": "2", "page": "3"},
    {"q": "keywords:sedge"},
    {"q": "moss", "type": "publication"},
    {"q": "lichen", "access_right": "open", "keywords": "heather"},
    {"communities": "bog"},
    {"all_versions": "true", "sort": "version"},
    {"q": "heather", "facets": "access_right,type,file_type,keywords,communities,publication_date"},
    {"publication_date": "2019--2021", "sort": "publication_date"},
)

Op = tuple[str, int, int, int, int]  # kind, which record, words, type, rights
ops = st.lists(st.tuples(st.sampled_from(("publish", "publish", "version", "edit", "takedown", "merge")),
                         st.integers(0, 30), st.integers(0, 31), st.integers(0, 3), st.integers(0, 3)),
               min_size=1, max_size=10)


class Model:
    """Concepts and their versions as the service indexes them: a new version makes the previous one not last."""

    def __init__(self) -> None:
        self.concepts: dict[int, list[int]] = {}  # conceptrecid -> version recids
        self.revisions: dict[int, int] = {}
        self.gone: set[int] = set()
        self.next_recid = 100

    def document(self, recid: int, concept: int, words: int, kind: int, rights: int) -> dict[str, Any]:
        versions = self.concepts[concept]
        files = make_record(recid)["files"] * (1 + words % 3)
        chosen = [w for bit, w in enumerate(WORDS) if words >> bit & 1] or ["bare"]
        rtype, subtype = TYPES[kind]
        self.revisions[recid] = self.revisions.get(recid, 0) + 1
        record = make_record(recid, conceptrecid=str(concept), revision=self.revisions[recid],
                             files=[{**file, "type": FILE_TYPES[(words + i) % 12]} for i, file in enumerate(files)],
                             created=f"2023-01-{1 + recid % 28:02d}T10:{recid % 60:02d}:00+00:00", metadata={
                                 # a few frequent keywords and many rare ones: more than the ten listed and
                                 # than a segment's top list, so a top ten that a delta may or may not keep
                                 "title": " ".join(chosen), "keywords": chosen[1:] + [
                                     f"k{recid % 3}", f"g{(recid // 2 + words) % 12}",
                                     f"f{(recid // 2 * 7 + words) % 45}", f"f{(recid // 2 * 11 + 3) % 45}"],
                                 "access_right": RIGHTS[rights], "publication_date": f"{2017 + recid % 6}-03-01",
                                 "resource_type": {"type": rtype, **({"subtype": subtype} if subtype else {})},
                                 "communities": [{"id": "bog"}] if recid // 2 % 2 else [],  # recids are even
                                 "relations": {"version": [{"index": versions.index(recid),
                                                            "is_last": recid == versions[-1],
                                                            "count": len(versions)}]}})
        return to_index_document(record)

    def seed(self, backend: EmbeddedBackend, count: int) -> None:
        """`count` records in one commit: enough keywords that facet lists are cut at their top terms."""
        docs = []
        for n in range(count):
            recid = self.next_recid
            self.next_recid += 2
            self.concepts[recid - 1] = [recid]
            docs.append(self.document(recid, recid - 1, n * 7 % 32, n % 4, n % 3))
        backend.index(docs)

    def apply(self, backend: EmbeddedBackend, op: Op) -> None:
        kind, which, words, rtype, rights = op
        live = sorted(r for versions in self.concepts.values() for r in versions if r not in self.gone)
        if kind == "merge":
            backend._lease.end()  # the writer finishes its merges: same documents, other segments
            return
        if kind == "publish" or not live:
            recid = self.next_recid
            self.next_recid += 2
            self.concepts[recid - 1] = [recid]
            backend.index([self.document(recid, recid - 1, words, rtype, rights)])
            return
        recid = live[which % len(live)]
        concept = next(c for c, versions in self.concepts.items() if recid in versions)
        if kind == "edit":
            backend.index([self.document(recid, concept, words, rtype, rights)])
        elif kind == "takedown":
            self.gone.add(recid)
            backend.delete([recid])
        else:  # a new version of the concept: the previous last version is indexed again, no longer last
            new = self.next_recid
            self.next_recid += 2
            previous = self.concepts[concept][-1]
            self.concepts[concept].append(new)
            docs = [self.document(new, concept, words, rtype, rights)]
            if previous not in self.gone:
                docs.append(self.document(previous, concept, words ^ 1, rtype, rights))
            backend.index(docs)


def answers(backend: EmbeddedBackend) -> list[dict[str, Any]]:
    return [asdict(run(backend, **args)) for args in SEARCHES]


def state(root: Path) -> bytes:
    """The live index's meta.json: its segments and its last commit (never the same again once changed: a merge
    makes new segments, a commit a new opstamp)."""
    return (root / (root / CURRENT).read_text() / "meta.json").read_bytes()


def compare(cached: EmbeddedBackend, cold: EmbeddedBackend, root: Path, label: object) -> int:
    """Assert that both answer the same at one state of the index; returns how many readings a merge ending
    between them made void (see the module's docstring)."""
    for void in range(50):
        before = state(root)
        mine, theirs = answers(cached), answers(cold)
        if state(root) == before:
            assert mine == theirs, label
            return void
    raise AssertionError(f"the index kept changing: {label}")


@pytest.mark.slow  # tens of index commits per example, each followed by every search twice
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=ops, writers=st.lists(st.booleans(), min_size=14, max_size=14))
def test_cached_answers_equal_cold_answers_after_every_change(tmp_path_factory: Any, ops: list[Op],
                                                              writers: list[bool]) -> None:
    replay(tmp_path_factory, ops, writers)


@pytest.mark.slow  # tens of index commits per example, each followed by every search twice
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=ops, writers=st.lists(st.booleans(), min_size=14, max_size=14))
def test_cached_answers_equal_cold_answers_when_frequent_terms_alone_prove_the_top(
        tmp_path_factory: Any, monkeypatch: pytest.MonkeyPatch, ops: list[Op], writers: list[bool]) -> None:
    # Every search takes facets.py's path for many matches (the top proven by the index's most frequent terms, the
    # list kept across commits with a growing bound), whose proofs the cache then moves by delta.
    for name, value in (("MANY", 0), ("FEW", 0), ("LIKELY", 0), ("SEGMENT_TOP", 5)):
        monkeypatch.setattr(facets, name, value)
    replay(tmp_path_factory, ops, writers)


@pytest.mark.slow  # tens of index commits per example, each followed by every search twice
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=ops, writers=st.lists(st.booleans(), min_size=14, max_size=14))
def test_cached_answers_equal_cold_answers_when_segments_list_their_top_terms(
        tmp_path_factory: Any, monkeypatch: pytest.MonkeyPatch, ops: list[Op], writers: list[bool]) -> None:
    # Every search takes facets.py's path for matches between FEW and MANY (each segment's top terms with an error
    # bound, a second pass for the unsure ones); the default test's searches, all of few matches, list every term.
    monkeypatch.setattr(facets, "FEW", 0)
    monkeypatch.setattr(facets, "SEGMENT_TOP", 5)
    replay(tmp_path_factory, ops, writers)


def replay(tmp_path_factory: Any, ops: list[Op], writers: list[bool]) -> None:
    """Apply `ops` (by the cached backend or another writer, as `writers` says) and compare cached with cold
    answers after each."""
    root: Path = tmp_path_factory.mktemp("index")
    cached = open_search(f"embedded://{root}", cache_entries=64, linger=60.0)
    other = open_search(f"embedded://{root}", cache_entries=0, linger=0.0)  # another worker process
    cold = open_search(f"embedded://{root}", cache_entries=0)
    assert isinstance(cached, EmbeddedBackend) and isinstance(other, EmbeddedBackend)
    assert isinstance(cold, EmbeddedBackend)
    cached.results.upkeep_budget = None  # every entry checked: what is carried does not depend on the machine's load
    model = Model()
    model.seed(other, 30)
    try:
        for op in [("publish", 0, 3, 0, 0), ("publish", 0, 5, 1, 1)] + ops:
            answers(cached)  # fill the cache at the state before the change
            writer = other if writers[len(model.revisions) % len(writers)] else cached
            model.apply(writer, op)
            compare(cached, cold, root, op)
        assert cached.results.carried > 0  # answers were carried over commits, not only recomputed
    finally:
        cached._lease.end()
        other._lease.end()


@pytest.mark.slow
def test_facet_counts_stay_exact_before_during_and_after_a_merge(tmp_path: Path) -> None:
    """The first segment holds 150 keywords twice each and `zed` once, the second `zed` 15 times: an engine that
    keeps each segment's most frequent keywords only (tantivy's terms aggregation, asked as OpenSearch is) counts
    `zed` 15 times until a merge puts both in one segment. The counts are exact throughout (repository/search/embedded/facets.py),
    cached answers carried over commits that touch no record of the search included, and equal to a cold search's."""
    cached = open_search(f"embedded://{tmp_path}", cache_entries=16, linger=60.0)
    cold = open_search(f"embedded://{tmp_path}", cache_entries=0)
    assert isinstance(cached, EmbeddedBackend) and isinstance(cold, EmbeddedBackend)

    def docs(first: int, keywords: list[list[str]], title: str = "moss") -> list[dict[str, Any]]:
        return [to_index_document(make_record(first + 2 * i, metadata={"title": title, "keywords": words}))
                for i, words in enumerate(keywords)]

    def zed(backend: EmbeddedBackend) -> tuple[int, dict[str, Any]]:
        found = asdict(run(backend, q="moss", sort="mostrecent", facets="keywords"))
        counts = {b["key"]: b["doc_count"] for b in found["aggregations"]["keywords"]["buckets"]}
        return counts.get("zed", 0), found

    try:
        cached.index(docs(2, [[f"t{i}", f"t{(i + 1) % 150}"] for i in range(150)] + [["zed"]]))
        cached.index(docs(1002, [["zed"]] * 15))
        assert cached._live().num_segments == 2 and zed(cached)[0] == 16
        for n in range(6):  # the eighth segment makes the writer merge them all
            cached.index(docs(2002 + 2 * n, [["other"]], title="fern"))
            assert zed(cached) == zed(cold) and zed(cached)[0] == 16
        cached._lease.end()  # the merge ends
        assert cold._live().num_segments == 1
        assert zed(cached) == zed(cold) and zed(cold)[0] == 16
    finally:
        cached._lease.end()


def test_a_search_that_read_an_older_commit_leaves_the_cache_at_the_newer_one(tmp_path: Path) -> None:
    """Under concurrent searches one may have read the index just before another read a newer commit: it answers
    from its own state, uncached, and the cache stays at the newer state (not dropped by a way back)."""
    backend = open_search(f"embedded://{tmp_path}", cache_entries=16)
    assert isinstance(backend, EmbeddedBackend)
    model = Model()
    model.apply(backend, ("publish", 0, 1, 0, 0))
    older = backend._live_snapshot()
    model.apply(backend, ("publish", 0, 1, 0, 0))
    kept = run(backend, q="moss", sort="mostrecent")
    assert kept.total == 2
    newest = backend._live_snapshot
    backend._live_snapshot = lambda: older  # type: ignore[method-assign]
    assert run(backend, q="moss", sort="mostrecent").total == 1  # its own state's answer
    backend._live_snapshot = newest  # type: ignore[method-assign]
    assert run(backend, q="moss", sort="mostrecent") is kept
    assert backend.results.counts["unknown"] == 0


def test_a_commit_missing_from_the_log_drops_every_answer(tmp_path: Path) -> None:
    cached = open_search(f"embedded://{tmp_path}", cache_entries=16)
    assert isinstance(cached, EmbeddedBackend)
    model = Model()
    model.apply(cached, ("publish", 0, 1, 0, 0))
    assert run(cached, q="moss").total == 1
    other = open_search(f"embedded://{tmp_path}", cache_entries=0)
    model.apply(other, ("publish", 0, 1, 0, 0))
    (tmp_path / cached._pointer("CURRENT") / CHANGES).unlink()  # as if the writer died before logging its commit
    assert run(cached, q="moss").total == 2


class KeywordCounts:
    """Records titled "moss" with given keywords, and the keywords facet of the search for them."""

    def __init__(self) -> None:
        self.recids = iter(range(2, 10_000, 2))

    @staticmethod
    def backends(root: Path) -> tuple[EmbeddedBackend, EmbeddedBackend]:
        """A backend keeping answers (every entry checked at each commit) and one answering cold, on one index."""
        cached = open_search(f"embedded://{root}", cache_entries=16, linger=60.0)
        cold = open_search(f"embedded://{root}", cache_entries=0)
        assert isinstance(cached, EmbeddedBackend) and isinstance(cold, EmbeddedBackend)
        cached.results.upkeep_budget = None
        return cached, cold

    def docs(self, keywords: list[list[str]]) -> list[dict[str, Any]]:
        return [to_index_document(make_record(next(self.recids), metadata={"title": "moss", "keywords": words}))
                for words in keywords]

    @staticmethod
    def keywords(backend: EmbeddedBackend) -> dict[str, Any]:
        return asdict(run(backend, q="moss", sort="mostrecent", facets="keywords"))["aggregations"]["keywords"]


def test_facet_counts_move_by_delta_while_their_top_terms_are_proven(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Ten keywords counted 3 times and thirty counted twice, in two segments of at most 30 keywords each: the cold
    count lists the top 30 exactly and proves every other keyword counts at most 2. A publish that lifts a listed
    keyword into the top ten moves the cached counts by delta (the top ten changes); one that lifts an unlisted
    keyword to 3 ties it with the tenth, before it in key order: no longer proven, the entry is counted again."""
    monkeypatch.setattr(facets, "FEW", 0)  # each segment's top terms, not every term
    cached, cold = KeywordCounts.backends(tmp_path)
    docs, keywords = KeywordCounts().docs, KeywordCounts.keywords
    tops = [f"t{n}" for n in range(10)]
    try:
        cached.index(docs([tops] * 3 + [[f"b{n:02d}" for n in range(15)]] * 2))
        cached.index(docs([[f"c{n:02d}" for n in range(15)]] * 2))
        first = keywords(cached)
        assert [b["key"] for b in first["buckets"]] == tops and first == keywords(cold)

        cached.index(docs([["b00", "t0"]]))  # b00: 3, ties t9 and sorts before it
        moved = keywords(cached)
        assert moved == keywords(cold) and cached.results.counts["delta"] == 1
        assert [b["key"] for b in moved["buckets"]] == ["t0", "b00"] + tops[1:9]

        cached.index(docs([["c05"]]))  # an unlisted keyword may now tie the tenth (it does: c05 < t8)
        again = keywords(cached)
        assert cached.results.counts["unproven"] == 1 and again == keywords(cold)
        assert [b["key"] for b in again["buckets"]] == ["t0", "b00", "c05"] + tops[1:8]
    finally:
        cached._lease.end()


def test_facet_counts_proven_by_the_most_frequent_terms_move_by_delta(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The many-match path of facets.py: the top ten proven by the index's ten most frequent keywords (3 documents
    each) and the bound the eleventh gives every other keyword (2). A publish adding a listed keyword moves the
    cached counts by delta; one that lifts an unlisted keyword to the tenth's count, before it in key order, leaves
    the top unproven: counted again."""
    for name, value in (("MANY", 0), ("FEW", 0), ("LIKELY", 0), ("SEGMENT_TOP", 5)):
        monkeypatch.setattr(facets, name, value)
    cached, cold = KeywordCounts.backends(tmp_path)
    docs, keywords = KeywordCounts().docs, KeywordCounts.keywords
    tops = [f"t{n}" for n in range(10)]
    try:
        cached.index(docs([tops] * 3 + [[f"b{n:02d}" for n in range(15)]] * 2))
        first = keywords(cached)
        assert [b["key"] for b in first["buckets"]] == tops and first == keywords(cold)

        cached.index(docs([["t1"]]))
        moved = keywords(cached)
        assert moved == keywords(cold) and cached.results.counts["delta"] == 1
        assert [b["key"] for b in moved["buckets"]] == ["t1", "t0", *tops[2:]]

        cached.index(docs([["b00", "t0"]]))  # b00: 3 documents, as many as the tenth, and sorts before it
        again = keywords(cached)
        assert cached.results.counts["unproven"] == 1 and again == keywords(cold)
        assert [b["key"] for b in again["buckets"]] == ["t0", "t1", "b00", *tops[2:9]]
    finally:
        cached._lease.end()
