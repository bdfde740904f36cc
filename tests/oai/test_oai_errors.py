"""Protocol errors: the right code, HTTP 200 (422 only for a bad token), no echoed arguments after bad ones."""

from __future__ import annotations

from datetime import datetime

import pytest
from helpers.bulk_records import insert_records
from helpers.http import https_client
from helpers.oai_client import HOST, Oai

from app import create_app

T0 = datetime(2024, 3, 1, 12, 0, 0)
ID = f"oai:{HOST}:2"


@pytest.fixture(scope="module")
def one_record(module_db, module_settings) -> list[int]:  # type: ignore[no-untyped-def]
    """One record in the module's shared app, built once: the tests given it only read."""
    return insert_records(module_db, module_settings, 1, T0)


@pytest.mark.parametrize(
    ("args", "code"),
    [
        ({}, "badVerb"),
        ({"verb": "Harvest"}, "badVerb"),
        ({"verb": ["Identify", "Identify"]}, "badVerb"),
        ({"verb": "Identify", "set": "x"}, "badArgument"),
        ({"verb": "ListRecords"}, "badArgument"),
        ({"verb": "ListRecords", "metadataPrefix": ""}, "badArgument"),
        ({"verb": "ListRecords", "metadataPrefix": ["oai_dc", "marc21"]}, "badArgument"),
        ({"verb": "ListRecords", "metadataPrefix": "oai_dc", "identifier": ID}, "badArgument"),
        ({"verb": "GetRecord", "identifier": ID}, "badArgument"),
        ({"verb": "GetRecord", "metadataPrefix": "oai_dc"}, "badArgument"),
        ({"verb": "ListIdentifiers", "metadataPrefix": "oai_dc", "from": "2024-13-01"}, "badArgument"),
        (
            {"verb": "ListIdentifiers", "metadataPrefix": "oai_dc", "from": "2024-03-01T12:00:00"},
            "badArgument",
        ),
        (
            {"verb": "ListIdentifiers", "metadataPrefix": "oai_dc", "until": "2024-03-01T12:00:00.5Z"},
            "badArgument",
        ),
        (
            {
                "verb": "ListIdentifiers",
                "metadataPrefix": "oai_dc",
                "from": "2024-03-02",
                "until": "2024-03-01",
            },
            "badArgument",
        ),
        (
            {
                "verb": "ListIdentifiers",
                "metadataPrefix": "oai_dc",
                "from": "2024-03-01",
                "until": "2024-03-02T00:00:00Z",
            },
            "badArgument",
        ),
        ({"verb": "ListSets", "set": "type-dataset"}, "badArgument"),
        ({"verb": "ListRecords", "metadataPrefix": "oai_datacite5"}, "cannotDisseminateFormat"),
        ({"verb": "ListRecords", "metadataPrefix": "no such format"}, "cannotDisseminateFormat"),
        ({"verb": "GetRecord", "metadataPrefix": "json", "identifier": ID}, "cannotDisseminateFormat"),
        (
            {"verb": "GetRecord", "metadataPrefix": "oai_dc", "identifier": f"oai:{HOST}:999"},
            "idDoesNotExist",
        ),
        (
            {"verb": "GetRecord", "metadataPrefix": "oai_dc", "identifier": "oai:elsewhere.org:2"},
            "idDoesNotExist",
        ),
        ({"verb": "GetRecord", "metadataPrefix": "oai_dc", "identifier": "2"}, "idDoesNotExist"),
        ({"verb": "GetRecord", "metadataPrefix": "oai_dc", "identifier": "has space"}, "idDoesNotExist"),
        ({"verb": "ListMetadataFormats", "identifier": f"oai:{HOST}:1"}, "idDoesNotExist"),  # a concept id
        ({"verb": "ListRecords", "metadataPrefix": "oai_dc", "set": "user-nobody"}, "noRecordsMatch"),
        ({"verb": "ListRecords", "metadataPrefix": "oai_dc", "set": "type-poem"}, "noRecordsMatch"),
        ({"verb": "ListRecords", "metadataPrefix": "oai_dc", "set": "openaire"}, "noRecordsMatch"),
        ({"verb": "ListIdentifiers", "metadataPrefix": "oai_dc", "from": "2030-01-01"}, "noRecordsMatch"),
        (
            {"verb": "ListIdentifiers", "metadataPrefix": "oai_dc", "until": "2024-02-29T23:59:59Z"},
            "noRecordsMatch",
        ),
    ],
)
def test_errors_come_with_http_200(module_oai: Oai, one_record, args, code):
    for reply in (module_oai.get(**args), module_oai.post(**args)):
        assert (reply.status, reply.error) == (200, code)
        assert len(reply.xpath("/o:OAI-PMH/*")) == 3  # responseDate, request, error: nothing else
        attributes = reply.request_attributes
        if code in {"badVerb", "badArgument"}:
            assert attributes == {}  # the protocol: only the base URL after a bad verb or argument
        else:
            assert attributes["verb"] == args["verb"]


