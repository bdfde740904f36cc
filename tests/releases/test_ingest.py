"""Release ingestion end to end: enable, signed webhook, background archiving against the platform stand-in."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from helpers.releases import ALICE, REPOS, archive, deliver, enable, wait_for

DEPOSITS = "/api/deposit/depositions"


def record_of(client, release: dict) -> dict:  # type: ignore[no-untyped-def]
    response = client.get(f"/api/records/{release['record_id']}", headers={"Accept": "application/json"})
    assert response.status_code == 200, response.json
    return response.json


def deposition_of(client, auth, release: dict) -> dict:  # type: ignore[no-untyped-def]
    return client.get(f"{DEPOSITS}/{release['record_id']}", headers=auth).json


@pytest.mark.slow
def test_enabling_returns_the_webhook_url_and_a_secret_shown_once(client, auth, settings):
    repo = enable(client, auth)
    assert repo["webhook"]["url"] == f"{settings.BASE_URL}/api/releases/hooks/{repo['id']}"
    assert len(repo["webhook"]["secret"]) == 64 and repo["enabled"] is True
    shown = client.get(repo["links"]["self"], headers=auth).json
    assert "webhook" not in shown and shown["links"]["webhook"] == repo["webhook"]["url"]
    assert all("webhook" not in r for r in client.get(REPOS, headers=auth).json)
    again = enable(client, auth)  # enabling again rotates the secret
    assert again["id"] == repo["id"] and again["webhook"]["secret"] != repo["webhook"]["secret"]
    assert client.post(REPOS, json={"repository": "not a name"}, headers=auth).status_code == 400
    assert client.post(REPOS, json={"repository": "alice/tool"}).status_code == 401


def test_another_account_cannot_take_an_enabled_repository(client, auth, make_token):
    enable(client, auth)
    other = {"Authorization": f"Bearer {make_token('other@example.org')}"}
    response = client.post(REPOS, json={"repository": "Alice/Tool"}, headers=other)
    assert response.status_code == 409 and "another account" in response.json["message"]


@pytest.mark.slow
def test_release_with_derived_defaults_only(client, auth, project):
    repo = enable(client, auth)
    body = "## What's new\n\n* **Greets** the world\n\n<script>alert(1)</script>"
    release = archive(client, auth, repo, project, "v1.0.0", name="First release", body=body,
                      published_at="2024-05-01T10:00:00Z")  # fmt: skip
    assert release["status"] == "published", release["errors"]
    dep = deposition_of(client, auth, release)
    metadata = dep["metadata"]
    assert metadata["upload_type"] == "software" and metadata["access_right"] == "open"
    assert metadata["title"] == "alice/tool: First release"
    assert "<strong>Greets</strong>" in metadata["description"] and "<h2>" in metadata["description"]
    assert "script" not in metadata["description"] and "alert" not in metadata["description"]
    assert metadata["version"] == "v1.0.0" and metadata["publication_date"] == "2024-05-01"
    # People by contributions (the bot left out), named from their profile, else by login.
    assert metadata["creators"] == [{"name": "Archer, Alice", "affiliation": "Example University"}, {"name": "bob"}]
    assert metadata["related_identifiers"] == [
        {"identifier": "https://github.example/alice/tool/tree/v1.0.0", "relation": "isSupplementTo", "scheme": "url"}
    ]
    assert metadata["license"] == "MIT"
    assert dep["state"] == "done" and [f["filename"] for f in dep["files"]] == ["alice/tool-v1.0.0.zip"]
    with client.get(dep["files"][0]["links"]["download"], headers=auth) as download:
        names = zipfile.ZipFile(io.BytesIO(download.data)).namelist()
    assert "alice-tool-v1.0.0/tool.py" in names
    assert record_of(client, release)["metadata"]["title"] == "alice/tool: First release"
    listed = client.get(repo["links"]["releases"], headers=auth).json
    assert [(r["tag"], r["status"], r["errors"]) for r in listed] == [("v1.0.0", "published", [])]
    assert client.get(repo["links"]["self"], headers=auth).json["conceptrecid"] == dep["conceptrecid"]


@pytest.mark.slow
def test_service_json_overrides_the_defaults_key_by_key(client, auth, project):
    service = {"title": "Tool: a greeter", "creators": [{"name": "Archer, Alice", "orcid": "0000-0002-1825-0097"}],
               "keywords": ["greeting"], "license": "apache-2.0"}  # fmt: skip
    project.repo.commit(ALICE, {".service.json": json.dumps(service), ".zenodo.json": '{"title": "ignored"}'})
    project.repo.tag("v1.1.0")
    release = archive(client, auth, enable(client, auth), project, "v1.1.0", body="Notes.")
    assert release["status"] == "published", release["errors"]
    metadata = deposition_of(client, auth, release)["metadata"]
    assert metadata["title"] == "Tool: a greeter" and metadata["keywords"] == ["greeting"]
    assert metadata["creators"] == [{"name": "Archer, Alice", "orcid": "0000-0002-1825-0097"}]
    assert metadata["license"] == "Apache-2.0"
    assert metadata["description"] == "<p>Notes.</p>" and metadata["version"] == "v1.1.0"  # still derived


@pytest.mark.slow
def test_zenodo_json_is_read_when_there_is_no_service_json(client, auth, project):
    project.repo.commit(ALICE, {".zenodo.json": json.dumps({"metadata": {"keywords": ["legacy"]}})})
    project.repo.tag("v1.1.0")
    release = archive(client, auth, enable(client, auth), project, "v1.1.0")
    assert release["status"] == "published", release["errors"]
    metadata = deposition_of(client, auth, release)["metadata"]
    assert metadata["keywords"] == ["legacy"]
    assert metadata["description"] == "A tool that greets."  # no notes: the repository's description


def test_invalid_service_json_fails_the_release_with_every_message_and_publishes_nothing(client, auth, project):
    bad = {"licence": "MIT", "license": "mit-licence", "upload_type": "sofware", "creators": [{"name": ", Jane"}]}
    project.repo.commit(ALICE, {".service.json": json.dumps(bad)})
    project.repo.tag("v2.0.0")
    release = archive(client, auth, enable(client, auth), project, "v2.0.0")
    assert release["status"] == "failed" and release["record_id"] is None
    errors = {e["field"]: e for e in release["errors"]}
    assert set(errors) == {"licence", "license", "upload_type", "creators.0.name"}
    assert errors["licence"]["message"] == "Unknown field name." and "'license'" in errors["licence"]["hint"]
    assert errors["license"]["message"].startswith("Not a valid license id: 'mit-licence'")
    assert "'MIT'" in errors["license"]["hint"]
    assert all(e["source"] == ".service.json" for e in release["errors"])
    assert release["links"]["retry"].endswith("/actions/retry")
    assert client.get(DEPOSITS, headers=auth).json == []
    assert client.get("/api/records/", headers={"Accept": "application/json"}).json == []


def test_broken_json_reports_line_and_column(client, auth, project):
    project.repo.commit(ALICE, {".service.json": '{\n  "title": "x",\n  "keywords": [1,]\n}'})
    project.repo.tag("v2.0.1")
    release = archive(client, auth, enable(client, auth), project, "v2.0.1")
    assert release["status"] == "failed"
    [error] = release["errors"]
    assert (error["line"], error["column"]) == (3, 18) and "not valid JSON" in error["message"]


@pytest.mark.slow
def test_citation_cff_only(client, auth, project):
    cff = """cff-version: 1.2.0
