"""Reports of data-description documents uploaded to deposits: pending, then valid or invalid with locations,
re-validation when a table changes, and recovery of what a crash left pending."""

from __future__ import annotations

import copy
import datetime as dt
import json

import pytest
from helpers.datadesc_docs import (
    API,
    CODEBOOK,
    CORPUS,
    INVALID_ROWS,
    VALID_ROWS,
    csv_bytes,
    descriptor_bytes,
    report,
)
from helpers.factories import make_deposit
from sqlalchemy import update

from app import create_app
from repository.datadesc.checks import rows
from repository.datadesc.checks.runner import STALE_AFTER, validate_row
from repository.storage.tables.validations import datadesc_validations
from repository.timeutil import utcnow


def test_valid_package_uploaded_multipart_is_pending_then_valid(client, auth, multipart, runner):
    dep = make_deposit(client, auth)
    multipart(dep, "data.csv", csv_bytes(*VALID_ROWS))
    multipart(dep, "codebook.md", CODEBOOK)
    with runner.paused():
        doc = multipart(dep, "datapackage.json", descriptor_bytes())
        waiting = client.get(f"{API}/{dep['id']}/files/{doc['id']}/validation", headers=auth)
        assert waiting.status_code == 200
        assert waiting.json == {
            "kind": "datapackage", "status": "pending", "errors": [], "summary": {},
            "file_id": doc["id"], "filename": "datapackage.json",
        }  # fmt: skip
    runner.wait_idle()
    body = client.get(f"{API}/{dep['id']}/files/{doc['id']}/validation", headers=auth).json
    assert body["status"] == "valid" and body["errors"] == []
    assert body["summary"] == {
        "resources": 1, "resources_checked": 1, "rows_checked": len(VALID_ROWS), "truncated": False, "errors": 0,
    }  # fmt: skip


def test_invalid_tables_give_row_and_column(package_deposit, client, auth):
    dep, _ = package_deposit(rows=INVALID_ROWS)
    body = report(client, auth, dep, "datapackage.json").json
    assert body["status"] == "invalid"
    found = {(e["path"], e["row"], e["column"], e["code"]) for e in body["errors"]}
    assert found == {
        ("data.csv", 2, "year", "constraint-error"),
        ("data.csv", 3, "country", "constraint-error"),
        ("data.csv", 4, "value", "type-error"),
    }
    assert body["summary"]["errors"] == 3 and body["summary"]["rows_checked"] == 3


def test_bucket_interface_and_a_missing_codebook(client, auth, bucket_put, runner):
    dep = make_deposit(client, auth)
    bucket_put(dep, "data.csv", csv_bytes(*VALID_ROWS))
    bucket_put(dep, "datapackage.json", descriptor_bytes())
    runner.wait_idle()
    body = report(client, auth, dep, "datapackage.json").json
    assert body["status"] == "invalid"
    assert body["errors"] == [
        {"field": "codebook", "message": "The codebook file 'codebook.md' is not among the files.", "code": "missing-file"}
    ]
    # Uploading the codebook makes the package pending again, then valid.
    with runner.paused():
        bucket_put(dep, "codebook.md", CODEBOOK)
        assert report(client, auth, dep, "datapackage.json").json["status"] == "pending"
    runner.wait_idle()
    assert report(client, auth, dep, "datapackage.json").json["status"] == "valid"


def test_replacing_a_table_revalidates_the_package(package_deposit, client, auth, bucket_put, runner):
    dep, _ = package_deposit()
    assert report(client, auth, dep, "datapackage.json").json["status"] == "valid"
    bucket_put(dep, "data.csv", csv_bytes(*INVALID_ROWS))
    runner.wait_idle()
    body = report(client, auth, dep, "datapackage.json").json
    assert body["status"] == "invalid" and len(body["errors"]) == 3
    bucket_put(dep, "data.csv", csv_bytes(*VALID_ROWS))
    runner.wait_idle()
    assert report(client, auth, dep, "datapackage.json").json["status"] == "valid"


