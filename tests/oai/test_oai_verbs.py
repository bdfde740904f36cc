"""Identify, ListMetadataFormats, ListSets and GetRecord over HTTP (GET and form POST), each response schema-valid."""

from __future__ import annotations

from datetime import datetime

import pytest
from helpers.bulk_records import deposit_metadata, insert_records, make_community, take_down
from helpers.factories import published
from helpers.http import https_client
from helpers.oai_client import CANONICAL, HOST, NS, PREFIXES, Oai
from lxml import etree

from repository.accounts import tokens
from repository.metadata import validate_for_publish
from repository.records.lookups import DatabaseLookups

T0 = datetime(2024, 3, 1, 12, 0, 0)


def test_identify(oai: Oai, db, settings):
    insert_records(db, settings, 3, T0)
    reply = oai.get(verb="Identify")
    assert reply.status == 200 and reply.error is None
    assert reply.request_attributes == {"verb": "Identify"}
    assert reply.one("/o:OAI-PMH/o:request/text()") == f"https://{HOST}/oai2d"
    identify = reply.one("//o:Identify")
    values = {e.tag.split("}")[1]: e.text for e in identify if e.text}
    assert values == {
        "repositoryName": "Research Repository", "baseURL": f"https://{HOST}/oai2d", "protocolVersion": "2.0",
        "adminEmail": "admin@example.org", "earliestDatestamp": "2024-03-01T12:00:00Z",
        "deletedRecord": "persistent", "granularity": "YYYY-MM-DDThh:mm:ssZ",
    }  # fmt: skip
    assert reply.one("//id:oai-identifier/id:repositoryIdentifier/text()") == HOST
    assert reply.one("//id:oai-identifier/id:sampleIdentifier/text()") == f"oai:{HOST}:1"


def test_identify_without_a_domain_name_leaves_out_the_identifier_description(make_settings):
    from helpers.http import https_client

    from app import create_app

    app = create_app(make_settings(ADMIN_EMAIL="admin@example.org"))  # BASE_URL https://localhost
    reply = Oai(https_client(app)).get(verb="Identify")
    assert reply.error is None and not reply.xpath("//o:description")


def test_post_form_gives_the_same_answer_as_get(oai: Oai, db, settings):
    insert_records(db, settings, 2, T0)
    by_get = oai.get(verb="ListIdentifiers", metadataPrefix="oai_dc")
    by_post = oai.post(verb="ListIdentifiers", metadataPrefix="oai_dc")
    assert by_post.status == 200 and by_post.identifiers == by_get.identifiers == [
        f"oai:{HOST}:2",
        f"oai:{HOST}:4",
    ]
    assert oai.post(verb="Identify").one("//o:baseURL/text()") == f"https://{HOST}/oai2d"


def test_list_metadata_formats(oai: Oai, db, settings):
    [recid] = insert_records(db, settings, 1, T0)
    every = oai.get(verb="ListMetadataFormats")
    # Every prefix served is listed, the reference system's aliases too: harvesters pick from this list.
    listed = [str(p) for p in every.xpath("//o:metadataPrefix/text()")]
    assert sorted(listed) == sorted(PREFIXES) and set(CANONICAL) < set(listed) and len(set(listed)) == len(listed)
    for alias in ("oai_datacite", "oai_datacite3", "oai_datacite4", "datacite", "datacite3", "datacite4", "marcxml"):
        assert alias in listed
    dc = "//o:metadataFormat[o:metadataPrefix='oai_dc']"
    assert every.one(dc + "/o:schema/text()") == "http://www.openarchives.org/OAI/2.0/oai_dc.xsd"
    assert every.one(dc + "/o:metadataNamespace/text()") == "http://www.openarchives.org/OAI/2.0/oai_dc/"
    kernel3 = "//o:metadataFormat[o:metadataPrefix='datacite3']"
    assert every.one(kernel3 + "/o:metadataNamespace/text()") == "http://datacite.org/schema/kernel-3"
    # Each listed prefix disseminates records in the namespace it announces (the client checks the schemas).
    for item in every.xpath("//o:metadataFormat"):
        prefix, namespace = item.xpath("string(o:metadataPrefix)", namespaces=NS), \
            item.xpath("string(o:metadataNamespace)", namespaces=NS)
        got = oai.get(verb="GetRecord", metadataPrefix=prefix, identifier=f"oai:{HOST}:{recid}")
        assert got.error is None, prefix
        assert [etree.QName(e).namespace for e in got.xpath("//o:metadata/*")] == [namespace], prefix
    one = oai.get(verb="ListMetadataFormats", identifier=f"oai:{HOST}:{recid}")
    assert one.error is None and len(one.xpath("//o:metadataFormat")) == len(PREFIXES)
    take_down(db, recid, T0)
    assert oai.get(verb="ListMetadataFormats", identifier=f"oai:{HOST}:{recid}").error is None
    missing = oai.get(verb="ListMetadataFormats", identifier=f"oai:{HOST}:999")
    assert missing.status == 200 and missing.error == "idDoesNotExist"