message: If you use this software, please cite it.
title: Tool
abstract: Greets people.
authors:
  - family-names: Archer
    given-names: Alice
    orcid: https://orcid.org/0000-0002-1825-0097
    affiliation: Example University
  - name: The Tool Team
keywords: [greeting, cli]
license: Apache-2.0
version: 0.0.1
"""
    project.repo.commit(ALICE, {"CITATION.cff": cff})
    project.repo.tag("v1.2.0")
    release = archive(client, auth, enable(client, auth), project, "v1.2.0")
    assert release["status"] == "published", release["errors"]
    metadata = deposition_of(client, auth, release)["metadata"]
    assert metadata["title"] == "Tool" and metadata["description"] == "<p>Greets people.</p>"
    assert metadata["creators"] == [
        {"name": "Archer, Alice", "orcid": "0000-0002-1825-0097", "affiliation": "Example University"},
        {"name": "The Tool Team"},
    ]
    assert metadata["keywords"] == ["greeting", "cli"] and metadata["license"] == "Apache-2.0"
    assert metadata["version"] == "v1.2.0"  # the tag, not CITATION.cff's often stale version


@pytest.mark.slow
def test_second_release_becomes_a_new_version(client, auth, project):
    repo = enable(client, auth)
    first = archive(client, auth, repo, project, "v1.0.0")
    project.repo.commit(ALICE, {"tool.py": "print('v2')\n", ".service.json": '{"keywords": ["v2"]}'})
    project.repo.tag("v2.0.0")
    second = archive(client, auth, repo, project, "v2.0.0", name="Second")
    assert second["status"] == "published", second["errors"]
    old, new = deposition_of(client, auth, first), deposition_of(client, auth, second)
    assert new["conceptrecid"] == old["conceptrecid"] and new["id"] != old["id"]
    assert [f["filename"] for f in new["files"]] == ["alice/tool-v2.0.0.zip"]
    assert [f["filename"] for f in old["files"]] == ["alice/tool-v1.0.0.zip"]
    assert new["metadata"]["version"] == "v2.0.0" and new["metadata"]["keywords"] == ["v2"]
    assert "keywords" not in old["metadata"]
    latest = client.get(f"/api/records/{old['id']}", headers={"Accept": "application/json"}).json
    assert latest["id"] == old["id"]
    hits = client.get("/api/records/", query_string={"all_versions": "1"}, headers={"Accept": "application/json"})
    assert sorted(r["id"] for r in hits.json) == sorted([old["id"], new["id"]])


@pytest.mark.slow
def test_duplicate_delivery_is_refused_after_the_first(client, auth, project):
    repo = enable(client, auth)
    project.release("v1.0.0")
    first = deliver(client, repo, project, "v1.0.0", action="published")
    assert first.status_code == 202
    again = deliver(client, repo, project, "v1.0.0", action="released")
    assert again.status_code == 409 and again.json == {"message": "The release has already been received.",
                                                       "status": 409}  # fmt: skip
    assert wait_for(client, auth, first.json["release"]["links"]["self"])["status"] == "published"
    assert len(client.get(DEPOSITS, headers=auth).json) == 1


def test_bad_signature_is_refused(client, auth, project):
    repo = enable(client, auth)
    project.release("v1.0.0")
    wrong = deliver(client, repo, project, "v1.0.0", secret="not-the-secret")
    assert wrong.status_code == 401 and "X-Hub-Signature-256" in wrong.json["message"]
    assert deliver(client, repo, project, "v1.0.0", signature="sha256=").status_code == 401
    assert client.post(repo["webhook"]["url"], json={"action": "published"}).status_code == 401
    assert client.get(repo["links"]["releases"], headers=auth).json == []


def test_disabled_and_unknown_repositories(client, auth, project):
    repo = enable(client, auth)
    assert client.delete(repo["links"]["self"], headers=auth).status_code == 204
    project.release("v1.0.0")
    response = deliver(client, repo, project, "v1.0.0")
    assert response.status_code == 409 and "not enabled" in response.json["message"]
    missing = dict(repo, webhook={**repo["webhook"], "url": repo["webhook"]["url"].replace("/hooks/", "/hooks/9")})
    assert deliver(client, missing, project, "v1.0.0").status_code == 404
    assert client.get(DEPOSITS, headers=auth).json == []


def test_ping_and_other_events_are_answered_without_archiving(client, auth, project):
    repo = enable(client, auth)
    project.release("v1.0.0")
    response = deliver(client, repo, project, "v1.0.0", action="deleted")
    assert response.status_code == 200 and response.json["message"].startswith("Ignored")
    assert client.get(repo["links"]["releases"], headers=auth).json == []


@pytest.mark.slow
def test_private_repository_token_failure_is_readable_and_can_be_retried(client, auth, project, standin):
    project.token = "good-token"
    repo = enable(client, auth, token="stale-token")
    release = archive(client, auth, repo, project, "v1.0.0")
    assert release["status"] == "failed"
    assert "401 Bad credentials" in release["errors"][0]["message"] and "token" in release["errors"][0]["message"]
    assert ("/repos/alice/tool", "Bearer stale-token") in standin.requests
    enable(client, auth, token="good-token")
    response = client.post(release["links"]["retry"], headers=auth)
    assert response.status_code == 202
    assert wait_for(client, auth, release["links"]["self"])["status"] == "published"
    assert client.post(release["links"]["retry"], headers=auth).status_code == 400  # only a failed one


def test_a_failure_after_the_draft_leaves_no_deposit_and_no_file(client, auth, project, settings, monkeypatch):
    from pathlib import Path

    from repository.errors import ValidationError, field_error
    from repository.releases import ingest

    def failing_publish(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise ValidationError(errors=[field_error("files", "Simulated failure while publishing.")])

    monkeypatch.setattr(ingest.actions, "publish", failing_publish)
    release = archive(client, auth, enable(client, auth), project, "v1.0.0")
    assert release["status"] == "failed"
    assert release["errors"] == [{"field": "files", "message": "Simulated failure while publishing."}]
    assert client.get(DEPOSITS, headers=auth).json == []
    assert [p for p in Path(settings.FILES_ROOT).rglob("*") if p.is_file()] == []


@pytest.mark.slow
def test_a_users_own_new_version_draft_is_left_alone(client, auth, project):
    repo = enable(client, auth)
    first = archive(client, auth, repo, project, "v1.0.0")
    response = client.post(f"{DEPOSITS}/{first['record_id']}/actions/newversion", headers=auth)
    draft_url = response.json["links"]["latest_draft"]
    project.repo.commit(ALICE, {"tool.py": "print('v2')\n"})
    project.repo.tag("v2.0.0")
    second = archive(client, auth, repo, project, "v2.0.0")
    assert second["status"] == "failed" and "new-version draft" in second["errors"][0]["message"]
    draft = client.get(draft_url, headers=auth)
    assert draft.status_code == 200 and draft.json["state"] == "unsubmitted"
    assert draft.json["metadata"]["version"] == "v1.0.0"  # untouched


def test_form_encoded_events_and_pings(client, auth, project):
    import hashlib
    import hmac
    from urllib.parse import urlencode

    repo = enable(client, auth)
    secret = repo["webhook"]["secret"].encode()

    def send(event: str, payload: dict):  # type: ignore[no-untyped-def]
        body = urlencode({"payload": json.dumps(payload)}).encode()
        signature = "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()
        return client.post(repo["webhook"]["url"], data=body, content_type="application/x-www-form-urlencoded",
                           headers={"X-GitHub-Event": event, "X-Hub-Signature-256": signature})  # fmt: skip

    assert send("ping", {"zen": "Keep it simple."}).json["message"].startswith("pong")
    project.release("v1.0.0")
    other = send("release", {"action": "published", "release": project.releases["v1.0.0"],
                             "repository": {"full_name": "mallory/tool"}})  # fmt: skip
    assert other.status_code == 400 and "mallory/tool" in other.json["message"]
    response = send("release", {"action": "published", "release": project.releases["v1.0.0"],
                                "repository": {"full_name": "Alice/Tool"}})  # fmt: skip
    assert response.status_code == 202
    assert wait_for(client, auth, response.json["release"]["links"]["self"])["status"] == "published"


def test_a_release_past_the_owners_quota_fails_and_keeps_nothing(make_settings, standin, project):
    """Release archives count against the same quotas as uploads: past the owner's total, the release fails with
    the quota's message and leaves no deposit and no file behind."""
    from pathlib import Path

    from helpers.http import https_client

    from app import create_app
    from repository.accounts.tokens import SCOPES, create_token, create_user

    settings = make_settings(RELEASES_API_URL=standin.url, USER_QUOTA_BYTES=100)
    application = create_app(settings)
    try:
        with application.extensions["repository"].db.write() as conn:
            _, token = create_token(conn, create_user(conn, "owner@example.org"), list(SCOPES))
        client, auth = https_client(application), {"Authorization": f"Bearer {token}"}
        release = archive(client, auth, enable(client, auth), project, "v1.0.0")
        assert release["status"] == "failed"
        assert "Quota exceeded" in release["errors"][0]["message"]
        assert client.get(DEPOSITS, headers=auth).json == []
        assert [p for p in Path(settings.FILES_ROOT).rglob("*") if p.is_file()] == []
    finally:
        application.extensions["repository"].releases.shutdown()
        application.extensions["repository"].db.dispose()
