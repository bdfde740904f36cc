"""The OpenSearch backend on the wire: the real opensearch-py client against a listener that checks every request
with OpenSearch's own API specification (tests/search/opensearch_spec.py). Each test runs twice: `offline`, where
the listener answers in the specification's response shapes, and `node`, where it forwards every checked request to
the real node the tests start and checks the node's answers too. Tests that script the answers (queued hits, a
failing cluster, a vanished index) run offline only; results are the contract suite's (test_contract.py)."""

from __future__ import annotations

import re
import tomllib
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from helpers.search import ids, run
from opensearchpy import OpenSearch
from opensearchpy.exceptions import NotFoundError

from repository.errors import BadRequest, ServiceUnavailable
from repository.search.backend import SearchBackend
from repository.search.documents import to_index_document
from repository.search.mapping import load_template
from repository.search.open import open_search

from .factories import corpus, make_record
from .opensearch_listener import Listener, query_of
from .opensearch_spec import spec, version_tuple
from .test_contract import QUERY_FORMS

ROOT = Path(__file__).resolve().parents[2]
SORTS = ["mostrecent", "mostviewed", "publication_date", "conference_session", "journal", "version", "bestmatch"]
# Every search the contract suite makes other than its `q` forms: sorts, pages, filters, post-filters, facets.
SEARCHES: list[dict[str, Any]] = [
    {}, {"size": "100"}, {"page": "3", "size": "7"}, {"page": "1000", "size": "10"},
    *({"sort": s} for s in SORTS), *({"sort": "-" + s} for s in SORTS),
    {"q": "study", "sort": "-bestmatch"}, {"all_versions": "1", "sort": "version"},
    {"type": "publication"}, {"type": "publication", "subtype": "preprint"},
    {"access_right": ["embargoed", "closed"]}, {"file_type": "pdf"}, {"keywords": "kw-3"},
    {"communities": "ecfunded", "facets": "access_right,communities"},
    {"publication_date": "2017--2019", "facets": "publication_date"}, {"publication_date": ">2017--<2019"},
    {"publication_date": "--2015"},
    *({"bounds": b} for b in ("5,45,7,47", "150,-35,152,-33", "165,5,-175,15", "150,5,152,15")),
    {"custom": "[dwc:family]:[Felidae]"}, {"custom": "[dwc:family]:felidae"}, {"custom": "[obo:RO_0002453]:[Cat:Flea]"},
    *({"all_versions": v} for v in ("", "1", "true", "TRUE", "0", "false", "no")),
    {"q": "anything", "facets": "access_right,type,publication_date"},
    {"q": "日本語"}, {"q": "title:münster"}, {"q": 'title:"ocean study number 8" OR ocean'},
]


MODES = ["offline", "node"]
OFFLINE = pytest.mark.parametrize("listener", ["offline"], indirect=True)


@contextmanager
def _listening(mode: str, request: pytest.FixtureRequest) -> Iterator[tuple[Listener, str]]:
    """A listener (offline, or forwarding to the node) and the index prefix to use on it: "records" offline, a
    prefix of its own on the shared node, whose indices and template are deleted afterwards."""
    upstream = request.getfixturevalue("opensearch_url") if mode == "node" else None
    prefix = "records" if upstream is None else f"wire{uuid.uuid4().hex[:10]}"
    with Listener(upstream=upstream).running() as running:
        yield running, prefix
        if upstream is not None:
            client = OpenSearch(upstream)
            client.indices.delete(index=f"{prefix}*", params={"allow_no_indices": "true"})
            with suppress(NotFoundError):
                client.indices.delete_index_template(name=prefix)
            client.close()


@pytest.fixture(params=MODES)
def listener(request: pytest.FixtureRequest) -> Iterator[Listener]:
    with _listening(request.param, request) as (running, prefix):
        running.prefix = prefix  # the tests' index prefix, read by `backend` and the tests that name the index
        yield running


@pytest.fixture
def backend(listener: Listener) -> SearchBackend:
    """The OpenSearch backend as the service opens it, pointed at the listener."""
    return open_search(listener.url, prefix=listener.prefix, timeout=30, max_retries=0)