def test_list_sets_names_types_and_communities(oai: Oai, db):
    with db.write() as conn:
        owner = tokens.create_user(conn, "curator@example.org")
        make_community(conn, "ecology", owner, "Ecology", "<p>Field <b>ecology</b> data.</p>")
        make_community(conn, "physics", owner, "Physics")
    specs, names, descriptions = [], {}, {}
    reply = oai.get(verb="ListSets")
    while True:
        for item in reply.xpath("//o:set"):
            spec = item.xpath("string(*[local-name()='setSpec'])")
            specs.append(spec)
            names[spec] = item.xpath("string(*[local-name()='setName'])")
            descriptions[spec] = item.xpath("string(.//*[local-name()='description'])")
        token = reply.token
        if token is None or not token.text:
            break
        reply = oai.get(verb="ListSets", resumptionToken=token.text)
    assert specs == sorted(specs) and len(specs) == len(set(specs))
    assert {
        "type-dataset",
        "type-publication",
        "type-publication-article",
        "type-image-figure",
        "type-software",
        "user-ecology",
        "user-physics",
    } <= set(specs)
    assert token is not None and token.get("completeListSize") == str(len(specs))
    assert names["user-ecology"] == "Ecology" and descriptions["user-ecology"] == "Field ecology data."
    assert names["type-publication-article"] == "Resource type: Publication / Journal article"
    assert descriptions["user-physics"] == "" and descriptions["type-dataset"] == ""


@pytest.fixture(scope="module")
def ice_record(module_app, module_auth):  # type: ignore[no-untyped-def]
    """A published record in the module's shared app, built once: the tests given it only read."""
    return published(https_client(module_app), module_auth, keywords=["ice"])


@pytest.mark.parametrize("prefix", sorted(PREFIXES))
def test_get_record_in_every_format_and_alias(module_oai: Oai, ice_record, prefix):
    record, oai = ice_record, module_oai
    reply = oai.get(verb="GetRecord", identifier=f"oai:{HOST}:{record['id']}", metadataPrefix=prefix)
    assert reply.status == 200 and reply.error is None
    assert reply.one("//o:header/o:identifier/text()") == f"oai:{HOST}:{record['id']}"
    assert reply.one("//o:header/o:datestamp/text()").endswith("Z")
    assert [str(s) for s in reply.xpath("//o:header/o:setSpec/text()")] == ["type-dataset"]
    assert reply.request_attributes == {
        "verb": "GetRecord",
        "identifier": f"oai:{HOST}:{record['id']}",
        "metadataPrefix": prefix,
    }
    assert "Sensor readings from the north slope" in "".join(reply.one("//o:metadata").itertext())


def test_get_record_of_a_deleted_record_is_a_tombstone(oai: Oai, db, settings):
    [recid] = insert_records(db, settings, 1, T0)
    take_down(db, recid, datetime(2024, 4, 1, 8, 30, 0))
    reply = oai.get(verb="GetRecord", identifier=f"oai:{HOST}:{recid}", metadataPrefix="oai_dc")
    assert reply.error is None
    assert reply.one("//o:header/@status") == "deleted"
    assert reply.one("//o:header/o:datestamp/text()") == "2024-04-01T08:30:00Z"
    assert not reply.xpath("//o:metadata")


@pytest.mark.slow
def test_community_acceptance_shows_in_the_header_at_once(oai: Oai, client, make_token):
    curator = {"Authorization": f"Bearer {make_token('curator@example.org')}"}
    assert (
        client.post(
            "/api/communities/", json={"identifier": "ecology", "title": "Ecology"}, headers=curator
        ).status_code
        == 201
    )
    author = {"Authorization": f"Bearer {make_token('author@example.org')}"}
    record = published(client, author, communities=[{"identifier": "ecology"}])
    identifier = f"oai:{HOST}:{record['id']}"

    def sets() -> list[str]:
        reply = oai.get(verb="GetRecord", identifier=identifier, metadataPrefix="oai_dc")
        return [str(s) for s in reply.xpath("//o:header/o:setSpec/text()")]

    assert sets() == ["type-dataset"]  # the request is pending
    assert (
        oai.get(verb="ListIdentifiers", metadataPrefix="oai_dc", set="user-ecology").error == "noRecordsMatch"
    )
    [pending] = client.get("/api/communities/ecology/requests/", headers=curator).json
    accepted = client.post(f"/api/communities/ecology/requests/{pending['id']}/accept", headers=curator)
    assert accepted.status_code == 200
    assert sets() == ["type-dataset", "user-ecology"]
    in_set = oai.get(verb="ListIdentifiers", metadataPrefix="oai_dc", set="user-ecology")
    assert in_set.identifiers == [identifier]


def test_generated_metadata_is_what_publish_stores(db):
    """The bulk helper writes deposit metadata in the validated shape, so its records render like real ones."""
    with db.write() as conn:
        make_community(conn, "ecology", tokens.create_user(conn, "c@example.org"))
        given = deposit_metadata(
            7, {"upload_type": "publication", "publication_type": "article"}, ["ecology"]
        )
        assert validate_for_publish(given, DatabaseLookups(conn)) == given