@pytest.mark.parametrize("verb", ["ListRecords", "ListIdentifiers", "ListSets"])
def test_forged_tokens_give_422(oai: Oai, db, settings, verb):
    insert_records(db, settings, 12, T0)
    start = oai.get(verb=verb) if verb == "ListSets" else oai.get(verb=verb, metadataPrefix="oai_dc")
    token = start.token.text
    for forged in ("abc", token[:-2] + ("AA" if not token.endswith("AA") else "BB"), token + "x", ""):
        reply = oai.get(verb=verb, resumptionToken=forged)
        assert (reply.status, reply.error) == (422, "badResumptionToken"), forged


def test_a_token_only_works_for_its_own_verb(oai: Oai, db, settings):
    insert_records(db, settings, 12, T0)
    token = oai.get(verb="ListIdentifiers", metadataPrefix="oai_dc").token.text
    reply = oai.get(verb="ListRecords", resumptionToken=token)
    assert (reply.status, reply.error) == (422, "badResumptionToken")
    assert reply.request_attributes == {"verb": "ListRecords", "resumptionToken": token}


def test_arguments_beside_a_token_must_repeat_its_query(oai: Oai, db, settings):
    insert_records(db, settings, 40, T0)
    first = oai.get(verb="ListRecords", metadataPrefix="oai_dc", set="type-dataset")
    token = first.token.text
    # Harvesters that resend the prefix with the token (the reference system once required it) are served.
    same = oai.get(verb="ListRecords", resumptionToken=token, metadataPrefix="oai_dc", set="type-dataset")
    assert (
        same.error is None
        and same.identifiers == oai.get(verb="ListRecords", resumptionToken=token).identifiers
    )
    for other in ({"metadataPrefix": "marc21"}, {"set": "type-software"}, {"from": "2024-01-01"}):
        reply = oai.get(verb="ListRecords", resumptionToken=token, **other)
        assert (reply.status, reply.error) == (200, "badArgument"), other


def test_access_token_parameter_is_not_an_oai_argument(oai: Oai):
    assert oai.get(verb="Identify", access_token="").error is None


@pytest.mark.slow
def test_oai_has_its_own_limit_of_120_a_minute(make_settings):
    # The guest limit (2/minute here) does not count OAI requests: harvesting has its own allowance.
    client = https_client(create_app(make_settings(RATELIMIT_GUEST="2/minute")))
    statuses = [client.get("/oai2d?verb=Identify").status_code for _ in range(120)]
    assert statuses == [200] * 120
    refused = client.get("/oai2d?verb=Identify")
    assert refused.status_code == 429 and refused.headers["X-RateLimit-Limit"] == "120"
    assert 0 < int(refused.headers["Retry-After"]) <= 60
    assert [client.get("/api/").status_code for _ in range(3)] == [200, 200, 429]
