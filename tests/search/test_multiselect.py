"""Multi-select facet counts on both engines (repository/search/multiselect.py, docs/api/records.md#facet-counts):
each facet counts under every filter in force but its own, so a count is the total its filter gives."""

from __future__ import annotations

from typing import Any

import pytest
from werkzeug.datastructures import MultiDict

from repository.search import multiselect
from repository.search.backend import SearchBackend, SearchResult
from repository.search.params import parse_search_args

FACETS = "access_right,type,keywords,publication_date"
FILTERS = {"access_right": "open", "type": "dataset", "keywords": "kw-3", "publication_date": "2014--2021"}
ARG = {"access_right": "access_right", "type": "type", "keywords": "keywords"}  # facet -> filter argument


def counted(backend: SearchBackend, how: str, **args: Any) -> SearchResult:
    req = parse_search_args(MultiDict({"facets": FACETS, "facet_counts": how, **args}), cursor_key=b"test-key")
    return multiselect.search(backend, req)


def total(backend: SearchBackend, **args: Any) -> int:
    return multiselect.search(backend, parse_search_args(MultiDict(args), cursor_key=b"test-key")).total


@pytest.mark.parametrize("active", [("access_right",), ("type", "keywords"), ("access_right", "publication_date"),
                                    tuple(FILTERS)])
def test_each_count_is_the_total_its_filter_gives(loaded, active):
    filters = {name: FILTERS[name] for name in active}
    result = counted(loaded, "multiselect", **filters)
    assert result.total == total(loaded, **filters)  # the hits are those of the default counting
    for facet, arg in ARG.items():
        for bucket in result.aggregations[facet]["buckets"]:
            assert bucket["doc_count"] == total(loaded, **{**filters, arg: bucket["key"]}), (facet, bucket)
            if facet == "type":
                for sub in bucket["subtype"]["buckets"]:
                    assert sub["doc_count"] == total(loaded, **{**filters, "type": bucket["key"],
                                                                "subtype": sub["key"]})
    for bucket in result.aggregations["publication_date"]["buckets"]:
        year = bucket["key_as_string"]
        assert bucket["doc_count"] == total(loaded, **{**filters, "publication_date": f"{year}--{year}"})


def test_the_default_keeps_the_reference_post_filter_counts(loaded):
    plain = counted(loaded, "post_filter", type="dataset", access_right="open")
    unfiltered = counted(loaded, "post_filter")
    assert plain.aggregations == unfiltered.aggregations  # post-filters narrow the hits, not the counts
    assert plain.total < unfiltered.total
    multi = counted(loaded, "multiselect", type="dataset", access_right="open")
    assert multi.hits == plain.hits and multi.aggregations != plain.aggregations


def test_a_search_without_facet_filters_counts_alike(loaded):
    assert counted(loaded, "multiselect", q="ocean").aggregations == counted(loaded, "post_filter",
                                                                              q="ocean").aggregations
