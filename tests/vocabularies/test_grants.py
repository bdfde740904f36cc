"""Grants over HTTP and the grant id rules deposits follow."""

from __future__ import annotations

import pytest

from repository.records.lookups import DatabaseLookups
from repository.vocabularies.grants import validate_grant_ids

EC = "10.13039/501100000780"
NSF = "10.13039/100000001"


def test_an_ec_grant_by_funder_and_code(client):
    response = client.get(f"/api/grants/{EC}::283595")
    assert response.status_code == 200
    body = response.json
    assert body["id"] == f"{EC}::283595"
    metadata = body["metadata"]
    assert metadata["code"] == "283595" and metadata["acronym"] == "OPENAIREPLUS" and metadata["program"] == "FP7"
    assert metadata["startdate"] == "2011-12-01" and metadata["enddate"] == "2014-05-31"
    assert metadata["funder"]["name"] == "European Commission" and metadata["funder"]["acronyms"] == ["EC"]
    assert metadata["identifiers"] == {"eurepo": "info:eu-repo/grantAgreement/EC/FP7/283595/"}
    assert body["links"]["self"] == f"https://localhost/api/grants/{EC}::283595"


def test_a_bare_code_is_an_ec_grant(client):
    assert client.get("/api/grants/643410").json["metadata"]["acronym"] == "OpenAIRE2020"


def test_codes_with_slashes_and_spaces(client):
    body = client.get("/api/grants/10.13039/501100000690::EP/K039695/1").json
    assert body["metadata"]["funder"]["acronyms"] == ["RCUK"]
    assert client.get(body["links"]["self"]).status_code == 200
    spaced = client.get("/api/grants/10.13039/501100002428::P%2027625").json
    assert spaced["links"]["self"] == "https://localhost/api/grants/10.13039/501100002428::P%2027625"


@pytest.mark.parametrize("grant_id", [f"{EC}::000000", "999999", f"{NSF}::283595", "10.13039/1::1"])
def test_unknown_grant_is_404(client, grant_id):
    response = client.get(f"/api/grants/{grant_id}")
    assert response.status_code == 404 and grant_id in response.json["message"]


def test_search_by_funder_acronym_or_doi_and_words(client):
    ec = client.get("/api/grants/?funder=ec&size=100").json
    assert ec["hits"]["total"] >= 10 and {hit["metadata"]["funder"]["doi"] for hit in ec["hits"]["hits"]} == {EC}
    assert {"FP7", "H2020"} <= {hit["metadata"]["program"] for hit in ec["hits"]["hits"]}
    nsf = client.get(f"/api/grants/?funder={NSF}").json
    assert nsf["hits"]["total"] >= 2 and all(hit["id"].startswith(NSF + "::") for hit in nsf["hits"]["hits"])
    openaire = client.get("/api/grants/?q=open access infrastructure").json["hits"]["hits"]
    assert {hit["metadata"]["code"] for hit in openaire} == {"246686", "283595", "643410"}
    assert client.get("/api/grants/?q=openaire&funder=NSF").json["hits"]["total"] == 0
    assert client.get("/api/grants/?funder=nobody").json["hits"]["total"] == 0


def test_grant_paging(client):
    body = client.get("/api/grants/?size=7&page=2").json
    assert len(body["hits"]["hits"]) == 7 and body["hits"]["total"] >= 40
    assert body["links"]["prev"].endswith("page=1&size=7") and body["links"]["next"].endswith("page=3&size=7")
    assert client.get("/api/grants/?page=0").json["errors"][0]["field"] == "page"


def test_grant_id_rules(app):
    ids = [
        "283595",  # bare: a European Commission grant
        f"{EC}::643410",
        f"{NSF}::1148698",
        "999999",  # bare and unknown
        "10.13039/501100009999::1",  # funder not accepted
        f"{NSF}::",  # no code
        f"{NSF}::283595",  # accepted funder, unknown grant
        "https://doi.org/10.13039/100000001::1541450",  # funder DOI as a URL
    ]
    with app.extensions["repository"].db.read() as conn:
        errors = validate_grant_ids(conn, ids)
    assert errors == [
        {"field": "grants.3.id", "message": "Unknown grant: 999999."},
        {"field": "grants.4.id", "message": errors[1]["message"]},
        {"field": "grants.5.id", "message": "Not a valid grant id: the grant code is missing."},
        {"field": "grants.6.id", "message": f"Unknown grant: {NSF}::283595."},
    ]
    assert "10.13039/501100009999" in errors[1]["message"] and "Not an accepted funder" in errors[1]["message"]


def test_lookups_grant_with_its_funder(app):
    with app.extensions["repository"].db.read() as conn:
        lookups = DatabaseLookups(conn)
        assert lookups.grant(EC, "283595") == {
            "code": "283595",
            "title": "2nd-Generation Open Access Infrastructure for Research in Europe",
            "acronym": "OPENAIREPLUS",
            "program": "FP7",
            "funder": {"doi": EC, "name": "European Commission", "acronyms": ["EC"]},
        }
        assert lookups.grant(NSF, "283595") is None
