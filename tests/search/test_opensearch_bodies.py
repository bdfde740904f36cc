"""The OpenSearch request bodies (no server here: the bodies are asserted) and a 503 when unreachable."""

from __future__ import annotations

from datetime import UTC, datetime

import orjson
import pytest
from werkzeug.datastructures import MultiDict

from repository.errors import ServiceUnavailable
from repository.search.open import open_search
from repository.search.opensearch.engine import (
    OpenSearchBackend,
    aggregations_body,
    bulk_body,
    bulk_errors,
    bulk_lines,
    parse_response,
    search_body,
    to_dsl,
)
from repository.search.params import parse_search_args
from repository.search.query import Bool, Exists, GeoBox, MatchAll, Range, Term, Text, Wildcard, parse_query


def req(**args):
    return parse_search_args(MultiDict(args), cursor_key=b"k")


def test_query_clauses():
    assert to_dsl(parse_query("doi:10.5281*zenodo.1")) == {"wildcard": {"doi": {"value": "10.5281*zenodo.1"}}}
    assert to_dsl(Term("conceptrecid", 5)) == {"term": {"conceptrecid": {"value": 5}}}
    assert to_dsl(Text("title", "deep sea")) == {"match_phrase": {"title": {"query": "deep sea"}}}
    assert to_dsl(Exists("doi")) == {"exists": {"field": "doi"}}
    assert to_dsl(Range("size", gte=1, lt=5)) == {"range": {"size": {"gte": 1, "lt": 5}}}
    assert to_dsl(Range("created", gte=datetime(2020, 1, 1, tzinfo=UTC))) == {
        "range": {"created": {"gte": "2020-01-01T00:00:00+00:00", "format": "strict_date_optional_time"}}}
    assert to_dsl(GeoBox("locations.point", 1, 2, 3, 4)) == {"geo_bounding_box": {"locations.point": {
        "top_left": {"lat": 4, "lon": 1}, "bottom_right": {"lat": 2, "lon": 3}}}}
    assert to_dsl(Bool(must=(MatchAll(),), must_not=(Wildcard("title", "a*"),))) == {
        "bool": {"must": [{"match_all": {}}], "must_not": [{"wildcard": {"title": {"value": "a*"}}}]}}
    assert to_dsl(Bool(must_not=(Term("a", 1),))) == {"bool": {"must_not": [{"term": {"a": {"value": 1}}}],
                                                               "must": [{"match_all": {}}]}}


def test_search_body_with_filters_post_filters_aggs_and_page():
    body = search_body(req(q="title:x", type="dataset", communities="c", page="3", size="5"))
    assert body["query"] == {"bool": {
        "must": [{"match_phrase": {"title": {"query": "x"}}}],
        "filter": [{"term": {"relations.version.is_last": {"value": True}}}, {"terms": {"communities": ["c"]}}]}}
    assert body["post_filter"] == {"bool": {"filter": [{"terms": {"resource_type.type": ["dataset"]}}]}}
    assert body["sort"] == [{"_score": {"order": "desc"}}, {"recid": {"order": "asc"}}]
    assert (body["from"], body["size"], body["track_total_hits"], body["_source"]) == (10, 5, True, ["record"])
    assert body["aggs"]["type"] == {"terms": {"field": "resource_type.type", "size": 10},
                                    "aggs": {"subtype": {"terms": {"field": "resource_type.subtype", "size": 20}}}}
    assert set(body["aggs"]) == {"access_right", "type", "file_type", "keywords"}


def test_sort_cursor_and_yearly_facet():
    first = req(sort="-publication_date", all_versions="1", facets="publication_date")
    body = search_body(first)
    assert body["sort"] == [{"sort_publication_date": {"order": "desc"}}] and body["query"] == {"match_all": {}}
    assert body["aggs"] == aggregations_body(["publication_date"]) == {"publication_date": {"date_histogram": {
        "field": "publication_date", "calendar_interval": "year", "format": "yyyy", "min_doc_count": 1}}}
    response = {"hits": {"total": {"value": 3, "relation": "eq"}, "hits": [
        {"_source": {"record": {"id": 1}}, "sort": ["aa"]}, {"_source": {"record": {"id": 2}}, "sort": ["ab"]}]},
        "aggregations": {"publication_date": {"buckets": []}}}
    page = parse_response(response, req(sort="-publication_date", all_versions="1", size="2"))
    assert page.hits == [{"id": 1}, {"id": 2}] and page.total == 3 and page.next_cursor
    following = req(sort="-publication_date", all_versions="1", size="2", cursor=page.next_cursor)
    body = search_body(following)
    assert body["search_after"] == ["ab"] and "from" not in body
    last = parse_response({"hits": {"total": {"value": 3}, "hits": [{"_source": {"record": {"id": 3}}, "sort": ["b"]}]}},
                          following)
    assert last.next_cursor is None


def test_bulk_bodies_use_external_versions():
    actions = bulk_body("records", [{"recid": 7, "revision": 3, "title": "t"}])
    assert actions == [{"index": {"_index": "records", "_id": "7", "version": 3, "version_type": "external_gte"}},
                       {"recid": 7, "revision": 3, "title": "t"}]
    response = {"items": [{"index": {"status": 201}}, {"index": {"status": 409}}, {"delete": {"status": 404}},
                          {"index": {"status": 400, "error": "mapping"}}]}
    assert bulk_errors(response) == [{"status": 400, "error": "mapping"}]


def test_template_follows_the_prefix():
    backend = OpenSearchBackend("http://localhost:9200", prefix="t1")
    template = backend.template()
    assert template["index_patterns"] == ["t1-*"]
    assert template["template"]["mappings"]["properties"]["locations"]["properties"]["point"] == {"type": "geo_point"}


def test_unreachable_server_is_a_503():
    backend = open_search("http://127.0.0.1:9", timeout=0.5, max_retries=0)
    assert backend.ping() is False
    with pytest.raises(ServiceUnavailable):
        backend.search(req())
    with pytest.raises(ServiceUnavailable):
        backend.index([{"recid": 1, "revision": 1}])


def test_bulk_lines_are_the_bulk_body_of_engine_documents():
    backend = OpenSearchBackend("http://localhost:9", client=object())
    docs = [{"recid": 7, "revision": 2, "title": "A"}, {"recid": 8, "revision": 1, "title": "B"}]
    lines = bulk_lines("records-x", [(d["recid"], d["revision"], backend.engine_document(d)) for d in docs])
    assert [orjson.loads(line) for line in lines.splitlines()] == bulk_body("records-x", docs)
    assert lines.endswith(b"\n") and backend.engine.startswith("opensearch-")
