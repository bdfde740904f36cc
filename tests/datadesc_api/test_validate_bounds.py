"""`POST /api/datadesc/validate` is bounded (issue 14.8): guests send at most DATADESC_GUEST_MAX_BYTES, a document is
at most MAX_JSON_BYTES, and table rows are checked for at most DATADESC_VALIDATE_SECONDS of CPU time."""

from __future__ import annotations

import io

import pytest
from helpers.datadesc_docs import CODEBOOK, CORPUS, csv_bytes, descriptor_bytes
from helpers.http import https_client

from app import create_app

URL = "/api/datadesc/validate"
ROWS = 12_000  # about 450 KB: more than frictionless reads at once, less than goes to a temporary file
MANY_ROWS = [f"Germany,{1990 + i % 40},{i},gdp,World Bank,USD," for i in range(ROWS)]


@pytest.fixture
def bounded(make_settings, make_token):  # type: ignore[no-untyped-def]
    """A client of an app built with the given settings, and a token holder's headers."""
    apps = []

    def make(**settings):  # type: ignore[no-untyped-def]
        app = create_app(make_settings(**settings))
        apps.append(app)
        with app.extensions["repository"].db.write() as conn:
            from repository.accounts import tokens

            token = tokens.create_token(conn, tokens.create_user(conn, "v@example.org"), list(tokens.SCOPES))[1]
        return https_client(app), {"Authorization": f"Bearer {token}"}

    yield make
    for app in apps:
        app.extensions["repository"].db.dispose()


def package(client, headers=None, rows=MANY_ROWS):  # type: ignore[no-untyped-def]
    data = {"document": (io.BytesIO(descriptor_bytes()), "datapackage.json"),
            "files": [(io.BytesIO(csv_bytes(*rows)), "data.csv"), (io.BytesIO(CODEBOOK), "codebook.md")]}  # fmt: skip
    return client.post(URL, data=data, content_type="multipart/form-data", headers=headers or {})


def test_guests_send_less_than_token_holders(bounded):
    client, auth = bounded(DATADESC_GUEST_MAX_BYTES=100_000)
    guest = package(client)
    assert guest.status_code == 413 and guest.json["status"] == 413
    assert "access token" in guest.json["message"] and "deposit" in guest.json["message"]
    holder = package(client, auth)
    assert holder.status_code == 200 and holder.json["status"] == "valid"
    assert holder.json["summary"]["rows_checked"] == ROWS
    small = client.post(URL, json=CORPUS)  # small documents stay open to everyone
    assert small.status_code == 200 and small.json["status"] == "valid"


@pytest.mark.slow
def test_guest_json_body_is_bounded(bounded):
    client, auth = bounded(DATADESC_GUEST_MAX_BYTES=1_000)
    assert client.post(URL, json=CORPUS).status_code == 413
    assert client.post(URL, json=CORPUS, headers=auth).status_code == 200


@pytest.mark.slow
def test_a_document_is_at_most_max_json_bytes(bounded):
    client, auth = bounded(MAX_JSON_BYTES=1_000)
    big = {"document": (io.BytesIO(descriptor_bytes(note="x" * 2_000)), "datapackage.json")}
    response = client.post(URL, data=big, content_type="multipart/form-data", headers=auth)
    assert response.status_code == 413 and "background" in response.json["message"]


def test_rows_are_checked_for_a_bounded_time(bounded):
    client, auth = bounded(DATADESC_VALIDATE_SECONDS=0)
    report = package(client, auth).json
    assert report["status"] == "invalid" and report["summary"]["truncated"] is True
    assert 0 < report["summary"]["rows_checked"] < ROWS
    [entry] = report["errors"]
    assert entry["code"] == "time-limit" and entry["path"] == "data.csv" and "Deposit the files" in entry["message"]
    # Rows stop at a row boundary: no error about a cut row.
    client, auth = bounded(DATADESC_VALIDATE_SECONDS=600)
    assert package(client, auth).json["status"] == "valid"
