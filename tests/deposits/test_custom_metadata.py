"""Custom metadata (`metadata.custom`): validated with dotted paths, stored, shown, indexed, rendered, and found by
the records search's `custom` filter."""

from __future__ import annotations

import pytest
from helpers.factories import make_deposit, metadata, publish, published, upload
from helpers.xsd import validate
from lxml import etree

API = "/api/deposit/depositions"
CAT = {
    "dwc:genus": ["Felis"],
    "dwc:family": ["Felidae"],
    "obo:RO_0002453": [{"subject": ["Felis catus"], "object": ["Ctenocephalides felis"]}],
}


def _found(client, *filters: str) -> list[int]:  # type: ignore[no-untyped-def]
    response = client.get("/api/records/", query_string=[("custom", f) for f in filters])
    assert response.status_code == 200, response.json
    return [hit["id"] for hit in response.json["hits"]["hits"]]


@pytest.mark.slow
def test_custom_metadata_is_stored_shown_and_found(client, auth) -> None:  # type: ignore[no-untyped-def]
    dep = make_deposit(client, auth, custom={**CAT, "dwc:genus": [" Felis ", ""]})
    assert dep["metadata"]["custom"] == CAT  # trimmed, blanks dropped
    assert client.get(f"{API}/{dep['id']}", headers=auth).json["metadata"]["custom"] == CAT
    upload(client, auth, dep)
    done = publish(client, auth, dep)
    assert done["metadata"]["custom"] == CAT
    dog = published(client, auth, title="Dog study", custom={"dwc:genus": ["Canis"]})
    plain = published(client, auth, title="No custom metadata")

    record = client.get(f"/api/records/{done['id']}").json
    assert record["metadata"]["custom"] == CAT
    legacy = client.get(f"/api/records/{done['id']}", headers={"Accept": "application/json"}).json
    assert legacy["metadata"]["custom"] == CAT  # deposit-shaped: can be sent back as it is

    assert _found(client, "[dwc:genus]:[Felis]") == [done["id"]]
    assert _found(client, "[dwc:genus]:[felis]") == [done["id"]]  # terms match case-insensitively
    assert _found(client, "[dwc:genus]:Canis") == [dog["id"]]
    assert _found(client, "[obo:RO_0002453]:[Felis catus:Ctenocephalides felis]") == [done["id"]]
    assert _found(client, "[dwc:genus]:[Felis]", "[dwc:family]:[Felidae]") == [done["id"]]
    assert _found(client, "[dwc:genus]:[Panthera]") == []
    assert plain["id"] not in _found(client, "[dwc:family]:[Felidae]")

    # DataCite has a place for Darwin Core terms: subjects with the term as scheme.
    xml = client.get(f"/api/records/{done['id']}", headers={"Accept": "application/x-registry+xml"}).data
    ns = {"d": "http://datacite.org/schema/kernel-4"}
    subject = etree.fromstring(xml).find("d:subjects/d:subject[@subjectScheme='dwc:genus']", ns)
    assert subject is not None and subject.text == "Felis"
    assert subject.get("schemeURI") == "http://rs.tdwg.org/dwc/terms/genus"
    validate(xml, "datacite4")
    xml3 = client.get(f"/api/records/{done['id']}", headers={"Accept": "application/x-registry-v3+xml"}).data
    validate(xml3, "datacite3")
    assert b'subjectScheme="dwc:genus"' in xml3


def test_custom_metadata_changes_in_an_edit_reach_the_filter(client, auth) -> None:  # type: ignore[no-untyped-def]
    dep = published(client, auth, custom={"dwc:genus": ["Felis"]})
    url = f"{API}/{dep['id']}"
    assert client.post(f"{url}/actions/edit", headers=auth).status_code == 201
    changed = {**dep["metadata"], "custom": {"dwc:genus": ["Lynx"]}}
    assert client.put(url, json={"metadata": changed}, headers=auth).status_code == 200
    publish(client, auth, dep)
    assert _found(client, "[dwc:genus]:[Lynx]") == [dep["id"]]
    assert _found(client, "[dwc:genus]:[Felis]") == []


@pytest.mark.slow
def test_bad_custom_metadata_is_a_400_with_dotted_paths(client, auth) -> None:  # type: ignore[no-untyped-def]
    dep = make_deposit(client, auth, custom={"dwc:genus": ["Felis"]})
    url = f"{API}/{dep['id']}"
    bad = {
        "dwc:color": ["red"],
        "dwc:genus": ["Felis", 7],
        "dwc:family": "Felidae",
        "dwc:order": [],
        "obo:RO_0002453": [{"subject": ["Felis catus"]}, "a:b"],
    }
    response = client.put(url, json={"metadata": metadata(custom=bad)}, headers=auth)
    assert response.status_code == 400
    assert response.json["status"] == 400 and response.json["message"]
    fields = {error["field"]: error["message"] for error in response.json["errors"]}
    assert set(fields) == {
        "metadata.custom.dwc:color",
        "metadata.custom.dwc:genus.1",
        "metadata.custom.dwc:family",
        "metadata.custom.dwc:order",
        "metadata.custom.obo:RO_0002453.0.object",
        "metadata.custom.obo:RO_0002453.1",
    }
    assert "dwc:genus" in fields["metadata.custom.dwc:color"]  # names the supported terms
    assert fields["metadata.custom.dwc:genus.1"] == "Not a valid string."
    assert "array" in fields["metadata.custom.dwc:family"]
    assert fields["metadata.custom.dwc:order"] == 'No values were provided for term "dwc:order".'

    response = client.put(url, json={"metadata": metadata(custom=["dwc:genus"])}, headers=auth)
    assert response.status_code == 400
    assert [e["field"] for e in response.json["errors"]] == ["metadata.custom"]
    response = client.post(API, json={"metadata": metadata(custom={"dwc:genus": "Felis"})}, headers=auth)
    assert response.status_code == 400
    assert [e["field"] for e in response.json["errors"]] == ["metadata.custom.dwc:genus"]

    # Nothing changed: the deposit still holds what it had, and no deposit was created by the failed POST.
    assert client.get(url, headers=auth).json["metadata"]["custom"] == {"dwc:genus": ["Felis"]}
    assert [d["id"] for d in client.get(API, headers=auth).json] == [dep["id"]]


def test_custom_metadata_can_be_removed(client, auth) -> None:  # type: ignore[no-untyped-def]
    dep = make_deposit(client, auth, custom={"dwc:genus": ["Felis"]})
    url = f"{API}/{dep['id']}"
    for empty in (None, {}, {"dwc:genus": None}):
        response = client.put(url, json={"metadata": metadata(custom=empty)}, headers=auth)
        assert response.status_code == 200, response.json
        assert "custom" not in response.json["metadata"]
