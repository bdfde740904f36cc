"""DataCiteRegistrar against the stand-in: the request it sends, state changes, receipts and error mapping."""

from __future__ import annotations

import base64
import json
import socket
from datetime import datetime

import pytest
import requests
from helpers.registrar import DOI, URL, datacite_xml, receipt
from sqlalchemy import update

from repository.registrar import DataCiteRegistrar, RegistrarError
from repository.storage import Database
from repository.storage.tables.records import doi_registrations

from .datacite_standin import DataCiteStandin


def registered(standin: DataCiteStandin, doi: str = DOI) -> dict:
    """The DOI as DataCite shows it to the account (GET with credentials)."""
    response = requests.get(f"{standin.url}/dois/{doi}", auth=(standin.username, standin.password), timeout=5)
    assert response.status_code == 200, response.text
    return response.json()["data"]["attributes"]


def register_failure(registrar: DataCiteRegistrar, **kwargs) -> RegistrarError:  # type: ignore[no-untyped-def]
    args = {"doi": DOI, "url": URL, "metadata_xml": datacite_xml(), "recid": 1} | kwargs
    with pytest.raises(RegistrarError) as caught:
        registrar.register(**args)
    return caught.value


def test_register_sends_a_jsonapi_publish(datacite: DataCiteRegistrar, standin: DataCiteStandin) -> None:
    datacite.register(DOI, URL, datacite_xml(), recid=1)

    [sent] = standin.requests
    assert (sent["method"], sent["path"]) == ("PUT", f"/dois/{DOI}")
    assert sent["headers"]["Content-Type"] == "application/vnd.api+json"
    expected_auth = base64.b64encode(f"{standin.username}:{standin.password}".encode()).decode()
    assert sent["headers"]["Authorization"] == f"Basic {expected_auth}"
    body = json.loads(sent["body"])
    assert body["data"]["id"] == DOI and body["data"]["type"] == "dois"
    attributes = body["data"]["attributes"]
    assert (attributes["doi"], attributes["event"], attributes["url"]) == (DOI, "publish", URL)
    assert base64.b64decode(attributes["xml"]) == datacite_xml()


def test_register_makes_the_doi_findable_and_keeps_a_receipt(
    datacite: DataCiteRegistrar, standin: DataCiteStandin, db: Database
) -> None:
    datacite.register(DOI, URL, datacite_xml(), recid=1)

    doi = registered(standin)
    assert (doi["state"], doi["url"]) == ("findable", URL)
    assert base64.b64decode(doi["xml"]) == datacite_xml()
    # Findable DOIs are public.
    assert requests.get(f"{standin.url}/dois/{DOI}", timeout=5).status_code == 200
    row = receipt(db, DOI)
    assert (row["registrar"], row["recid"], row["url"]) == ("datacite", 1, URL)
    assert row["metadata_xml"].encode() == datacite_xml()


def test_register_again_updates(datacite: DataCiteRegistrar, standin: DataCiteStandin, db: Database) -> None:
    datacite.register(DOI, URL, datacite_xml(), recid=1)
    past = datetime(2020, 1, 1)
    with db.write() as conn:
        conn.execute(update(doi_registrations).values(registered=past, updated=past))

    datacite.register(DOI, URL + "/v2", datacite_xml(title="Renamed"), recid=1)

    doi = registered(standin)
    assert (doi["state"], doi["url"]) == ("findable", URL + "/v2")
    assert b"Renamed" in base64.b64decode(doi["xml"])
    assert len(standin.dois) == 1
    row = receipt(db, DOI)
    assert row["url"] == URL + "/v2"
    assert row["registered"] == past and row["updated"] > past


def test_hide_makes_a_findable_doi_registered(
    datacite: DataCiteRegistrar, standin: DataCiteStandin, db: Database
) -> None:
    datacite.register(DOI, URL, datacite_xml(), recid=1)

    datacite.hide(DOI)

    assert json.loads(standin.requests[-1]["body"])["data"]["attributes"] == {"doi": DOI, "event": "hide"}
    doi = registered(standin)
    assert (doi["state"], doi["url"]) == ("registered", URL)  # still resolves, no longer in search
    assert requests.get(f"{standin.url}/dois/{DOI}", timeout=5).status_code == 404
    assert receipt(db, DOI)["registrar"] == "datacite"


def test_register_after_hide_publishes_again(datacite: DataCiteRegistrar, standin: DataCiteStandin) -> None:
    datacite.register(DOI, URL, datacite_xml(), recid=1)
    datacite.hide(DOI)

    datacite.register(DOI, URL, datacite_xml(), recid=1)

    assert registered(standin)["state"] == "findable"


def test_hide_twice_is_harmless(datacite: DataCiteRegistrar, standin: DataCiteStandin) -> None:
    datacite.register(DOI, URL, datacite_xml(), recid=1)

    datacite.hide(DOI)
    datacite.hide(DOI)  # a retried outbox row

    assert registered(standin)["state"] == "registered"


def test_hide_of_a_doi_datacite_never_saw_leaves_an_invisible_draft(
    datacite: DataCiteRegistrar, standin: DataCiteStandin
) -> None:
    # PUT creates what does not exist; a draft is neither resolvable nor searchable, so nothing leaks.
    datacite.hide("10.5072/repository.404")

    assert registered(standin, "10.5072/repository.404")["state"] == "draft"


