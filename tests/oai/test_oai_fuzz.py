"""Odd argument values never give a 500: far dates, huge numbers, odd set specs and identifiers, and validly
signed resumption tokens holding the wrong types (anyone who knows the secret can sign one)."""

from __future__ import annotations

from datetime import datetime

import pytest
from helpers.bulk_records import insert_records
from helpers.oai_client import HOST, Oai
from itsdangerous import URLSafeSerializer

T0 = datetime(2024, 3, 1, 12, 0, 0)
LISTS = ("ListIdentifiers", "ListRecords")


@pytest.fixture(scope="module")
def recids(module_db, module_settings) -> list[int]:  # type: ignore[no-untyped-def]
    """Built once: every test here only reads."""
    return insert_records(module_db, module_settings, 7, T0, per_second=2)


@pytest.mark.slow
@pytest.mark.parametrize("until", ["9999-12-31", "9999-12-31T23:59:59Z", "9999-01-01", "2999-12-31T00:00:00Z"])
def test_an_until_far_in_the_future_lists_everything(module_oai: Oai, recids, until):
    for verb in LISTS:
        reply = module_oai.get(verb=verb, metadataPrefix="oai_dc", until=until)
        assert (reply.status, reply.error) == (200, None)
        assert reply.token is not None and reply.token.get("completeListSize") == str(len(recids))
        rest = module_oai.get(verb=verb, resumptionToken=reply.token.text)
        assert (rest.status, rest.error) == (200, None)
        assert len(reply.identifiers) + len(rest.identifiers) == len(recids)


@pytest.mark.parametrize(("args", "code"), [
    ({"from": "0001-01-01"}, None),
    ({"from": "0001-01-01T00:00:00Z", "until": "9999-12-31T23:59:59Z"}, None),
    ({"from": "9999-12-31"}, "noRecordsMatch"),
    ({"from": "9999-12-31T23:59:59Z"}, "noRecordsMatch"),
    ({"until": "0001-01-01"}, "noRecordsMatch"),
    ({"from": "0000-01-01"}, "badArgument"),
    ({"until": "10000-01-01"}, "badArgument"),
    ({"until": "99999999999999999999-01-01"}, "badArgument"),
    ({"from": "2024-02-30"}, "badArgument"),
    ({"from": "2024-03-01T24:00:00Z"}, "badArgument"),
    ({"from": "2024-03-01T23:59:60Z"}, "badArgument"),
    ({"from": "\uff12\uff10\uff12\uff14-03-01"}, "badArgument"),  # full-width digits
    ({"from": "2024-03-01\n"}, "badArgument"),
    ({"from": "2024-03-01\x00"}, "badArgument"),
    ({"until": "-2024-03-01"}, "badArgument"),
    ({"until": "+2024-03-01"}, "badArgument"),
    ({"until": "2024-03-01T12:00:00+00:00"}, "badArgument"),
    ({"until": "2024"}, "badArgument"),
    ({"until": "x" * 10000}, "badArgument"),
    ({"set": "type-dataset", "until": "9999-12-31"}, None),
    ({"set": "user-" + "a" * 5000}, "noRecordsMatch"),
    ({"set": "type-" + "9" * 40}, "noRecordsMatch"),
    ({"set": "type-"}, "noRecordsMatch"),
    ({"set": "user-"}, "noRecordsMatch"),
    ({"set": "type-publication-"}, "noRecordsMatch"),
    ({"set": "type-dataset:x"}, "noRecordsMatch"),
    ({"set": "user-a\x00b"}, "badArgument"),
    ({"set": "user-\u00e9t\u00e9"}, "badArgument"),
    ({"set": "user-a b"}, "badArgument"),
    ({"set": ":"}, "badArgument"),
    ({"metadataPrefix": "oai_dc\x00"}, "cannotDisseminateFormat"),
    ({"metadataPrefix": "x" * 10000}, "cannotDisseminateFormat"),
])  # fmt: skip
def test_odd_list_arguments(module_oai: Oai, recids, args, code):
    for verb in LISTS:
        reply = module_oai.get(verb=verb, **{"metadataPrefix": "oai_dc", **args})
        assert (reply.status, reply.error) == (200, code), (verb, args)


@pytest.mark.parametrize("identifier", [
    f"oai:{HOST}:99999999999999999999", f"oai:{HOST}:999999999999999999", f"oai:{HOST}:-1", f"oai:{HOST}:0",
    f"oai:{HOST}:\u00b2", f"oai:{HOST}:\uff12", f"oai:{HOST}:\u0662", f"oai:{HOST}:2\x00", f"oai:{HOST}:",
    f"oai:{HOST}:+2", f"oai:{HOST}: 2", f"oai:{HOST.upper()}:2x", "oai::2", "oai:" + "h" * 5000 + ":2", "oai",
    "\x00", " ",
])  # fmt: skip
def test_odd_identifiers(module_oai: Oai, recids, identifier):
    for args in ({"verb": "GetRecord", "metadataPrefix": "oai_dc"}, {"verb": "ListMetadataFormats"}):
        reply = module_oai.get(identifier=identifier, **args)
        assert (reply.status, reply.error) == (200, "idDoesNotExist"), identifier