def test_deleting_a_table_or_the_document(package_deposit, client, auth, runner):
    dep, uploaded = package_deposit()
    deleted = client.delete(f"{API}/{dep['id']}/files/{uploaded['data.csv']['id']}", headers=auth)
    assert deleted.status_code == 204
    runner.wait_idle()
    body = report(client, auth, dep, "datapackage.json").json
    assert [e["code"] for e in body["errors"]] == ["missing-file"]
    assert body["errors"][0]["field"] == "resources.0.path"
    doc_id = uploaded["datapackage.json"]["id"]
    bucket = dep["links"]["bucket"].replace("https://localhost", "")
    assert client.delete(f"{bucket}/datapackage.json", headers=auth).status_code == 204
    assert client.get(f"{API}/{dep['id']}/files/{doc_id}/validation", headers=auth).status_code == 404
    with client.application.extensions["repository"].db.read() as conn:
        assert conn.execute(datadesc_validations.select()).first() is None


def test_replacing_the_document_with_something_else_drops_its_report(client, auth, bucket_put, runner):
    dep = make_deposit(client, auth)
    bucket_put(dep, "corpus.json", json.dumps(CORPUS).encode())
    runner.wait_idle()
    assert report(client, auth, dep, "corpus.json").json["status"] == "valid"
    bucket_put(dep, "corpus.json", b'{"not": "a corpus"}')
    assert report(client, auth, dep, "corpus.json").status_code == 404


def test_software_corpus_valid_and_invalid(client, auth, multipart, runner):
    dep = make_deposit(client, auth)
    multipart(dep, "tools.json", json.dumps(CORPUS).encode())
    broken = copy.deepcopy(CORPUS)
    broken["research_software"][0]["platform"] = "host-z"
    broken["extra"] = 1
    multipart(dep, "broken.json", json.dumps(broken).encode())
    multipart(dep, "datapackage.json", b'{"name": "x",\n  "title": ,\n}')
    runner.wait_idle()
    good = report(client, auth, dep, "tools.json").json
    assert good["kind"] == "software_corpus" and good["status"] == "valid"
    bad = report(client, auth, dep, "broken.json").json
    assert bad["status"] == "invalid"
    assert {e["field"] for e in bad["errors"]} == {"research_software.0.platform", "extra"}
    syntax = report(client, auth, dep, "datapackage.json").json
    assert syntax["status"] == "invalid" and syntax["errors"][0]["position"] == {"line": 2, "column": 12}


@pytest.mark.slow
def test_other_files_and_other_users_get_404(package_deposit, client, auth, make_token):
    dep, uploaded = package_deposit()
    csv_report = client.get(f"{API}/{dep['id']}/files/{uploaded['data.csv']['id']}/validation", headers=auth)
    assert csv_report.status_code == 404
    assert "not a data-description document" in csv_report.json["message"]
    assert client.get(f"{API}/{dep['id']}/files/nope/validation", headers=auth).status_code == 404
    doc_url = f"{API}/{dep['id']}/files/{uploaded['datapackage.json']['id']}/validation"
    stranger = {"Authorization": "Bearer " + make_token("stranger@example.org")}
    assert client.get(doc_url, headers=stranger).status_code == 404
    assert client.get(doc_url).status_code == 401


@pytest.mark.slow
def test_pending_rows_left_by_a_crash_are_validated_by_the_worker_pass(settings, client, auth, multipart, runner,
                                                                         monkeypatch):
    monkeypatch.setattr(runner, "kick", lambda: None)  # the process dies before its thread starts
    dep = make_deposit(client, auth)
    multipart(dep, "tools.json", json.dumps(CORPUS).encode())
    assert report(client, auth, dep, "tools.json").json["status"] == "pending"
    db = client.application.extensions["repository"].db
    with db.write() as conn:  # ...after a validator had claimed the row
        conn.execute(update(datadesc_validations).values(started=utcnow()))
    restarted = create_app(settings)
    try:
        passes = restarted.extensions["repository"].indexer.on_pass
        for work in passes:
            work()
        assert report(client, auth, dep, "tools.json").json["status"] == "pending"  # the claim is recent
        with db.write() as conn:
            conn.execute(update(datadesc_validations).values(started=utcnow() - dt.timedelta(hours=1)))
        for work in passes:
            work()
    finally:
        restarted.extensions["repository"].db.dispose()
    assert report(client, auth, dep, "tools.json").json["status"] == "valid"


