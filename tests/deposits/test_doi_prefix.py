"""DOI_PREFIX / SANDBOX_DOI_PREFIX: new DOIs take the configured prefix, DOIs given out never change, DataCite needs a
prefix chosen explicitly, and "a DOI under our own prefix must be ours" follows the setting."""

from __future__ import annotations

import pytest
from helpers.factories import make_deposit, metadata, publish, published, upload
from helpers.http import https_client
from lxml import etree

from app import create_app
from repository.config import Settings, StartupError

API = "/api/deposit/depositions"
CSL = "application/vnd.citationstyles.csl+json"
DATACITE_NS = "{http://datacite.org/schema/kernel-4}"


def _client(make_settings, **overrides):  # type: ignore[no-untyped-def]
    app = create_app(make_settings(**overrides))
    return app, https_client(app)


def _datacite(client, recid: int) -> etree._Element:  # type: ignore[no-untyped-def]
    response = client.get(f"/api/records/{recid}", headers={"Accept": "application/x-registry+xml"})
    assert response.status_code == 200
    return etree.fromstring(response.data)


@pytest.mark.slow  # 0.4 s and more of work
def test_new_dois_take_the_configured_prefix(make_settings, make_token) -> None:  # type: ignore[no-untyped-def]
    app, client = _client(make_settings, DOI_PREFIX="10.12345", DOI_NAMESPACE="inst")
    auth = {"Authorization": f"Bearer {make_token()}"}
    dep = published(client, auth)
    assert dep["doi"] == f"10.12345/inst.{dep['id']}"
    assert dep["conceptdoi"] == f"10.12345/inst.{dep['conceptrecid']}"
    record = client.get(f"/api/records/{dep['id']}").json
    assert record["doi"] == dep["doi"] and record["conceptdoi"] == dep["conceptdoi"]
    identifier = _datacite(client, dep["id"]).find(f"{DATACITE_NS}identifier")
    assert identifier.text == dep["doi"]
    reserved = make_deposit(client, auth, prereserve_doi=True)
    assert reserved["metadata"]["prereserve_doi"]["doi"] == f"10.12345/inst.{reserved['id']}"
    app.extensions["repository"].db.dispose()


def test_sandbox_prefix_is_a_setting(make_settings, make_token) -> None:  # type: ignore[no-untyped-def]
    _, client = _client(make_settings, SANDBOX=True, SANDBOX_DOI_PREFIX="10.80001")
    dep = published(client, {"Authorization": f"Bearer {make_token()}"})
    assert dep["doi"].startswith("10.80001/")


@pytest.mark.slow
def test_a_changed_prefix_leaves_existing_dois(make_settings, make_token) -> None:  # type: ignore[no-untyped-def]
    before_app, before = _client(make_settings)  # the default prefix
    auth = {"Authorization": f"Bearer {make_token()}"}
    old = published(before, auth)
    reserved = make_deposit(before, auth, prereserve_doi=True)
    reserved_doi = reserved["metadata"]["prereserve_doi"]["doi"]
    old_datacite = etree.tostring(_datacite(before, old["id"]))
    old_csl = before.get(f"/api/records/{old['id']}", headers={"Accept": CSL}).json
    assert old_csl["publisher"] == "Research Repository"
    assert old["doi"].startswith("10.5281/") and reserved_doi.startswith("10.5281/")
    before_app.extensions["repository"].db.dispose()

    # "Restart" with another prefix on the same database and index.
    _, after = _client(make_settings, DOI_PREFIX="10.12345")
    record = after.get(f"/api/records/{old['id']}").json
    assert (record["doi"], record["conceptdoi"]) == (old["doi"], old["conceptdoi"])
    assert after.get(f"{API}/{old['id']}", headers=auth).json["doi"] == old["doi"]
    # Still the service's own DOI, published by the service.
    assert etree.tostring(_datacite(after, old["id"])) == old_datacite
    assert after.get(f"/api/records/{old['id']}", headers={"Accept": CSL}).json == old_csl
    hits = after.get("/api/records/", query_string={"q": f'doi:"{old["doi"]}"'}).json["hits"]["hits"]
    assert [hit["id"] for hit in hits] == [old["id"]]

    # A reserved DOI cannot change: it is shown, accepted when echoed, and published as reserved.
    shown = after.get(f"{API}/{reserved['id']}", headers=auth).json
    assert shown["metadata"]["prereserve_doi"]["doi"] == reserved_doi
    echoed = after.put(f"{API}/{reserved['id']}", json={"metadata": shown["metadata"] | {"doi": reserved_doi}},
                       headers=auth)  # fmt: skip
    assert echoed.status_code == 200, echoed.json
    upload(after, auth, reserved)
    assert publish(after, auth, reserved)["doi"] == reserved_doi

    # A new version of the old record is a new DOI (new prefix); its concept DOI stays.
    response = after.post(f"{API}/{old['id']}/actions/newversion", headers=auth)
    draft_id = int(response.json["links"]["latest_draft"].rsplit("/", 1)[1])
    draft = after.get(f"{API}/{draft_id}", headers=auth).json
    assert draft["metadata"]["prereserve_doi"]["doi"] == f"10.12345/repository.{draft_id}"
    after.delete(f"{API}/{draft_id}/files/{draft['files'][0]['id']}", headers=auth)
    upload(after, auth, draft, content=b"a,b\n3,4\n")
    second = publish(after, auth, draft)
    assert second["doi"] == f"10.12345/repository.{draft_id}"
    assert second["conceptdoi"] == old["conceptdoi"]

    new = published(after, auth)
    assert new["doi"].startswith("10.12345/") and new["conceptdoi"].startswith("10.12345/")