def test_without_a_database_no_receipt_is_written(standin: DataCiteStandin, db: Database) -> None:
    registrar = DataCiteRegistrar(standin.url, standin.username, standin.password)
    try:
        registrar.register(DOI, URL, datacite_xml(), recid=1)
        registrar.hide(DOI)
    finally:
        registrar.close()

    assert registered(standin)["state"] == "registered"
    assert receipt(db, DOI) is None


def test_a_given_session_is_used_and_left_open(standin: DataCiteStandin) -> None:
    with requests.Session() as session:
        session.headers["User-Agent"] = "research-repository-test"
        registrar = DataCiteRegistrar(standin.url, standin.username, standin.password, session=session)
        registrar.register(DOI, URL, datacite_xml(), recid=1)
        registrar.close()
        registrar.register(DOI, URL, datacite_xml(), recid=1)  # the caller's session still works

    assert [r["headers"]["User-Agent"] for r in standin.requests] == ["research-repository-test"] * 2


# Errors the agency reports: not retryable -------------------------------------------------------------------


def test_wrong_credentials(standin: DataCiteStandin, db: Database) -> None:
    registrar = DataCiteRegistrar(standin.url, standin.username, "wrong", db=db)
    try:
        with pytest.raises(RegistrarError) as caught:
            registrar.register(DOI, URL, datacite_xml(), recid=1)
    finally:
        registrar.close()

    assert (caught.value.status, caught.value.retryable) == (401, False)
    assert "Bad credentials." in caught.value.message
    assert standin.dois == {} and receipt(db, DOI) is None


def test_prefix_of_another_account(datacite: DataCiteRegistrar, db: Database) -> None:
    error = register_failure(datacite, doi="10.5281/repository.1", metadata_xml=datacite_xml("10.5281/repository.1"))

    assert (error.status, error.retryable) == (403, False)
    assert "not authorized" in error.message
    assert receipt(db, "10.5281/repository.1") is None


def test_missing_url(datacite: DataCiteRegistrar, db: Database) -> None:
    error = register_failure(datacite, url="")

    assert (error.status, error.retryable) == (422, False)
    assert error.message == f"DataCite answered 422 for {DOI}: url: Can't be blank"
    assert receipt(db, DOI) is None


def test_malformed_xml(datacite: DataCiteRegistrar) -> None:
    error = register_failure(datacite, metadata_xml=b"<resource><identifier identifierType='DOI'>")

    assert (error.status, error.retryable) == (422, False)
    assert "xml: Is not well-formed" in error.message


def test_xml_identifier_must_match(datacite: DataCiteRegistrar, standin: DataCiteStandin) -> None:
    error = register_failure(datacite, metadata_xml=datacite_xml("10.5072/repository.2"))

    assert (error.status, error.retryable) == (422, False)
    assert f"identifier: Does not match the DOI {DOI}" in error.message
    assert standin.dois == {}


def test_several_errors_are_joined(datacite: DataCiteRegistrar, standin: DataCiteStandin) -> None:
    body = {"errors": [{"source": "creators", "title": "Missing child element"},
                       {"source": {"pointer": "/data/attributes/url"}, "title": "Is invalid"}, {"title": "Bad"}]}  # fmt: skip
    standin.fail(422, body=json.dumps(body).encode())

    error = register_failure(datacite)

    assert error.message.endswith(": creators: Missing child element; /data/attributes/url: Is invalid; Bad")


# Trouble on the way or at the agency: retryable ---------------------------------------------------------------


@pytest.mark.parametrize("status", [500, 502, 503])
def test_server_errors_are_retryable(datacite: DataCiteRegistrar, standin: DataCiteStandin, status: int) -> None:
    standin.fail(status)

    error = register_failure(datacite)

    assert (error.status, error.retryable) == (status, True)
    assert "Simulated failure" in error.message
    datacite.register(DOI, URL, datacite_xml(), recid=1)  # the retry succeeds
    assert registered(standin)["state"] == "findable"


def test_rate_limit_is_retryable_after_the_given_delay(datacite: DataCiteRegistrar, standin: DataCiteStandin) -> None:
    standin.fail(429, headers={"Retry-After": "30"})

    error = register_failure(datacite)

    assert (error.status, error.retryable, error.retry_after) == (429, True, 30.0)


def test_a_proxy_page_instead_of_json(datacite: DataCiteRegistrar, standin: DataCiteStandin, db: Database) -> None:
    standin.fail(502, headers={"Content-Type": "text/html"}, body=b"<html><body>Bad Gateway</body></html>")

    error = register_failure(datacite)

    assert error.retryable is True and error.retry_after is None
    assert "<html><body>Bad Gateway" in error.message
    assert receipt(db, DOI) is None


def test_connection_refused_is_retryable(db: Database) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    registrar = DataCiteRegistrar(f"http://127.0.0.1:{port}", "REPO", "pw", db=db, timeout=(1.0, 1.0))
    try:
        error = register_failure(registrar)
    finally:
        registrar.close()

    assert (error.status, error.retryable) == (None, True)
    assert error.message.startswith("DataCite unreachable")
    assert receipt(db, DOI) is None


def test_a_slow_agency_times_out_retryably(standin: DataCiteStandin) -> None:
    standin.delay = 0.5
    registrar = DataCiteRegistrar(standin.url, standin.username, standin.password, timeout=(1.0, 0.1))
    try:
        error = register_failure(registrar)
    finally:
        registrar.close()

    assert (error.status, error.retryable) == (None, True)
    assert "timed out" in error.message
