"""People in a browser get the site's error pages wherever an error comes from; clients and the machine interfaces
keep the error objects (repository.pages.errors). The reference service's page addresses lead to ours
(repository.pages.reference_urls)."""

from __future__ import annotations

import pytest
from helpers.factories import published, published_restricted

BROWSER = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}


@pytest.mark.parametrize("path", ["/records/abc", "/about", "/no/such/page", "/communities/nobody/"])
def test_an_unknown_address_is_a_page_for_a_browser_and_an_error_object_for_a_client(client, path: str) -> None:
    page = client.get(path, headers=BROWSER)
    assert page.status_code == 404 and page.mimetype == "text/html"
    text = page.get_data(as_text=True)
    assert "<h1>Not found</h1>" in text and "Research Repository" in text  # the site's header
    assert page.headers["Vary"] == "Accept" or "Accept" in page.headers["Vary"]
    plain = client.get(path)  # curl, a script: Accept */*
    assert plain.status_code == 404
    if path != "/communities/nobody/":  # a page of the site: its own HTML error page, whoever asks
        assert plain.mimetype == "application/json" and plain.json["status"] == 404


@pytest.mark.parametrize("path", ["/api/records/abc", "/api/nothing", "/oai2d/x"])
def test_the_machine_interfaces_keep_their_error_objects_for_browsers_too(client, path: str) -> None:
    response = client.get(path, headers=BROWSER)
    assert response.status_code == 404 and response.mimetype == "application/json"


def test_a_wrong_method_is_a_page_with_the_allowed_methods(client) -> None:  # type: ignore[no-untyped-def]
    response = client.delete("/search", headers=BROWSER)
    assert response.status_code == 405 and response.mimetype == "text/html"
    assert "GET" in response.headers["Allow"]
    assert "does not take that kind of request" in response.get_data(as_text=True)


def test_an_unexpected_failure_is_a_page_for_a_browser_and_an_empty_500_for_the_api(app, client, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from repository.pages import discover

    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("boom")

    monkeypatch.setattr(discover, "render_page", broken)
    page = client.get("/", headers=BROWSER)
    assert page.status_code == 500 and page.mimetype == "text/html"
    assert "Something went wrong" in page.get_data(as_text=True) and "boom" not in page.get_data(as_text=True)
    assert client.get("/").get_data() == b""  # a client: the specification's bodiless 500


def test_the_wait_of_a_rate_limit_is_said_in_words(make_settings, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from helpers.http import https_client

    from app import create_app

    client = https_client(create_app(make_settings(RATELIMIT_GUEST="2/minute")))  # closed with the test's database
    answers = [client.get("/search", headers=BROWSER) for _ in range(3)]  # the third at the latest is refused
    page = answers[-1]
    assert page.status_code == 429 and page.mimetype == "text/html"
    wait = page.headers["Retry-After"]
    assert f"Please wait {wait} second" in page.get_data(as_text=True)


def test_the_reference_services_addresses_lead_to_the_records(client, auth) -> None:  # type: ignore[no-untyped-def]
    dep = published(client, auth)
    recid = dep["record_id"]
    singular = client.get(f"/record/{recid}?style=ieee")
    assert singular.status_code == 301 and singular.headers["Location"].endswith(f"/records/{recid}?style=ieee")
    for prefix in ("/record/", "/records/"):
        preview = client.get(f"{prefix}{recid}/files/data.csv")
        assert preview.status_code == 301 and preview.headers["Location"].endswith(f"/records/{recid}?preview=data.csv")
        download = client.get(f"{prefix}{recid}/files/data.csv?download=1")
        assert download.status_code == 302
        assert client.get(download.headers["Location"]).get_data() == b"a,b\n1,2\n"
    assert client.get(f"/uploads/{dep['id']}").headers["Location"].endswith(f"/deposit/{dep['id']}")
    assert client.get("/me/uploads").headers["Location"].endswith("/deposit")
    missing = client.get(f"/records/{recid}/files/other.csv?download=1", headers=BROWSER)
    assert missing.status_code == 404 and missing.mimetype == "text/html"


def test_a_restricted_file_is_not_handed_out_by_the_reference_address(client, auth) -> None:  # type: ignore[no-untyped-def]
    dep = published_restricted(client, auth)
    guest = client.get(f"/records/{dep['record_id']}/files/data.csv?download=1")
    assert guest.status_code == 404
    owner = client.get(f"/records/{dep['record_id']}/files/data.csv?download=1", headers=auth)
    assert owner.status_code == 302


def test_a_database_that_is_down_is_a_page_for_a_browser(make_settings) -> None:  # type: ignore[no-untyped-def]
    from helpers.http import https_client

    from app import create_app

    settings = make_settings(DATABASE_URL="postgresql+psycopg://nobody@127.0.0.1:9/none", AUTO_MIGRATE="false")
    client = https_client(create_app(settings))
    page = client.get("/records/1", headers=BROWSER)
    assert page.status_code == 503 and page.mimetype == "text/html"
    assert "Not available right now" in page.get_data(as_text=True)
    assert client.get("/records/1").json["status"] == 503  # a client: the error object


def test_a_file_address_of_an_unknown_record_or_a_concept(client, auth) -> None:  # type: ignore[no-untyped-def]
    dep = published(client, auth)
    unknown = client.get("/records/999999/files/data.csv?download=1", headers=BROWSER)
    assert unknown.status_code == 404 and unknown.mimetype == "text/html"
    concept = client.get(f"/api/records/{dep['record_id']}").json["conceptrecid"]
    latest = client.get(f"/records/{concept}/files/data.csv?download=1")  # a concept id: its latest version's file
    assert latest.status_code == 302
    assert client.get(latest.headers["Location"]).get_data() == b"a,b\n1,2\n"
