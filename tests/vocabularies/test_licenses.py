"""Licenses over HTTP: ids through aliases and in any case, search with typos, paging and bad paging."""

from __future__ import annotations

import re

import pytest

from repository.records.lookups import DatabaseLookups

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$")


@pytest.fixture
def app(module_app):  # type: ignore[no-untyped-def]
    """Every test here only reads the built-in licenses: all of them ask the module's shared app."""
    return module_app


@pytest.fixture
def client(module_client):  # type: ignore[no-untyped-def]
    return module_client


def test_the_specification_default_license_is_a_resource(client):
    response = client.get("/api/licenses/cc-by")
    assert response.status_code == 200
    body = response.json
    assert body["id"] == "cc-by"
    assert body["metadata"] == {
        "id": "cc-by",
        "title": "Creative Commons Attribution 4.0 International",
        "url": "https://creativecommons.org/licenses/by/4.0/legalcode",
    }
    assert body["links"] == {"self": "https://localhost/api/licenses/cc-by"}
    assert TIMESTAMP.match(body["created"]) and TIMESTAMP.match(body["updated"])


@pytest.mark.parametrize(
    ("given", "canonical"),
    [
        ("cc-by", "cc-by"), ("CC-BY", "cc-by"), ("CC-BY-4.0", "cc-by"), ("cc-by-4.0", "cc-by"),
        ("cc-zero", "cc-zero"), ("CC0-1.0", "cc-zero"), ("cc-by-sa", "cc-by-sa"), ("CC-BY-NC-4.0", "cc-by-nc"),
        ("apache2.0", "Apache-2.0"), ("APACHE-2.0", "Apache-2.0"), ("mit-license", "MIT"), ("mit", "MIT"),
        ("other-open", "other-open"), ("notspecified", "notspecified"), ("CC-BY-3.0", "CC-BY-3.0"),
        ("cc-by/", "cc-by"),
    ],
)  # fmt: skip
def test_ids_resolve_through_aliases_and_case(client, given, canonical):
    """The canonical id answers the resource; an alias or another case redirects (301) to it, so that no URL
    answers a license whose id differs from the one asked for."""
    response = client.get(f"/api/licenses/{given}")
    if given.rstrip("/") == canonical:
        assert response.status_code == 200, given
    else:
        assert response.status_code == 301, given
        assert response.headers["Location"] == f"https://localhost/api/licenses/{canonical}"
        assert response.json["status"] == 301 and canonical in response.json["message"]
        response = client.get(f"/api/licenses/{given}", follow_redirects=True)
    assert response.json["id"] == canonical and response.json["metadata"]["id"] == canonical


def test_an_absorbed_spdx_id_is_not_a_second_record(client):
    hits = client.get("/api/licenses/?q=attribution 4.0 international&size=100").json["hits"]["hits"]
    ids = [hit["id"] for hit in hits]
    assert "cc-by" in ids and "CC-BY-4.0" not in ids


def test_unknown_license_is_404_with_an_error_object(client):
    response = client.get("/api/licenses/no-such-license")
    assert response.status_code == 404
    assert response.json["status"] == 404 and "no-such-license" in response.json["message"]


def test_lookups_give_the_canonical_id(app):
    with app.extensions["repository"].db.read() as conn:
        lookups = DatabaseLookups(conn)
        assert lookups.license_id("CC-BY-4.0") == "cc-by"
        assert lookups.license_id(" Cc-Zero ") == "cc-zero"
        assert lookups.license_id("gpl-3.0") == "GPL-3.0"
        assert lookups.license_id("nope") is None and lookups.license_id("") is None
        assert lookups.license("cc-by")["url"].startswith("https://creativecommons.org/")


def test_search_puts_the_license_named_exactly_first(client):
    for q, first in (("cc-by", "cc-by"), ("apache", "Apache-2.0"), ("MIT", "MIT")):
        hits = client.get(f"/api/licenses/?q={q}").json["hits"]["hits"]
        assert hits[0]["id"] == first, q


def test_search_matches_every_word_of_id_and_title(client):
    body = client.get("/api/licenses/?q=gnu general public 3.0&size=50").json
    ids = {hit["id"] for hit in body["hits"]["hits"]}
    assert {"GPL-3.0-only", "GPL-3.0-or-later"} <= ids
    assert all("general public" in hit["metadata"]["title"].lower() for hit in body["hits"]["hits"])
    assert body["hits"]["total"] == len(ids)


def test_search_tolerates_small_typos(client):
    assert client.get("/api/licenses/?q=apche").json["hits"]["hits"][0]["id"] == "Apache-2.0"
    hits = client.get("/api/licenses/?q=creative comons atribution&size=100").json["hits"]["hits"]
    assert "cc-by" in {hit["id"] for hit in hits}
    assert client.get("/api/licenses/?q=zzqxv").json["hits"] == {"hits": [], "total": 0}


def test_paging_walks_the_list_with_absolute_links(client):
    first = client.get("/api/licenses/?size=5").json
    total = first["hits"]["total"]
    assert total > 700 and len(first["hits"]["hits"]) == 5
    assert first["links"]["self"] == "https://localhost/api/licenses/?page=1&size=5"
    assert first["links"]["next"] == "https://localhost/api/licenses/?page=2&size=5" and "prev" not in first["links"]
    second = client.get(first["links"]["next"]).json
    assert second["links"]["prev"] == first["links"]["self"]
    assert {h["id"] for h in first["hits"]["hits"]}.isdisjoint(h["id"] for h in second["hits"]["hits"])
    last_page = -(-total // 5)
    last = client.get(f"/api/licenses/?size=5&page={last_page}").json
    assert "next" not in last["links"] and 1 <= len(last["hits"]["hits"]) <= 5
    beyond = client.get(f"/api/licenses/?size=5&page={last_page + 1}").json
    assert beyond["hits"] == {"hits": [], "total": total}


def test_links_keep_the_query(client):
    links = client.get("/api/licenses/?q=creative&size=2&access_token=").json["links"]
    assert links["next"] == "https://localhost/api/licenses/?q=creative&page=2&size=2"


@pytest.mark.parametrize(
    ("query", "fields"),
    [("page=0", ["page"]), ("page=-1", ["page"]), ("page=abc", ["page"]), ("size=0", ["size"]),
     ("size=1001", ["size"]), ("size=x&page=0", ["page", "size"]), ("page=" + "9" * 30, ["page"]),
     ("page=1_0", ["page"]), ("size=2.5", ["size"])],
)  # fmt: skip
def test_bad_paging_is_400_naming_the_parameter(client, query, fields):
    response = client.get(f"/api/licenses/?{query}")
    assert response.status_code == 400
    assert response.json["status"] == 400
    assert [error["field"] for error in response.json["errors"]] == fields


@pytest.mark.slow
def test_largest_page_size_is_accepted(client):
    body = client.get("/api/licenses/?size=1000").json
    assert len(body["hits"]["hits"]) == min(1000, body["hits"]["total"])
