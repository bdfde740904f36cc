"""The per-process search result cache: repeated searches answer the same, and any commit (here or in another
process) makes the next search see the new index."""

import pytest
from helpers.factories import publish, published
from helpers.search import run

from repository.search.documents import to_index_document
from repository.search.open import open_search

from .factories import make_record

API = "/api/deposit/depositions"
FORMATS = ("v1", "json", "bibtex", "datacite", "marcxml", "dc", "csl", "jsonld")


@pytest.mark.slow
def test_repeated_searches_answer_the_same_in_every_format(client, auth):
    published(client, auth, title="Cached answers about moorland", keywords=["moorland"])
    published(client, auth, title="Another moorland study")
    for fmt in FORMATS:
        bodies = {client.get(f"/api/records/?q=moorland&size=20&format={fmt}").data for _ in range(3)}
        assert len(bodies) == 1, fmt  # a shared cached result must never be changed by a rendering
    first = client.get("/api/records/?q=moorland&facets=keywords").json
    assert first["hits"]["total"] == 2
    assert first == client.get("/api/records/?q=moorland&facets=keywords").json


def test_publish_and_edit_are_seen_by_the_next_identical_search(client, auth):
    assert client.get("/api/records/?q=heathland").json["hits"]["total"] == 0
    dep = published(client, auth, title="Heathland survey")
    found = client.get("/api/records/?q=heathland").json
    assert found["hits"]["total"] == 1 and found["hits"]["hits"][0]["metadata"]["title"] == "Heathland survey"

    url = f"{API}/{dep['id']}"
    edited = client.post(f"{url}/actions/edit", headers=auth).json
    client.put(url, json={"metadata": {**edited["metadata"], "title": "Heathland survey, revised"}}, headers=auth)
    publish(client, auth, dep)
    again = client.get("/api/records/?q=heathland").json
    assert again["hits"]["hits"][0]["metadata"]["title"] == "Heathland survey, revised"


def test_a_commit_by_another_process_invalidates(tmp_path):
    reader = open_search(f"embedded://{tmp_path}/index", cache_entries=16)
    writer = open_search(f"embedded://{tmp_path}/index", cache_entries=0)  # as another process would
    assert run(reader, q="fen").total == 0
    for recid in (1, 2):
        writer.index([to_index_document(make_record(recid, metadata={"title": "Fen"}))])
        assert run(reader, q="fen").total == recid


def test_cache_can_be_switched_off(tmp_path):
    backend = open_search(f"embedded://{tmp_path}/index", cache_entries=0)
    backend.index([to_index_document(make_record(1, metadata={"title": "Bog"}))])
    assert run(backend, q="bog") is not run(backend, q="bog")
    cached = open_search(f"embedded://{tmp_path}/index", cache_entries=4)
    assert run(cached, q="bog") is run(cached, q="bog")
    assert run(cached, q="bog").total == 1
