"""The facets of searches without words are counted once per index state (repository/search/embedded/generation.py):
later listings at the same state, in any order, take them from there, and a commit makes them counted again."""

from __future__ import annotations

from pathlib import Path

from helpers.search import run

from repository.search.documents import to_index_document
from repository.search.embedded import generation
from repository.search.embedded.engine import EmbeddedBackend

from .factories import make_record


def _records(first: int, count: int, access: str = "open") -> list[dict]:
    return [to_index_document(make_record(recid, metadata={"access_right": access, "keywords": [f"k{recid % 3}"]}))
            for recid in range(first, first + count)]


def test_a_listing_counts_its_facets_once_per_index_state(tmp_path: Path) -> None:
    backend = EmbeddedBackend(tmp_path, cache_entries=0)  # the result cache off: the state keeps them all the same
    backend.index(_records(1, 6))
    first = run(backend)
    assert first.aggregations["access_right"]["buckets"] == [{"key": "open", "doc_count": 6}]
    # Any order, any page of the same listing: the counts kept with the state, not counted again.
    for args in ({"sort": "mostviewed"}, {"sort": "-publication_date", "page": "2", "size": "2"}, {}):
        assert run(backend, **args).aggregations is first.aggregations
    assert len(backend._live_snapshot()[1].facets) == 1
    # A search with words is counted each time (its matches are not the listing's).
    assert run(backend, q="record").aggregations is not run(backend, q="record").aggregations

    backend.index(_records(7, 2, access="closed"))  # a commit: a new state, counted again there
    after = run(backend, sort="mostrecent")
    assert after.aggregations is not first.aggregations
    assert {b["key"]: b["doc_count"] for b in after.aggregations["access_right"]["buckets"]} == \
        {"open": 6, "closed": 2}
    cold = EmbeddedBackend(tmp_path, cache_entries=0)  # another process reading the same commit, from scratch
    assert run(cold, sort="mostrecent").aggregations == after.aggregations


def test_a_filtered_listing_is_kept_by_its_filters_and_the_kept_counts_are_bounded(tmp_path: Path,
                                                                                    monkeypatch) -> None:
    backend = EmbeddedBackend(tmp_path, cache_entries=0)
    backend.index(_records(1, 4) + _records(5, 3, access="closed"))
    closed = run(backend, access_right="closed")  # a post-filter: the facets count without it
    assert closed.aggregations is run(backend).aggregations
    everything = run(backend, all_versions="true")  # another filter: other counts, kept apart
    assert everything.aggregations is run(backend, all_versions="true", sort="mostviewed").aggregations
    monkeypatch.setattr(generation, "GENERATION_FACETS", 2)
    state = backend._live_snapshot()[1]
    assert len(state.facets) == 2
    third = run(backend, communities="c1")  # past the bound: counted, not kept
    assert len(state.facets) == 2 and third.aggregations is not run(backend, communities="c1").aggregations
