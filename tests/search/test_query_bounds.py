"""Every `q` is bounded before an engine sees it: hostile queries are 400 error objects naming `q`, on record
search and on the deposition list alike, and never a 500, a 503 or seconds of work."""

from __future__ import annotations

import base64
import json
from urllib.parse import parse_qs, urlparse

import pytest
from helpers.factories import published
from helpers.http import https_client

from app import create_app
from repository.search.params import _sign

RECORDS, DEPOSITS = "/api/records/", "/api/deposit/depositions"

HOSTILE = [
    "*" * 1000,  # ~10 s of automaton building before the bounds
    "*" * 999 + "a",
    "a" + "*" * 999,
    "*?" * 30,
    "title:" + "?" * 40,
    "a*b*c*d*e*f*g*h*i*j*k*l",
    "data* test* abc*",  # three unfielded patterns: each spreads over every default field
    "title:/" + "a" * 120 + "/",
    "title:/.{0,500}/",
    "(" * 1000 + "a" + ")" * 1000,
    "-" * 1000 + "a",
    "+" * 1000 + "a",
    "NOT " * 200 + "a",
    "recid:[0 TO 99999999999999999999]",
    "recid:99999999999999999999",
    "year:[1 TO 3000000000]",  # an integer field: 32 bits in the engines
    "size:>99999999999999999999",
    "recid:1_000",
    " ".join(f"w{i}" for i in range(40)),  # 40 words x 30 default fields
    "x" * 4001,
]


def _assert_refused(response, field: str = "q") -> None:  # type: ignore[no-untyped-def]
    assert response.status_code == 400, response.get_data(as_text=True)[:300]
    body = response.json
    assert body["status"] == 400 and body["message"]
    assert body["errors"][0]["field"] == field


@pytest.mark.parametrize("q", HOSTILE, ids=lambda q: q[:30])
def test_hostile_record_queries_are_refused(module_client, q):
    _assert_refused(module_client.get(RECORDS, query_string={"q": q}))


@pytest.mark.parametrize("q", HOSTILE, ids=lambda q: q[:30])
def test_hostile_deposition_list_queries_are_refused(module_client, module_auth, q):
    _assert_refused(module_client.get(DEPOSITS, query_string={"q": q}, headers=module_auth))


def test_messages_say_which_bound(module_client):
    client = module_client
    assert "nested too deeply" in client.get(RECORDS, query_string={"q": "(" * 40 + "a" + ")" * 40}).json["message"]
    assert '"*" and "?"' in client.get(RECORDS, query_string={"q": "title:" + "a*" * 11}).json["message"]
    message = client.get(RECORDS, query_string={"q": "recid:[0 TO 99999999999999999999]"}).json["message"]
    assert "recid" in message and "9223372036854775807" in message


@pytest.mark.parametrize("q", [
    "doi:10.5281*zenodo.123",  # the wild form clients send
    "data*",
    "data* test*",
    "title:a*b*c*d*e*f*g*h*i*j",
    "title:" + "?" * 10,
    "a**********b",  # runs of * are one wildcard
    "((((title:a))))",
    "--a",
    "recid:[0 TO 9223372036854775807]",
    "year:[1990 TO 2030]",
    "title:/joh?n/",
    " ".join(f"w{i}" for i in range(30)),
    "doi:(" + " OR ".join(f'"10.5281/zenodo.{i}"' for i in range(150)) + ")",
])
def test_ordinary_queries_stay_within_the_bounds(module_client, q):
    assert module_client.get(RECORDS, query_string={"q": q}).status_code == 200


@pytest.mark.slow
def test_bounded_queries_still_find_records(client, auth):
    record = published(client, auth, title="Aardvark burrows", keywords=["zoology"])
    for q in ("aard*", "title:aard*k", "a**dvark", f"recid:[0 TO {2**63 - 1}]", "title:/aard.ark/"):
        hits = client.get(RECORDS, query_string={"q": q}).json["hits"]["hits"]
        assert [h["id"] for h in hits] == [record["record_id"]], q


def _resigned(cursor: str, secret: bytes, change) -> str:  # type: ignore[no-untyped-def]
    body = cursor.partition(".")[0]
    payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    new = base64.urlsafe_b64encode(change(payload).encode()).decode().rstrip("=")
    return f"{new}.{_sign(secret, new)}"


CURSOR_PAYLOADS = {
    "list": lambda p: json.dumps([p]),
    "string": lambda p: json.dumps("x"),
    "position a string": lambda p: json.dumps({**p, "n": "10"}),
    "position a float": lambda p: json.dumps({**p, "n": 1.5}),
    "position huge": lambda p: json.dumps({**p, "n": 10**30}),
    "position negative": lambda p: json.dumps({**p, "n": -1}),
    "after an object": lambda p: json.dumps({**p, "a": {"x": 1}}),
    "after of strings": lambda p: json.dumps({**p, "a": ["x", "y"]}),
    "after with a huge recid": lambda p: json.dumps({**p, "a": [1.0, 10**30]}),
    "after with NaN": lambda p: json.dumps({**p, "a": [float("nan"), 1]}),
    "after with booleans": lambda p: json.dumps({**p, "a": [True, False]}),
    "fingerprint a number": lambda p: json.dumps({**p, "f": 5}),
    "nested deeply": lambda p: "[" * 100_000 + "]" * 100_000,
    "not json": lambda p: "\x00\xff",
}


@pytest.fixture(scope="module")
def windowed(module_make_settings, module_auth):  # type: ignore[no-untyped-def]
    """A service whose window is two results, so that links.next carries a cursor at once, holding three records
    (built once: the tests only read)."""
    app = create_app(module_make_settings(SEARCH_WINDOW=2))
    for i in range(3):
        published(https_client(app), module_auth, title=f"Cursor walk {i}")
    yield app
    app.extensions["repository"].db.dispose()


@pytest.mark.slow
@pytest.mark.parametrize("name", CURSOR_PAYLOADS)
def test_validly_signed_cursors_with_wrong_fields_are_400(windowed, name):
    app, client = windowed, https_client(windowed)
    for sort in ("bestmatch", "mostrecent"):
        args = {"q": "cursor", "size": 2, "sort": sort}
        next_link = client.get(RECORDS, query_string=args).json["links"]["next"]
        cursor = parse_qs(urlparse(next_link).query)["cursor"][0]
        assert client.get(RECORDS, query_string={**args, "cursor": cursor}).status_code == 200
        forged = _resigned(cursor, app.config["SECRET_KEY"].encode(), CURSOR_PAYLOADS[name])
        _assert_refused(client.get(RECORDS, query_string={**args, "cursor": forged}), "cursor")


@pytest.mark.slow  # 0.4 s and more of work
@pytest.mark.parametrize("q", ["publication_date:9999", "publication_date:[0001 TO 9999]",
                               "publication_date:>9999-12-31", "publication_date:<0001", "created:[1500 TO 2100]",
                               "publication_date:{* TO 9999-12-31T23:59:59Z]"])
def test_dates_at_the_ends_of_time_answer(client, auth, q):
    record = published(client, auth, title="Dated", publication_date="2020-05-01")
    expected = [record["record_id"]] if q.startswith(("publication_date:[", "created", "publication_date:{")) else []
    assert [h["id"] for h in client.get(RECORDS, query_string={"q": q}).json["hits"]["hits"]] == expected
    assert client.get(DEPOSITS, query_string={"q": q}, headers=auth).status_code == 200


def test_an_impossible_time_zone_is_a_400(module_client):
    _assert_refused(module_client.get(RECORDS, query_string={"q": "created:2020-01-01T00:00:00+99:00"}))
