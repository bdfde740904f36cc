"""The bounds live in the shared parser, so the OpenSearch backend gets them too: its request bodies never carry a
query past them (no server needed: the bodies are asserted)."""

from __future__ import annotations

import pytest
from werkzeug.datastructures import MultiDict

from repository.errors import BadRequest
from repository.search.opensearch.engine import search_body, to_dsl
from repository.search.params import parse_search_args
from repository.search.query import MAX_DEPTH, parse_query


def body(q: str) -> dict:
    return search_body(parse_search_args(MultiDict({"q": q, "all_versions": "1"}), cursor_key=b"k"))


@pytest.mark.parametrize("q", ["*" * 1000, "(" * 1000 + "a" + ")" * 1000, "-" * 1000 + "a",
                               "recid:[0 TO 99999999999999999999]", "year:3000000000", "data* test* abc*",
                               " ".join(f"w{i}" for i in range(40)), "title:" + "a?" * 11])
def test_no_body_past_the_bounds(q):
    with pytest.raises(BadRequest) as refused:
        body(q)
    assert refused.value.errors[0]["field"] == "q"


def test_bodies_within_the_bounds():
    assert body("title:a**b")["query"] == {"wildcard": {"title": {"value": "a*b"}}}
    assert body(f"recid:[0 TO {2**63 - 1}]")["query"] == {"range": {"recid": {"gte": 0, "lte": 2**63 - 1}}}
    assert body("year:[1990 TO 2030]")["query"] == {"range": {"year": {"gte": 1990, "lte": 2030}}}
    nested = "(" * (MAX_DEPTH - 2) + "title:x" + ")" * (MAX_DEPTH - 2)
    assert body(nested)["query"] == {"match_phrase": {"title": {"query": "x"}}}
    assert to_dsl(parse_query("publication_date:>9999-12-31")) == {"match_none": {}}
