"""`_exists_:<field>` for every field of the mapping, and the records `status` parameter, over HTTP (embedded
engine) and in the OpenSearch request body."""

from __future__ import annotations

import pytest
from helpers.factories import published
from werkzeug.datastructures import MultiDict

from repository.search.mapping import fields, load_template
from repository.search.opensearch.engine import search_body
from repository.search.params import parse_search_args

RECORDS = "/api/records/"
GRANT = [{"id": "10.13039/501100000780::283595"}]


def _object_paths(properties: dict, prefix: str = "") -> list[str]:
    out = []
    for name, spec in properties.items():
        if "properties" in spec:
            out.append(prefix + name)
            out.extend(_object_paths(spec["properties"], f"{prefix}{name}."))
    return out


def _hits(client, q: str) -> list[int]:  # type: ignore[no-untyped-def]
    response = client.get(RECORDS, query_string={"q": q})
    assert response.status_code == 200, response.json
    return sorted(h["id"] for h in response.json["hits"]["hits"])


def test_exists_on_objects_leaves_and_aliases(client, auth):
    funded = published(client, auth, title="Funded work", grants=GRANT, keywords=["k"])
    plain = published(client, auth, title="Unfunded work")
    both = sorted([funded["record_id"], plain["record_id"]])
    for q in ("_exists_:grants", "_exists_:metadata.grants", "_exists_:grants.code", "_exists_:grants.*",
              "_exists_:keywords", '_exists_:"grants"', "_exists_:grants AND title:work"):
        assert _hits(client, q) == [funded["record_id"]], q
    assert _hits(client, "NOT _exists_:grants") == [plain["record_id"]]
    for q in ("_exists_:creators", "_exists_:title", "_exists_:resource_type", "_exists_:record", "_exists_:doi"):
        assert _hits(client, q) == both, q
    assert _hits(client, "_exists_:journal") == []


def test_every_field_of_the_mapping_can_be_asked_for(client):
    template = load_template()["template"]["mappings"]["properties"]
    names = [*fields(), *_object_paths(template), *(n for n in template if n not in fields())]
    assert {"grants", "record", "journal"} <= set(names)
    response = client.get(RECORDS, query_string={"q": " OR ".join(f"_exists_:{name}" for name in names)})
    assert response.status_code == 200, response.json
    refused = client.get(RECORDS, query_string={"q": "_exists_:nosuchfield"})
    assert refused.status_code == 400 and refused.json["errors"][0]["field"] == "q"


def test_exists_in_the_opensearch_body():
    body = search_body(parse_search_args(MultiDict({"q": "_exists_:grants", "all_versions": "1"}), cursor_key=b"k"))
    should = body["query"]["bool"]["should"]
    assert {c["exists"]["field"] for c in should} == {"grants.code", "grants.acronym", "grants.title",
                                                      "grants.funder.doi", "grants.funder.name"}


@pytest.mark.slow  # 0.4 s and more of work
def test_status(client, auth):
    record = published(client, auth, title="Status check")
    assert _hits(client, "") == [record["record_id"]]
    assert client.get(RECORDS, query_string={"status": "published"}).json["hits"]["total"] == 1
    draft = client.get(RECORDS, query_string={"status": "draft"})
    assert draft.status_code == 200 and draft.json["hits"]["total"] == 0
    assert "status=draft" in draft.json["links"]["self"]
    for bad in ("bogus", "Published", "drafts"):
        response = client.get(RECORDS, query_string={"status": bad})
        assert response.status_code == 400, bad
        assert response.json["errors"][0]["field"] == "status"


@pytest.mark.parametrize("status", ["draft", "published"])
def test_status_in_the_opensearch_body(status):
    body = search_body(parse_search_args(MultiDict({"status": status}), cursor_key=b"k"))
    assert ({"match_none": {}} in body["query"]["bool"]["filter"]) == (status == "draft")
