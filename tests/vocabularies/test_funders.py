"""Funders over HTTP: the specification's 17 funder DOIs, look-up by DOI (with its slash) and search."""

from __future__ import annotations

from repository.vocabularies.terms import FUNDER_DOIS


def test_every_accepted_funder_is_known(client):
    body = client.get("/api/funders/?size=100").json
    assert body["hits"]["total"] == len(body["hits"]["hits"]) >= 17
    known = {hit["id"] for hit in body["hits"]["hits"]}
    assert set(FUNDER_DOIS) <= known
    assert all(hit["metadata"]["name"] and len(hit["metadata"]["country"]) == 2 for hit in body["hits"]["hits"])


def test_a_funder_by_its_doi(client):
    response = client.get("/api/funders/10.13039/501100000780")
    assert response.status_code == 200
    body = response.json
    assert body["id"] == "10.13039/501100000780"
    assert body["metadata"] == {
        "doi": "10.13039/501100000780",
        "name": "European Commission",
        "acronyms": ["EC"],
        "country": "BE",
        "type": "gov",
    }
    assert body["links"]["self"] == "https://localhost/api/funders/10.13039/501100000780"
    assert client.get("/api/funders/10.13039/501100000780/").json == body
    nsf = client.get("/api/funders/https://doi.org/10.13039/100000001").json
    assert nsf["metadata"]["name"] == "National Science Foundation" and nsf["metadata"]["country"] == "US"


def test_unknown_funder_is_404(client):
    for doi in ("10.13039/999", "not-a-doi"):
        response = client.get(f"/api/funders/{doi}")
        assert response.status_code == 404 and response.json["status"] == 404


def test_search_by_acronym_name_country_and_with_a_typo(client):
    def names(q: str) -> list[str]:
        return [hit["metadata"]["name"] for hit in client.get(f"/api/funders/?q={q}").json["hits"]["hits"]]

    assert names("NSF")[0] == "National Science Foundation"  # then SNSF, which contains it
    assert names("national health") == ["National Health and Medical Research Council", "National Institutes of Health"]
    assert set(names("au")) >= {"Australian Research Council", "National Health and Medical Research Council"}
    assert names("wellcom trust") == ["Wellcome Trust"]
    assert client.get("/api/funders/?size=0").status_code == 400