def test_external_doi_rules_follow_the_prefix(make_settings, make_token) -> None:  # type: ignore[no-untyped-def]
    _, client = _client(make_settings, DOI_PREFIX="10.12345", SANDBOX_DOI_PREFIX="10.80001")
    auth = {"Authorization": f"Bearer {make_token()}"}
    response = client.post(API, json={"metadata": metadata(doi="10.12345/somebody.1")}, headers=auth)
    assert response.status_code == 400
    assert response.json["errors"] == [
        {"field": "metadata.doi", "message": "The prefix 10.12345 is administrated locally."}
    ]
    # The specification's prefix is another registrant's now: a DOI under it is an external DOI.
    dep = make_deposit(client, auth, doi="10.5281/zenodo.1234")
    upload(client, auth, dep)
    assert publish(client, auth, dep)["doi"] == "10.5281/zenodo.1234"
    for test_doi in ("10.80001/test.1", "10.5072/test.1"):  # the test instance's prefix, and the generic one
        response = client.post(API, json={"metadata": metadata(doi=test_doi)}, headers=auth)
        assert response.status_code == 400
        assert response.json["errors"][0]["message"].startswith(f"The prefix {test_doi[:-7]} is invalid.")


def test_datacite_refuses_the_default_prefix() -> None:
    account = {"REGISTRAR": "datacite", "DATACITE_USERNAME": "REPO.X", "DATACITE_PASSWORD": "pw"}
    with pytest.raises(StartupError, match="DOI_PREFIX is required when REGISTRAR=datacite") as raised:
        Settings.from_env(account)
    assert "belongs to another DOI registrant" in str(raised.value)
    with pytest.raises(StartupError, match="SANDBOX_DOI_PREFIX is required"):
        Settings.from_env(account | {"SANDBOX": "true", "DOI_PREFIX": "10.12345"})
    assert Settings.from_env(account | {"DOI_PREFIX": "10.12345"}).doi_prefix == "10.12345"
    # Set explicitly, even to the specification's value: the operator says it is theirs.
    assert Settings.from_env(account | {"DOI_PREFIX": "10.5281"}).doi_prefix == "10.5281"
    assert Settings.from_env({"DOI_PREFIX": " 10.1000.5 "}).doi_prefix == "10.1000.5"
    assert Settings.from_env({}).doi_prefix == "10.5281"  # the local registrar needs nothing


@pytest.mark.parametrize("value", ["10.", "11.1234", "10.12a", "10.1234/x", "10..5", "", "doi:10.1234"])
@pytest.mark.parametrize("name", ["DOI_PREFIX", "SANDBOX_DOI_PREFIX"])
def test_malformed_prefixes_stop_start_up(name: str, value: str) -> None:
    with pytest.raises(StartupError, match=name):
        Settings.from_env({name: value})
    with pytest.raises(StartupError, match=name):
        Settings.build(**{name: value})
