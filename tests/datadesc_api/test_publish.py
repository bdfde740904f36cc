"""Reports follow a deposit into its record; with DATADESC_BLOCK_PUBLISH an invalid or pending document stops
the publish with one more entry in the 400's errors."""

from __future__ import annotations

import json

import pytest
from helpers.datadesc_docs import API, CORPUS, INVALID_ROWS, report
from helpers.factories import make_deposit, metadata, publish
from helpers.http import https_client
from sqlalchemy import delete

from app import create_app
from repository.accounts import tokens
from repository.storage.tables.validations import datadesc_validations


def _record_report(client, recid: int, file_id: str, headers: dict | None = None):  # type: ignore[no-untyped-def]
    return client.get(f"/api/records/{recid}/files/{file_id}/validation", headers=headers or {})


def test_record_carries_copies_of_the_reports(package_deposit, client, auth, make_token):
    dep, uploaded = package_deposit(rows=INVALID_ROWS)
    before = report(client, auth, dep, "datapackage.json").json
    record = publish(client, auth, dep)
    doc_id = uploaded["datapackage.json"]["id"]
    public = _record_report(client, record["id"], doc_id)
    assert public.status_code == 200
    assert public.json == before and public.json["status"] == "invalid"
    assert _record_report(client, record["id"], "datapackage.json").json == before  # by name too
    missing = _record_report(client, record["id"], uploaded["data.csv"]["id"])
    assert missing.status_code == 404 and "not a data-description document" in missing.json["message"]
    assert _record_report(client, 999999, doc_id).status_code == 404
    # The deposit's own report stays where it was.
    assert report(client, auth, dep, "datapackage.json").json == before


def test_closed_record_reports_are_for_the_owner_only(package_deposit, client, auth, make_token):
    dep, uploaded = package_deposit(access_right="closed")
    record = publish(client, auth, dep)
    doc_id = uploaded["datapackage.json"]["id"]
    assert _record_report(client, record["id"], doc_id).status_code == 404
    stranger = {"Authorization": "Bearer " + make_token("stranger@example.org")}
    assert _record_report(client, record["id"], doc_id, stranger).status_code == 404
    assert _record_report(client, record["id"], doc_id, auth).json["status"] == "valid"


def test_invalid_documents_do_not_block_by_default(package_deposit, client, auth):
    dep, _ = package_deposit(rows=INVALID_ROWS)
    assert client.post(f"{API}/{dep['id']}/actions/publish", headers=auth).status_code == 202


@pytest.fixture
def blocking(make_settings, make_token):  # type: ignore[no-untyped-def]
    """A client of an app with DATADESC_BLOCK_PUBLISH on, its auth headers and its validator."""
    app = create_app(make_settings(DATADESC_BLOCK_PUBLISH=True))
    runner = app.extensions["repository"].validations
    with app.extensions["repository"].db.write() as conn:
        user = tokens.create_user(conn, "blocked@example.org")
        token = tokens.create_token(conn, user, list(tokens.SCOPES))[1]
    yield https_client(app), {"Authorization": f"Bearer {token}"}, runner
    runner.wait_idle()
    app.extensions["repository"].db.dispose()


@pytest.mark.slow  # 0.4 s and more of work
def test_blocking_setting_refuses_invalid_and_pending_documents(blocking):
    client, auth, runner = blocking
    dep = make_deposit(client, auth, title="")  # a metadata error too: both are listed at once
    bucket = dep["links"]["bucket"].replace("https://localhost", "")
    broken = dict(CORPUS, extra=1)
    assert client.put(f"{bucket}/tools.json", data=json.dumps(broken).encode(), headers=auth).status_code == 200
    runner.wait_idle()
    refused = client.post(f"{API}/{dep['id']}/actions/publish", headers=auth)
    assert refused.status_code == 400
    fields = [e.get("field") for e in refused.json["errors"]]
    assert "metadata.title" in fields
    [entry] = [e for e in refused.json["errors"] if "tools.json" in e["message"]]
    assert entry["field"] == "files" and "invalid (1 error(s))" in entry["message"]
    fixed = client.put(f"{API}/{dep['id']}", json={"metadata": metadata(title="Fixed")}, headers=auth)
    assert fixed.status_code == 200
    with runner.paused():
        client.put(f"{bucket}/tools.json", data=json.dumps(CORPUS).encode(), headers=auth)
        pending = client.post(f"{API}/{dep['id']}/actions/publish", headers=auth)
        assert pending.status_code == 400
        assert [e["message"] for e in pending.json["errors"]] == [
            "The data-description document 'tools.json' is still being validated: retry in a moment."
        ]
    runner.wait_idle()
    assert client.post(f"{API}/{dep['id']}/actions/publish", headers=auth).status_code == 202


@pytest.mark.slow  # 0.4 s and more of work
def test_a_refused_publish_still_starts_validating_documents_it_found_without_report(blocking):
    """The rows a publish creates for files that had none (uploaded before this feature) roll back with its 400:
    they are made again after the rollback and validated, so the next publish passes."""
    client, auth, runner = blocking
    dep = make_deposit(client, auth)
    bucket = dep["links"]["bucket"].replace("https://localhost", "")
    client.put(f"{bucket}/tools.json", data=json.dumps(CORPUS).encode(), headers=auth)
    runner.wait_idle()
    with client.application.extensions["repository"].db.write() as conn:
        conn.execute(delete(datadesc_validations))
    with runner.paused():
        refused = client.post(f"{API}/{dep['id']}/actions/publish", headers=auth)
        assert refused.status_code == 400 and "still being validated" in refused.json["errors"][0]["message"]
    runner.wait_idle()
    assert client.post(f"{API}/{dep['id']}/actions/publish", headers=auth).status_code == 202


@pytest.mark.slow  # 0.4 s and more of work
def test_new_version_documents_are_checked_before_publishing(blocking):
    client, auth, runner = blocking
    dep = make_deposit(client, auth)
    bucket = dep["links"]["bucket"].replace("https://localhost", "")
    client.put(f"{bucket}/tools.json", data=json.dumps(CORPUS).encode(), headers=auth)
    runner.wait_idle()
    assert client.post(f"{API}/{dep['id']}/actions/publish", headers=auth).status_code == 202
    draft_url = client.post(f"{API}/{dep['id']}/actions/newversion", headers=auth).json["links"]["latest_draft"]
    draft = client.get(draft_url.replace("https://localhost", ""), headers=auth).json
    draft_bucket = draft["links"]["bucket"].replace("https://localhost", "")
    client.put(f"{draft_bucket}/notes.txt", data=b"a new file, so that the version differs", headers=auth)
    # The new version's bucket starts with the record's reports: the valid document does not hold it back.
    report = client.get(f"{API}/{draft['id']}/files/{draft['files'][0]['id']}/validation", headers=auth).json
    assert report["status"] == "valid"
    runner.wait_idle()
    assert client.post(f"{API}/{draft['id']}/actions/publish", headers=auth).status_code == 202