def _sign(app, verb: str, payload) -> str:  # type: ignore[no-untyped-def]
    """A token signed with the service's own secret, as anyone who knows it could make."""
    secret = app.extensions["repository"].secret
    return URLSafeSerializer(secret, salt=f"oai-pmh:{verb}").dumps(payload)


def _payload(clock, **changes):  # type: ignore[no-untyped-def]
    good = {"prefix": "oai_dc", "set": None, "from_": None, "until": None,
            "after": ["2024-03-01T12:00:00", "2"], "size": 7, "cursor": 5,
            "issued": int((clock().replace(tzinfo=None) - datetime(1970, 1, 1)).total_seconds())}  # fmt: skip
    return {**good, **changes}


BAD_FIELDS = [
    {"after": "2024-03-01T12:00:00"}, {"after": 5}, {"after": None}, {"after": []}, {"after": ["x", "2"]},
    {"after": ["2024-03-01T12:00:00", "two"]}, {"after": ["2024-03-01T12:00:00", 2]},
    {"after": ["2024-03-01T12:00:00", "2", "3"]}, {"after": ["2024-03-01T12:00:00", "99999999999999999999999"]},
    {"after": ["2024-03-01T12:00:00+05:00", "2"]}, {"after": [["nested"], "2"]}, {"after": {"a": 1}},
    {"size": "7"}, {"size": -1}, {"size": 1e30}, {"size": True}, {"size": None}, {"cursor": "5"},
    {"cursor": -5}, {"cursor": [5]}, {"issued": "now"}, {"issued": None}, {"issued": 1e300},
    {"issued": 10**30}, {"prefix": 5}, {"prefix": None}, {"prefix": ["oai_dc"]}, {"prefix": "no-such-format"},
    {"set": 5}, {"set": {"x": 1}}, {"set": "user-a\x00b"}, {"from_": 20240101}, {"from_": "yesterday"},
    {"until": "9999-99-99"}, {"until": ["2024-01-01"]}, {"from_": "2024-03-02", "until": "2024-03-01"},
    {"extra": 1}, {"prefix": "oai_dc\x00"},
]  # fmt: skip


@pytest.mark.parametrize("verb", LISTS)
@pytest.mark.parametrize("change", BAD_FIELDS)
def test_signed_tokens_with_wrong_contents_are_bad_tokens(module_app, module_oai: Oai, module_clock, recids, verb,
                                                         change):
    reply = module_oai.get(verb=verb, resumptionToken=_sign(module_app, verb, _payload(module_clock, **change)))
    assert (reply.status, reply.error) == (422, "badResumptionToken"), change


@pytest.mark.parametrize("payload", [
    None, 5, "text", [], ["a"], {}, {"after": ["user-a\x00b"]}, {"after": ["type-dataset"], "size": "1"},
    {"after": [5], "size": 1, "cursor": 0}, {"after": "type-dataset", "size": 1, "cursor": 0},
])  # fmt: skip
def test_signed_list_sets_tokens_with_wrong_contents(module_app, module_oai: Oai, module_clock, payload):
    if isinstance(payload, dict):
        payload = {"prefix": None, "set": None, "from_": None, "until": None, "size": 1, "cursor": 0,
                   "issued": _payload(module_clock)["issued"], **payload}  # fmt: skip
    reply = module_oai.get(verb="ListSets", resumptionToken=_sign(module_app, "ListSets", payload))
    assert (reply.status, reply.error) == (422, "badResumptionToken"), payload


def test_a_well_formed_signed_token_is_served(module_app, module_oai: Oai, module_clock, recids):
    """The forging helper above makes tokens the service accepts: the refusals are for their contents."""
    token = _sign(module_app, "ListIdentifiers", _payload(module_clock))
    reply = module_oai.get(verb="ListIdentifiers", resumptionToken=token)
    assert (reply.status, reply.error) == (200, None) and reply.identifiers


def test_a_well_formed_signed_list_sets_token_is_served(module_app, module_oai: Oai, module_clock):
    payload = {"prefix": None, "set": None, "from_": None, "until": None, "after": ["type-dataset"], "size": 99,
               "cursor": 5, "issued": _payload(module_clock)["issued"]}  # fmt: skip
    reply = module_oai.get(verb="ListSets", resumptionToken=_sign(module_app, "ListSets", payload))
    assert (reply.status, reply.error) == (200, None) and reply.xpath("//o:setSpec")
