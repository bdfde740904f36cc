"""Cached answers are exact across commits: after each of many random publishes, new versions, edits and take-downs
(written by this process or by another one), every search of a fixed set answers from the per-process cache what a
process without a cache computes from scratch — hits in order, totals, facets and cursors."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from helpers.search import run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repository.search.documents import to_index_document
from repository.search.embedded import CHANGES, EmbeddedBackend
from repository.search.open import open_search

from .factories import make_record

WORDS = ("moss", "lichen", "fern", "sedge", "heather")
TYPES = (("dataset", None), ("publication", "article"), ("publication", "preprint"), ("software", None))
RIGHTS = ("open", "open", "embargoed", "closed")
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
        chosen = [w for bit, w in enumerate(WORDS) if words >> bit & 1] or ["bare"]
        rtype, subtype = TYPES[kind]
        self.revisions[recid] = self.revisions.get(recid, 0) + 1
        record = make_record(recid, conceptrecid=str(concept), revision=self.revisions[recid],
                             created=f"2023-01-{1 + recid % 28:02d}T10:{recid % 60:02d}:00+00:00", metadata={
                                 "title": " ".join(chosen), "keywords": chosen[1:] + [f"k{recid % 3}"],
                                 "access_right": RIGHTS[rights], "publication_date": f"{2017 + recid % 6}-03-01",
                                 "resource_type": {"type": rtype, **({"subtype": subtype} if subtype else {})},
                                 "communities": [{"id": "bog"}] if recid % 2 else [],
                                 "relations": {"version": [{"index": versions.index(recid),
                                                            "is_last": recid == versions[-1],
                                                            "count": len(versions)}]}})
        return to_index_document(record)

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


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=ops, writers=st.lists(st.booleans(), min_size=14, max_size=14))
def test_cached_answers_equal_cold_answers_after_every_change(tmp_path_factory: Any, ops: list[Op],
                                                              writers: list[bool]) -> None:
    root: Path = tmp_path_factory.mktemp("index")
    cached = open_search(f"embedded://{root}", cache_entries=64, linger=60.0)
    other = open_search(f"embedded://{root}", cache_entries=0, linger=0.0)  # another worker process
    cold = open_search(f"embedded://{root}", cache_entries=0)
    assert isinstance(cached, EmbeddedBackend) and isinstance(other, EmbeddedBackend)
    model = Model()
    for op in [("publish", 0, 3, 0, 0), ("publish", 0, 5, 1, 1)] + ops:
        answers(cached)  # fill the cache at the state before the change
        writer = other if writers[len(model.revisions) % len(writers)] else cached
        model.apply(writer, op)
        assert answers(cached) == answers(cold), op
    cached._lease.end()
    assert cached.results.carried > 0  # answers were carried over commits, not only recomputed


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
