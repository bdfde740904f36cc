"""`/api/vocabularies/`: the pickers' suggestions as one types — licenses (common first), languages by name,
organisations of the loaded ROR dump, the people the caller named before — with cache headers, a 304 for the same
answer, the rate limits of the rest of the API, and a clear 400 for bad parameters."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.factories import make_deposit, published
from helpers.http import https_client

from app import create_app
from repository.cli import COMMANDS, invoke

SAMPLE = str(Path(__file__).parent.parent / "data" / "ror" / "ror-sample-v2.json")
ORCID = "0000-0002-1825-0097"


@pytest.fixture
def organisations(settings):  # type: ignore[no-untyped-def]
    assert invoke(COMMANDS["load-ror"], [SAMPLE, "--quiet"], settings) == 0


def _ids(response) -> list[str]:  # type: ignore[no-untyped-def]
    assert response.status_code == 200, response.json
    return [hit["id"] for hit in response.json["hits"]]


def test_licenses_common_first_and_the_one_named_exactly_first(client):
    assert _ids(client.get("/api/vocabularies/licenses?size=7")) == [
        "cc-by", "cc-zero", "cc-by-sa", "MIT", "Apache-2.0", "GPL-3.0-or-later", "BSD-3-Clause"]
    assert _ids(client.get("/api/vocabularies/licenses?q=mit"))[0] == "MIT"
    creative = _ids(client.get("/api/vocabularies/licenses?q=creative commons attribution&size=3"))
    assert creative == ["cc-by", "cc-by-sa", "CC-BY-1.0"]
    hit = client.get("/api/vocabularies/licenses?q=Apache License 2.0").json["hits"][0]
    assert hit == {"id": "Apache-2.0", "title": "Apache License 2.0", "url": "https://spdx.org/licenses/Apache-2.0.html"}


def test_languages_by_name(client):
    assert client.get("/api/vocabularies/languages?q=engl&size=1").json["hits"] == [{"id": "eng", "name": "English"}]
    assert _ids(client.get("/api/vocabularies/languages?q=ger"))[0] == "deu"
    assert _ids(client.get("/api/vocabularies/languages?q=fra"))[0] == "fra"
    assert client.get("/api/vocabularies/languages?q=klingonish").json == {"hits": [], "total": 0}


def test_affiliations_from_ror_by_name_acronym_and_id(client, organisations):
    body = client.get("/api/vocabularies/affiliations?q=queensland").json
    assert body["total"] == 2
    assert [hit["name"] for hit in body["hits"]] == ["Central Queensland University", "University of Queensland"]
    assert body["hits"][1] == {"id": "https://ror.org/00rqy9422", "name": "University of Queensland",
                               "acronyms": ["UQ"], "aliases": [], "country": "AU", "status": "active"}
    assert _ids(client.get("/api/vocabularies/affiliations?q=UQ"))[0] == "https://ror.org/00rqy9422"
    assert _ids(client.get("/api/vocabularies/affiliations?q=02bfwt286")) == ["https://ror.org/02bfwt286"]
    assert _ids(client.get("/api/vocabularies/affiliations?q=RMIT&size=1")) == ["https://ror.org/04ttjf776"]


def test_without_a_dump_loaded_there_is_nothing_to_suggest(client):
    assert client.get("/api/vocabularies/affiliations?q=monash").json == {"hits": [], "total": 0}


def test_answers_are_cached_and_revalidated(client, organisations):
    first = client.get("/api/vocabularies/affiliations?q=monash")
    assert first.headers["Cache-Control"] == "public, max-age=300"
    etag = first.headers["ETag"]
    again = client.get("/api/vocabularies/affiliations?q=monash", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.get_data() == b""
    other = client.get("/api/vocabularies/affiliations?q=deakin", headers={"If-None-Match": etag})
    assert other.status_code == 200 and other.headers["ETag"] != etag


@pytest.mark.parametrize("query", ["size=0", "size=51", "size=ten", "q=" + "x" * 201])
def test_bad_parameters_are_a_400_naming_them(client, query):
    response = client.get(f"/api/vocabularies/affiliations?{query}")
    assert response.status_code == 400
    assert response.json["errors"][0]["field"] == query.split("=")[0]
    assert response.json["message"] == "Invalid parameters."


def test_creators_are_the_people_the_caller_named_before(client, auth, make_token):
    make_deposit(client, auth, creators=[
        {"name": "Doe, Jane", "orcid": ORCID, "affiliation": "Monash University",
         "affiliation_id": "https://ror.org/02bfwt286"},
        {"name": "Roe, Richard"}])
    make_deposit(client, auth, creators=[{"name": "Doe, Jane", "orcid": ORCID}])
    assert client.get("/api/vocabularies/creators?q=doe").status_code == 401  # a guest
    body = client.get("/api/vocabularies/creators?q=doe", headers=auth).json
    assert body["hits"] == [{"name": "Doe, Jane", "orcid": ORCID}]  # named twice; the latest as given
    assert [p["name"] for p in client.get("/api/vocabularies/creators", headers=auth).json["hits"]] == [
        "Doe, Jane", "Roe, Richard"]
    assert client.get("/api/vocabularies/creators?q=monash", headers=auth).json["hits"] == [
        {"name": "Doe, Jane", "orcid": ORCID, "affiliation": "Monash University",
         "affiliation_id": "https://ror.org/02bfwt286"}]
    answer = client.get("/api/vocabularies/creators?q=doe", headers=auth)
    assert answer.headers["Cache-Control"] == "private, max-age=300"
    assert {"Cookie", "Authorization"} <= set(answer.vary)
    other = {"Authorization": f"Bearer {make_token('other@example.org')}"}
    assert client.get("/api/vocabularies/creators?q=doe", headers=other).json == {"hits": [], "total": 0}


def test_suggestions_count_against_the_rate_limits(make_settings):
    client = https_client(create_app(make_settings(RATELIMIT_GUEST="3/minute")))
    answers = [client.get("/api/vocabularies/languages?q=en").status_code for _ in range(4)]
    assert answers == [200, 200, 200, 429]


def test_grants_are_found_by_their_funder_name_acronym_and_number(client):
    by_funder = client.get("/api/grants/?q=european commission openaire&size=50").json["hits"]["hits"]
    assert {hit["id"] for hit in by_funder} >= {"10.13039/501100000780::246686", "10.13039/501100000780::283595"}
    assert all(hit["metadata"]["funder"]["name"] == "European Commission" for hit in by_funder)
    assert [h["id"] for h in client.get("/api/grants/?q=283595").json["hits"]["hits"]] == ["10.13039/501100000780::283595"]
    assert client.get("/api/grants/?q=EC OPENAIREPLUS").json["hits"]["hits"][0]["id"] == "10.13039/501100000780::283595"


def test_creators_of_public_records_are_suggested_after_the_callers_own(client, auth, make_token):
    published(client, auth, creators=[{"name": "Lovelace, Ada", "orcid": ORCID, "affiliation": "Analytical Society"},
                                      {"name": "Babbage, Charles"}])
    make_deposit(client, auth, creators=[{"name": "Lovell, Bernard"}])  # a draft: its people are the owner's only
    other = {"Authorization": f"Bearer {make_token('other@example.org')}"}
    make_deposit(client, other, creators=[{"name": "Lovejoy, Owen"}])

    def names(q: str, headers: dict) -> list[str]:
        answer = client.get("/api/vocabularies/creators", query_string={"q": q}, headers=headers)
        assert answer.status_code == 200, answer.json
        return [p["name"] for p in answer.json["hits"]]

    assert names("lov", other) == ["Lovejoy, Owen", "Lovelace, Ada"]  # the caller's own first, then public ones
    assert names("lovelace a", other) == ["Lovelace, Ada"]  # the last word as it is being typed
    assert names("lov", auth) == ["Lovell, Bernard", "Lovelace, Ada"]
    found = client.get("/api/vocabularies/creators", query_string={"q": "ada lovel"}, headers=other).json["hits"]
    assert found == [{"name": "Lovelace, Ada", "affiliation": "Analytical Society", "orcid": ORCID}]
    assert names("turing", other) == [] and names('"(', other) == []
