"""An affiliation's ROR id, stored with its person as `affiliation_id`, reaches the exports that have a place for it
(and never the JSON clients read, which holds the specification's person keys only):
DataCite 4.5 XML (`affiliationIdentifier`, scheme ROR, valid against the kernel's schema), DataCite JSON, JSON-LD
and CodeMeta (the Organization's `@id`); MARC 21 gives the name alone (and stays valid). The API checks the id by
its check digits and wants the affiliation's name beside it."""

from __future__ import annotations

import json

import jsonschema
import pytest
from helpers.factories import make_deposit, published
from helpers.xsd import validate
from lxml import etree

MONASH = "https://ror.org/02bfwt286"
PEOPLE = [{"name": "Doe, Jane", "affiliation": "Monash University", "affiliation_id": "02bfwt286"},
          {"name": "Roe, Richard", "affiliation": "Alpine Institute"}]
DATACITE = "http://datacite.org/schema/kernel-4"


def _export(client, recid: int, accept: str) -> bytes:  # type: ignore[no-untyped-def]
    answer = client.get(f"/api/records/{recid}", headers={"Accept": accept})
    assert answer.status_code == 200, answer.get_data(as_text=True)
    return answer.get_data()


@pytest.mark.slow  # a whole walk through several requests: 0.4 s and more
def test_the_ror_id_is_exported_where_the_format_holds_it(client, auth):
    dep = published(client, auth, creators=PEOPLE, upload_type="software",
                    contributors=[{"name": "Moe, Mary", "type": "DataCurator", "affiliation": "Monash University",
                                   "affiliation_id": MONASH}])
    # The JSON clients read holds the specification's person keys only (strict client models break on others).
    assert dep["metadata"]["creators"][0] == {"name": "Doe, Jane", "affiliation": "Monash University"}
    assert "affiliation_id" not in dep["metadata"]["contributors"][0]
    recid = dep["record_id"]

    xml = _export(client, recid, "application/x-datacite+xml")
    validate(xml, "datacite4")
    tree = etree.fromstring(xml)
    affiliations = tree.findall(f".//{{{DATACITE}}}affiliation")
    assert [(a.text, dict(a.attrib)) for a in affiliations] == [
        ("Monash University", {"affiliationIdentifier": MONASH, "affiliationIdentifierScheme": "ROR",
                               "schemeURI": "https://ror.org"}),
        ("Alpine Institute", {}),
        ("Monash University", {"affiliationIdentifier": MONASH, "affiliationIdentifierScheme": "ROR",
                               "schemeURI": "https://ror.org"}),
    ]

    jsonld = json.loads(_export(client, recid, "application/ld+json"))
    assert jsonld["creator"][0]["affiliation"] == {"@type": "Organization", "@id": MONASH, "name": "Monash University"}
    assert jsonld["creator"][1]["affiliation"] == {"@type": "Organization", "name": "Alpine Institute"}
    codemeta = json.loads(_export(client, recid, 'application/ld+json; profile="https://w3id.org/codemeta/3.0"'))
    assert codemeta["author"][0]["affiliation"]["@id"] == MONASH

    marc = _export(client, recid, "application/marcxml+xml")
    validate(marc, "marc21")
    assert b"<subfield code=\"u\">Monash University</subfield>" in marc and MONASH.encode() not in marc

    for accept in ("application/json", "application/vnd.zenodo.v1+json"):
        shown = client.get(f"/api/records/{recid}", headers={"Accept": accept}).json
        assert shown["metadata"]["creators"][0] == {"name": "Doe, Jane", "affiliation": "Monash University"}
        assert "affiliation_id" not in shown["metadata"]["contributors"][0]
    found = client.get("/api/records/", query_string={"q": f"recid:{recid}"}).json["hits"]["hits"]
    assert found[0]["metadata"]["creators"][0] == {"name": "Doe, Jane", "affiliation": "Monash University"}


def test_a_wrong_ror_id_or_one_without_a_name_is_refused(client, auth):
    dep = make_deposit(client, auth)
    url = f"/api/deposit/depositions/{dep['id']}"
    wrong = client.put(url, json={"metadata": {"creators": [{"name": "Doe, Jane", "affiliation": "Monash",
                                                             "affiliation_id": "02bfwt287"}]}}, headers=auth)
    assert wrong.status_code == 400
    assert wrong.json["errors"] == [{"field": "metadata.creators.0.affiliation_id", "message":
                                     "Not a valid ROR identifier: expected an id like https://ror.org/02bfwt286 "
                                     "(or 02bfwt286)."}]
    alone = client.put(url, json={"metadata": {"creators": [{"name": "Doe, Jane", "affiliation_id": MONASH}]}},
                       headers=auth)
    assert alone.status_code == 400
    assert alone.json["errors"] == [{"field": "metadata.creators.0.affiliation",
                                     "message": "An affiliation's ROR id needs the affiliation's name too."}]
    assert client.get(url, headers=auth).json["metadata"]["creators"] == dep["metadata"]["creators"]


def test_the_metadata_json_schema_knows_the_affiliation_id(client):
    validator = jsonschema.Draft202012Validator(client.get("/schemas/deposit-metadata.json").json)
    named = {"name": "Doe, Jane", "affiliation": "Monash University", "affiliation_id": MONASH}
    base = {"title": "Tide gauges", "upload_type": "dataset", "description": "<p>Hourly sea levels.</p>"}
    assert validator.is_valid({**base, "creators": [named]})
    assert not validator.is_valid({**base, "creators": [{"name": "Doe, Jane", "affiliation_id": MONASH}]})