@pytest.fixture(scope="module", params=MODES)
def reader(request: pytest.FixtureRequest) -> Iterator[tuple[Listener, SearchBackend]]:
    """One listener and backend for the read-only searches (set up once per mode); on the node, over the corpus."""
    with _listening(request.param, request) as (running, prefix):
        backend = open_search(running.url, prefix=prefix, timeout=30, max_retries=0)
        if request.param == "node":
            backend.index([to_index_document(r) for r in corpus()])
        yield running, backend


def operations(listener: Listener) -> list[str]:
    return [c.operation.spec["x-operation-group"] if c.operation else "?" for c in listener.checks]


@pytest.mark.slow
def test_first_use_installs_the_template_and_an_aliased_index(listener, backend):
    assert backend.ping() is True
    run(backend)
    assert operations(listener) == ["ping", "indices.put_index_template", "indices.exists_alias", "indices.create",
                                    "search"]
    template = orjson.loads(listener.checks[1].body)
    assert template["template"] == load_template()["template"]  # settings and mappings of index_templates/
    assert orjson.loads(listener.checks[3].body) == {"aliases": {listener.prefix: {}}}
    assert listener.problems == []


@pytest.mark.slow
@pytest.mark.parametrize(("q", "extra"), [(q, extra) for q, extra, _ in QUERY_FORMS], ids=[f[0] for f in QUERY_FORMS])
def test_every_query_form_of_the_contract_suite(reader, q, extra):
    listener, backend = reader
    before = len(listener.checks)
    run(backend, q=q, size=100, **extra)
    assert operations(listener)[before:][-1:] == ["search"]
    assert listener.problems == []


@pytest.mark.parametrize("args", SEARCHES, ids=[orjson.dumps(a).decode() for a in SEARCHES])
def test_every_search_form_of_the_contract_suite(reader, args):
    listener, backend = reader
    before = len(listener.checks)
    run(backend, **args)
    assert operations(listener)[before:][-1:] == ["search"]
    assert listener.problems == []


def test_searches_ask_for_the_shard_request_cache(listener, backend):
    # OpenSearch caches a search with hits (size > 0) only when asked; a refresh that changes a shard drops that
    # shard's entries, so the cache never answers stale: the scaled shape's counterpart of the embedded result cache.
    run(backend, q="data", size=5, facets=["access_right"])
    searches = [c for c in listener.checks if c.operation and c.operation.spec["x-operation-group"] == "search"]
    assert searches and query_of(searches[-1]).get("request_cache") == "true"
    assert listener.problems == []


@OFFLINE
def test_cursor_pages_send_search_after(listener, backend):
    keys = [to_index_document(make_record(n))["sort_publication_date"] for n in (1, 2)]
    listener.answer_hits([{"_source": {"record": {"id": n}}, "sort": [k]} for n, k in zip((1, 2), keys, strict=True)],
                         total=5)
    page = run(backend, sort="publication_date", size=2)
    assert ids(page) == [1, 2] and page.total == 5 and page.next_cursor
    run(backend, sort="publication_date", size=2, cursor=page.next_cursor)
    body = orjson.loads(listener.checks[-1].body)
    assert body["search_after"] == [keys[1]] and "from" not in body
    assert listener.problems == []


def test_writes_reindex_and_swap(listener, backend):
    docs = [to_index_document(r) for r in corpus()]
    backend.index(docs)  # every document of the corpus against the mapping's field types
    backend.index([to_index_document(make_record(5, revision=2, metadata={"title": "日本語 テキスト"}))])
    backend.delete([5, 999])
    name = backend.create_new_index()
    assert backend.building()
    backend.index(docs[:2])  # written to the live index and the one being built
    assert backend.bulk_load(iter(docs), batch_size=16) == len(docs)
    backend.swap()
    assert not backend.building()
    assert listener.resolve(listener.prefix) == [name]
    groups = [c.operation.spec["x-operation-group"] for c in listener.checks]
    assert {"bulk", "indices.get_alias", "indices.create", "indices.refresh", "indices.update_aliases",
            "indices.delete"} <= set(groups)
    bulks = [c for c in listener.checks if c.operation.id.startswith("bulk")]
    assert {query_of(c).get("refresh") for c in bulks} == {"wait_for", "false"}
    assert listener.problems == []