def test_deleting_a_draft_drops_its_reports(package_deposit, client, auth):
    dep, _ = package_deposit()
    assert client.delete(f"{API}/{dep['id']}", headers=auth).status_code == 201
    with client.application.extensions["repository"].db.read() as conn:
        assert conn.execute(datadesc_validations.select()).first() is None


def test_a_validation_overtaken_by_an_upload_stores_nothing(client, auth, bucket_put, runner, monkeypatch):
    monkeypatch.setattr(runner, "kick", lambda: None)  # this test plays the validator itself
    dep = make_deposit(client, auth)
    bucket_put(dep, "codebook.md", CODEBOOK)
    bucket_put(dep, "data.csv", csv_bytes(*VALID_ROWS))
    bucket_put(dep, "datapackage.json", descriptor_bytes())
    stale_before = utcnow() - STALE_AFTER
    with runner.db.read() as conn:
        [row] = rows.claimable(conn, stale_before, 10)
    with runner.db.write() as conn:
        assert rows.claim(conn, row, stale_before)
    bucket_put(dep, "data.csv", csv_bytes(*INVALID_ROWS))  # while the validation of the valid table runs
    assert validate_row(runner.db, runner.store, row) is False
    assert report(client, auth, dep, "datapackage.json").json["status"] == "pending"
    assert runner.process_pending() == 1
    assert report(client, auth, dep, "datapackage.json").json["status"] == "invalid"


def test_renaming_a_table_is_noticed_when_the_report_is_read(package_deposit, client, auth, runner):
    dep, uploaded = package_deposit()
    renamed = client.put(f"{API}/{dep['id']}/files/{uploaded['data.csv']['id']}", json={"name": "old.csv"}, headers=auth)
    assert renamed.status_code == 200
    with runner.paused():
        assert report(client, auth, dep, "datapackage.json").json["status"] == "pending"
    runner.wait_idle()
    body = report(client, auth, dep, "datapackage.json").json
    assert [(e["field"], e["code"]) for e in body["errors"]] == [("resources.0.path", "missing-file")]


def test_a_package_in_a_folder_names_the_files_of_its_folder(app, client, auth, bucket_put, runner):
    """A bucket PUT stores the last path segment (the specification), so keys with folders come only from
    elsewhere (a release archive, keys stored before that rule): put them where the service would."""
    import io

    from repository.datadesc import checks
    from repository.files import buckets

    dep = make_deposit(client, auth)
    assert bucket_put(dep, "elsewhere/data.csv", csv_bytes(*INVALID_ROWS))["key"] == "data.csv"
    svc = app.extensions["repository"]
    store = svc.files
    bucket = dep["links"]["bucket"].rsplit("/", 1)[1]
    for key, content in (("survey/data.csv", csv_bytes(*VALID_ROWS)), ("survey/codebook.md", CODEBOOK),
                         ("survey/datapackage.json", descriptor_bytes())):
        stored = store.write(io.BytesIO(content))
        with svc.db.write() as conn:
            buckets.put_object(conn, bucket, key, stored)
            checks.file_changed(conn, store, bucket, key)  # outside a request too, the commit starts it
    runner.wait_idle()
    body = report(client, auth, dep, "survey/datapackage.json").json
    assert body["status"] == "valid" and body["filename"] == "survey/datapackage.json"
    bucket_put(dep, "data.csv", csv_bytes(*VALID_ROWS))  # touching the other folder changes nothing
    runner.wait_idle()
    assert report(client, auth, dep, "survey/datapackage.json").json["status"] == "valid"