@OFFLINE
def test_revision_listing_pages_with_search_after(listener, backend):
    page = [{"_source": {"recid": n, "revision": 1}, "sort": [n]} for n in range(1000)]
    listener.answer_hits(page, [{"_source": {"recid": 1000, "revision": 3}, "sort": [1000]}])
    revisions = backend.get_revisions()
    assert len(revisions) == 1001 and revisions[1000] == 3
    assert orjson.loads(listener.checks[-1].body)["search_after"] == [999]
    assert listener.problems == []


@pytest.mark.slow  # 0.4 s and more of work
@OFFLINE
def test_failures_travel_back_as_errors(listener, backend):
    run(backend)
    listener.fail_next(400, {"error": {"root_cause": [{"type": "parsing_exception", "reason": "bad"}],
                                       "type": "parsing_exception", "reason": "bad"}, "status": 400})
    with pytest.raises(BadRequest):
        run(backend, q="title:x")
    listener.fail_next(500, {"error": {"root_cause": [], "type": "exception", "reason": "boom"}, "status": 500})
    with pytest.raises(ServiceUnavailable):
        run(backend)
    listener.aliases.clear()  # the index is gone: OpenSearch answers 404 index_not_found_exception
    with pytest.raises(ServiceUnavailable, match="reindex"):
        run(backend)
    assert listener.problems == []


# --- the checker's strength: requests that are wrong on purpose -------------------------------------------
GOOD = {"query": {"bool": {"must": [{"match_phrase": {"title": {"query": "x"}}}]}}, "size": 10,
        "sort": [{"sort_mostrecent": {"order": "desc"}}],
        "aggs": {"type": {"terms": {"field": "resource_type.type", "size": 10},
                          "aggs": {"subtype": {"terms": {"field": "resource_type.subtype", "size": 20}}}}}}
WRONG = {
    "an unknown query": {"query": {"match_phrases": {"title": {"query": "x"}}}},
    "an unknown key of a known clause": {"query": {"bool": {"musts": [{"match_all": {}}]}}},
    "a misspelled key inside a leaf query": {"query": {"term": {"doi": {"valeu": "x"}}}},
    "an unknown aggregation": {"aggs": {"type": {"term": {"field": "resource_type.type"}}}},
    "a misspelled aggregation key": {"aggs": {"type": {"terms": {"field": "resource_type.type", "sise": 10}}}},
    "a misspelled key in a nested aggregation": {"aggs": {"t": {"terms": {"field": "a"}, "aggs": {
        "s": {"terms": {"field": "b", "min_doc_cnt": 1}}}}}},
    "a bad sort order": {"sort": [{"sort_mostrecent": {"order": "descending"}}]},
    "a wrong type": {"size": "ten"},
    "a wrong type in a query": {"query": {"bool": {"must": {"match_all": []}}}},
    "a bad calendar interval": {"aggs": {"y": {"date_histogram": {"field": "publication_date",
                                                                  "calendar_interval": "decade"}}}},
    "an unknown top-level key": {"query": {"match_all": {}}, "track_total_hit": True},
}


def test_the_good_body_passes():
    assert spec().check("POST", "/records/_search", orjson.dumps(GOOD), "application/json").problems == []


# The word each problem must name (so that a body fails for the intended reason, not another).
CULPRITS = {"an unknown query": "match_phrases", "an unknown key of a known clause": "musts",
            "a misspelled key inside a leaf query": "valeu", "an unknown aggregation": "'term'",
            "a misspelled aggregation key": "sise", "a misspelled key in a nested aggregation": "min_doc_cnt",
            "a bad sort order": "descending", "a wrong type": "ten", "a wrong type in a query": "match_all",
            "a bad calendar interval": "decade", "an unknown top-level key": "track_total_hit"}


@pytest.mark.parametrize("name", WRONG)
def test_wrong_bodies_fail_the_checker(name):
    problems = spec().check("POST", "/records/_search", orjson.dumps(WRONG[name]), "application/json").problems
    assert problems and CULPRITS[name] in problems[0], problems


@pytest.mark.parametrize(("method", "target", "body"), [
    ("POST", "/records/_search?sizes=3", b"{}"),  # an unknown query parameter
    ("POST", "/records/_search?track_total_hits=maybe", b"{}"),  # a value of the wrong type
    ("POST", "/_bulk?refresh=soon", b'{"delete": {"_index": "r", "_id": "1"}}\n'),
    ("POST", "/_bulk", b'{"delete": {"_index": "r", "_id": "1", "versions": 3}}\n'),  # unknown action key
    ("POST", "/_bulk", b'{"upsert": {"_index": "r", "_id": "1"}}\n{}\n'),  # unknown action
    ("POST", "/_aliases", b'{"actions": [{"swap": {"index": "a", "alias": "b"}}]}'),
    ("PUT", "/records-1", b'{"aliases": {"records": {}}, "setting": {}}'),
    ("PUT", "/_index_template/records", b'{"index_patterns": ["r-*"], "template": {"mapping": {}}}'),
    ("GET", "/records/_serch", b""),  # no such operation
])
def test_wrong_requests_fail_the_checker(method, target, body):
    assert spec().check(method, target, body, "application/json").problems


def test_wrong_documents_fail_through_the_wire(listener, backend):
    run(backend)
    client = backend.client
    index = listener.prefix
    bad = [{"index": {"_index": index, "_id": "1"}}, {"recid": "one", "revision": 1},
           {"index": {"_index": index, "_id": "2"}}, {"recid": 2, "titel": "unmapped"},
           {"index": {"_index": index, "_id": "3"}}, {"recid": 3, "publication_date": "01/02/2020"},
           {"index": {"_index": index, "_id": "4"}}, {"recid": 4, "locations.point": [{"lat": 99, "lon": 0}]},
           {"index": {"_index": index, "_id": "5"}}, {"recid": 5, "relations.version.is_last": "yes"}]
    from opensearchpy.exceptions import RequestError

    with pytest.raises(RequestError):
        client.bulk(body=bad)
    found = "\n".join(listener.checks[-1].problems)
    for expected in ("line 2 recid", "line 4", "titel", "line 6 publication_date", "line 8 locations.point",
                     "line 10 relations.version.is_last"):
        assert expected in found, expected
    with pytest.raises(RequestError):
        client.search(index=index, body=WRONG["a misspelled aggregation key"])
    assert "sise" in "\n".join(listener.checks[-1].problems)


# --- versions --------------------------------------------------------------------------------------------
@OFFLINE
def test_client_and_image_versions_are_in_the_specification_range(listener, backend):
    assert backend.ping()
    backend.index([to_index_document(make_record(1))])
    run(backend, q="title:x", facets="publication_date,type", page="2")
    backend.create_new_index()
    backend.bulk_load(iter([to_index_document(make_record(1))]))
    backend.swap()
    backend.delete([1])
    listener.answer_hits([{"_source": {"recid": 1, "revision": 1}, "sort": [1]}])
    backend.get_revisions()
    assert listener.problems == []
    # The image pinned in docker-compose.yml, the client's lower bound in pyproject.toml.
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    image = compose["services"]["opensearch"]["image"]
    server = version_tuple(image.rpartition(":")[2])
    assert len(server) == 3, f"pin an exact OpenSearch version, not {image}"
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    client = next(d for d in deps if d.startswith("opensearch-py"))
    low = version_tuple(re.search(r">=\s*([\d.]+)", client).group(1))
    import opensearchpy

    assert opensearchpy.VERSION >= low
    # The specification describes OpenSearch 1.0 up to the newest `x-version-added` it mentions.
    newest = max(version_tuple(v) for v in _versions_added())
    assert (1, 0) <= server <= newest + (99,)
    assert low[0] >= server[0], "opensearch-py's major version follows the server's (COMPATIBILITY.md)"
    # Every operation and parameter the backend used exists in the pinned server version and is not removed.
    for check in listener.checks:
        op = check.operation.spec
        assert version_tuple(op.get("x-version-added", "1.0")) <= server, check.operation.id
        assert "x-version-removed" not in op and "x-version-deprecated" not in op, check.operation.id


def _versions_added() -> Iterator[str]:
    stack: list[Any] = list(spec().docs.values())
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if "x-version-added" in item:
                yield str(item["x-version-added"])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
