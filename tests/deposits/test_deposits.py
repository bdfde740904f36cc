"""The deposition lifecycle over HTTP: create, validate, update, delete, publish, edit, discard, newversion."""

import threading
from pathlib import Path

import pytest
from helpers.factories import make_deposit, metadata, publish, published, upload
from helpers.http import https_client

from app import create_app

API = "/api/deposit/depositions"


def stored_files(settings) -> list[Path]:  # type: ignore[no-untyped-def]
    """Every file under FILES_ROOT, the temporary directory included."""
    return [p for p in Path(settings.FILES_ROOT).rglob("*") if p.is_file()]


@pytest.mark.slow
def test_create_empty_deposition(client, auth, settings):
    response = client.post(API, json={}, headers=auth)
    assert response.status_code == 201
    dep = response.json
    assert isinstance(dep["id"], int) and isinstance(dep["conceptrecid"], str)
    assert int(dep["conceptrecid"]) == dep["id"] - 1
    assert dep["state"] == "unsubmitted" and dep["submitted"] is False
    assert dep["title"] == "" and dep["files"] == [] and dep["metadata"] == {}
    assert "doi" not in dep and "record_id" not in dep
    assert response.headers["Location"] == f"{settings.BASE_URL}{API}/{dep['id']}"
    for link in ("bucket", "discard", "edit", "files", "html", "latest_draft", "latest_draft_html", "publish",
                 "self", "newversion"):
        assert dep["links"][link].startswith(settings.BASE_URL), link
    assert dep["links"]["latest_draft"] == dep["links"]["self"]


def test_metadata_in_the_create_body_is_stored(client, auth):
    dep = make_deposit(client, auth)
    again = client.get(f"{API}/{dep['id']}", headers=auth).json
    assert again["title"] == "Sensor readings from the north slope"
    assert again["metadata"]["creators"] == [{"name": "Doe, Jane", "affiliation": "Example University"}]


def test_prereserve_doi(client, auth, settings):
    dep = client.post(API, json={"metadata": {"prereserve_doi": True}}, headers=auth).json
    assert dep["metadata"]["prereserve_doi"] == {
        "doi": f"10.5281/{settings.DOI_NAMESPACE}.{dep['id']}",
        "recid": dep["id"],
    }


def test_validation_errors_come_all_at_once_with_dotted_paths(client, auth):
    response = client.post(
        API,
        json={"metadata": {"upload_type": "poem", "creators": [{"affiliation": "X"}], "colour": "red"}},
        headers=auth,
    )
    assert response.status_code == 400
    fields = {e["field"] for e in response.json["errors"]}
    assert {"metadata.upload_type", "metadata.creators.0.name", "metadata.colour"} <= fields
    assert any(e["message"] == "Unknown field name." for e in response.json["errors"])
    assert client.get(API, headers=auth).json == []  # nothing was stored


def test_body_must_be_json(client, auth):
    assert client.post(API, data="{}", headers=auth).status_code == 415
    assert client.post(API, data="{", headers=auth, content_type="application/json").status_code == 400
    assert client.post(API, json=[1], headers=auth).status_code == 400


def test_scopes_and_ownership(client, make_token):
    owner = {"Authorization": f"Bearer {make_token('owner@example.org')}"}
    other = {"Authorization": f"Bearer {make_token('other@example.org')}"}
    read_only = {"Authorization": f"Bearer {make_token('ro@example.org', scopes=('deposit:actions',))}"}
    writer = {"Authorization": f"Bearer {make_token('w@example.org', scopes=('deposit:write',))}"}
    assert client.post(API, json={}).status_code == 401
    assert client.post(API, json={}, headers=read_only).status_code == 403
    dep = make_deposit(client, owner)
    assert client.get(f"{API}/{dep['id']}", headers=other).status_code == 404
    assert client.put(f"{API}/{dep['id']}", json={"metadata": {}}, headers=other).status_code == 404
    assert client.get(API, headers=other).json == []
    mine = make_deposit(client, writer)
    upload(client, writer, mine)
    response = client.post(f"{API}/{mine['id']}/actions/publish", headers=writer)
    assert response.status_code == 403 and "deposit:actions" in response.json["message"]


def test_update_replaces_metadata_and_echoed_read_only_keys_pass(client, auth):
    dep = make_deposit(client, auth)
    body = {"metadata": {**dep["metadata"], "title": "New title", "doi": "", "prereserve_doi": True}}
    response = client.put(f"{API}/{dep['id']}", json=body, headers=auth)
    assert response.status_code == 200, response.json
    assert response.json["title"] == "New title"
    assert client.put(f"{API}/{dep['id']}", json={"title": "x"}, headers=auth).status_code == 400


def test_delete_draft(client, auth, settings):
    dep = make_deposit(client, auth)
    upload(client, auth, dep)
    response = client.delete(f"{API}/{dep['id']}", headers=auth)
    assert response.status_code == 201 and response.data == b""
    assert client.get(f"{API}/{dep['id']}", headers=auth).status_code == 404
    assert client.delete(f"{API}/{dep['id']}", headers=auth).status_code == 404
    assert stored_files(settings) == []


def test_publish_requires_fields_and_a_file(client, auth):
    dep = client.post(API, json={}, headers=auth).json
    response = client.post(f"{API}/{dep['id']}/actions/publish", headers=auth)
    assert response.status_code == 400
    fields = {e.get("field") for e in response.json["errors"]}
    assert {"metadata.upload_type", "metadata.title", "metadata.creators", "metadata.description", "files"} <= fields
    assert client.get(f"{API}/{dep['id']}", headers=auth).json["state"] == "unsubmitted"


@pytest.mark.slow
def test_publish(client, auth, settings):
    dep = published(client, auth)
    assert dep["state"] == "done" and dep["submitted"] is True
    assert dep["doi"] == f"10.5281/{settings.DOI_NAMESPACE}.{dep['id']}"
    assert dep["doi_url"] == "https://doi.org/" + dep["doi"]
    assert dep["record_id"] == dep["id"]
    assert dep["metadata"]["doi"] == dep["doi"]
    assert dep["metadata"]["license"] == "cc-zero" and dep["metadata"]["access_right"] == "open"
    assert dep["conceptdoi"] == f"10.5281/{settings.DOI_NAMESPACE}.{dep['conceptrecid']}"
    assert dep["links"]["latest"].endswith(f"/api/records/{dep['id']}")
    # Published: locked.
    assert client.delete(f"{API}/{dep['id']}", headers=auth).status_code == 403
    file_id = dep["files"][0]["id"]
    assert client.delete(f"{API}/{dep['id']}/files/{file_id}", headers=auth).status_code == 403
    assert client.post(f"{API}/{dep['id']}/actions/publish", headers=auth).status_code == 400
    assert client.put(f"{API}/{dep['id']}", json={"metadata": metadata()}, headers=auth).status_code == 403


@pytest.mark.slow
def test_sandbox_prefix(make_settings, make_token):
    app = create_app(make_settings(SANDBOX=True))
    client = https_client(app)
    auth = {"Authorization": f"Bearer {make_token()}"}
    dep = published(client, auth)
    assert dep["doi"].startswith("10.5072/")


@pytest.mark.slow
def test_edit_discard_republish(client, auth):
    dep = published(client, auth)
    url = f"{API}/{dep['id']}"
    response = client.post(f"{url}/actions/edit", headers=auth)
    assert response.status_code == 201 and response.json["state"] == "inprogress"
    assert response.json["submitted"] is True
    assert client.post(f"{url}/actions/edit", headers=auth).status_code == 400
    changed = {**response.json["metadata"], "title": "Edited title"}
    assert client.put(url, json={"metadata": changed}, headers=auth).json["title"] == "Edited title"
    discarded = client.post(f"{url}/actions/discard", headers=auth)
    assert discarded.status_code == 201 and discarded.json["title"] == dep["title"]
    assert discarded.json["state"] == "done"
    assert client.post(f"{url}/actions/discard", headers=auth).status_code == 400
    client.post(f"{url}/actions/edit", headers=auth)
    client.put(url, json={"metadata": changed}, headers=auth)
    again = publish(client, auth, dep)
    assert again["title"] == "Edited title" and again["state"] == "done"


def test_doi_cannot_change_after_publish(client, auth):
    dep = published(client, auth)
    url = f"{API}/{dep['id']}"
    client.post(f"{url}/actions/edit", headers=auth)
    body = {"metadata": {**dep["metadata"], "doi": "10.1234/other"}}
    response = client.put(url, json=body, headers=auth)
    assert response.status_code == 400
    assert response.json["errors"][0]["message"] == "The DOI cannot be changed."


def test_external_doi(client, auth):
    dep = published(client, auth, doi="https://doi.org/10.1234/External.1")
    assert dep["doi"] == "10.1234/external.1"
    assert "conceptdoi" not in dep
    taken = client.post(API, json={"metadata": metadata(doi="doi:10.1234/EXTERNAL.1")}, headers=auth)
    assert taken.status_code == 400 and "already exists" in taken.json["errors"][0]["message"]
    assert client.post(f"{API}/{dep['id']}/actions/newversion", headers=auth).status_code == 400


def test_managed_prefix_is_refused(client, auth):
    response = client.post(API, json={"metadata": {"doi": "10.5281/someone.else"}}, headers=auth)
    assert response.status_code == 400
    assert "administrated locally" in response.json["errors"][0]["message"]


def test_newversion(client, auth):
    dep = published(client, auth)
    response = client.post(f"{API}/{dep['id']}/actions/newversion", headers=auth)
    assert response.status_code == 201
    assert response.json["id"] == dep["id"]
    draft_url = response.json["links"]["latest_draft"]
    assert draft_url != response.json["links"]["self"]
    draft_id = int(draft_url.rsplit("/", 1)[1])
    # A second call changes nothing.
    again = client.post(f"{API}/{dep['id']}/actions/newversion", headers=auth).json
    assert again["links"]["latest_draft"] == draft_url
    draft = client.get(f"{API}/{draft_id}", headers=auth).json
    assert draft["state"] == "unsubmitted" and draft["conceptrecid"] == dep["conceptrecid"]
    assert draft["metadata"]["title"] == dep["metadata"]["title"]
    assert draft["metadata"]["prereserve_doi"]["recid"] == draft_id
    assert [f["id"] for f in draft["files"]] == [f["id"] for f in dep["files"]]  # same file instances
    # The same files as before: refused.
    response = client.post(f"{API}/{draft_id}/actions/publish", headers=auth)
    assert response.status_code == 400
    assert "differ" in response.json["errors"][0]["message"]
    client.delete(f"{API}/{draft_id}/files/{draft['files'][0]['id']}", headers=auth)
    upload(client, auth, draft, content=b"a,b\n3,4\n")
    second = publish(client, auth, draft)
    assert second["conceptdoi"] == dep["conceptdoi"] and second["doi"] != dep["doi"]
    # Only the latest version gets new versions.
    assert client.post(f"{API}/{dep['id']}/actions/newversion", headers=auth).status_code == 400
    # The first version's files are untouched by the second's changes.
    first = client.get(f"{API}/{dep['id']}", headers=auth).json
    assert first["files"][0]["checksum"] == dep["files"][0]["checksum"]


def test_deleting_a_new_version_draft_keeps_the_concept(client, auth):
    dep = published(client, auth)
    draft_url = client.post(f"{API}/{dep['id']}/actions/newversion", headers=auth).json["links"]["latest_draft"]
    draft_id = int(draft_url.rsplit("/", 1)[1])
    assert client.delete(f"{API}/{draft_id}", headers=auth).status_code == 201
    original = client.get(f"{API}/{dep['id']}", headers=auth)
    assert original.status_code == 200 and original.json["files"][0]["checksum"] == dep["files"][0]["checksum"]
    assert original.json["links"]["latest_draft"] == original.json["links"]["self"]


def test_two_simultaneous_publishes_give_one_result(app, auth):
    client = https_client(app)
    dep = make_deposit(client, auth)
    upload(client, auth, dep)
    statuses = []

    def go() -> None:
        statuses.append(https_client(app).post(f"{API}/{dep['id']}/actions/publish", headers=auth).status_code)

    threads = [threading.Thread(target=go) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(statuses) == [202, 400]


@pytest.mark.slow
def test_two_simultaneous_newversions_give_one_draft(app, auth):
    client = https_client(app)
    dep = published(client, auth)
    drafts = []

    def go() -> None:
        response = https_client(app).post(f"{API}/{dep['id']}/actions/newversion", headers=auth)
        drafts.append(response.json["links"]["latest_draft"])

    threads = [threading.Thread(target=go) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(drafts)) == 1
    listed = client.get(f"{API}?all_versions=1&status=draft", headers=auth).json
    assert len(listed) == 1


def test_edit_while_being_integrated_is_409(make_settings, make_token):
    # A DOI agency that cannot be reached: registration stays pending, so the record is being integrated.
    settings = make_settings(REGISTRAR="datacite", DOI_PREFIX="10.12345", DATACITE_URL="https://127.0.0.1:9",
                             DATACITE_USERNAME="X.Y", DATACITE_PASSWORD="secret")
    client = https_client(create_app(settings))
    auth = {"Authorization": f"Bearer {make_token()}"}
    dep = published(client, auth)
    response = client.post(f"{API}/{dep['id']}/actions/edit", headers=auth)
    assert response.status_code == 409
    assert "retry" in response.json["message"]


@pytest.mark.slow
def test_list_depositions(client, auth):
    first = make_deposit(client, auth, title="Alpha study")
    second = published(client, auth, title="Beta study")
    listed = client.get(API, headers=auth)
    assert listed.status_code == 200 and isinstance(listed.json, list)
    assert [d["id"] for d in listed.json] == [second["id"], first["id"]]
    assert [d["id"] for d in client.get(f"{API}?sort=-mostrecent", headers=auth).json] == [first["id"], second["id"]]
    assert [d["id"] for d in client.get(f"{API}?status=published", headers=auth).json] == [second["id"]]
    assert [d["id"] for d in client.get(f"{API}?status=draft", headers=auth).json] == [first["id"]]
    page = client.get(f"{API}?size=1&page=2", headers=auth)
    assert [d["id"] for d in page.json] == [first["id"]]
    assert 'rel="prev"' in page.headers["Link"]
    for bad in ("size=0", "page=x", "status=maybe", "sort=oldest"):
        response = client.get(f"{API}?{bad}", headers=auth)
        assert response.status_code == 400, bad
        assert response.json["errors"][0]["field"] == bad.split("=")[0]


def test_list_hides_older_versions_unless_asked(client, auth):
    dep = published(client, auth)
    client.post(f"{API}/{dep['id']}/actions/newversion", headers=auth)
    # The published version stays the latest until the new one is published: both listed (issue 15, 17).
    assert len(client.get(API, headers=auth).json) == 2
    assert len(client.get(f"{API}?all_versions=true", headers=auth).json) == 2


def test_list_query(client, auth):
    alpha = make_deposit(client, auth, title="Alpha study of lakes", keywords=["water"])
    beta = make_deposit(client, auth, title="Beta study of rivers")
    search = lambda q: [d["id"] for d in client.get(API, query_string={"q": q}, headers=auth).json]  # noqa: E731
    assert search("alpha") == [alpha["id"]]
    assert sorted(search("study")) == sorted([alpha["id"], beta["id"]])
    assert search('title:"study of rivers"') == [beta["id"]]
    assert search("river") == [beta["id"]] and search('"study of river"') == []  # stemmed words, exact phrases
    assert search("keywords:water") == [alpha["id"]]
    assert search("riv*") == [beta["id"]]
    assert search("study AND NOT lakes") == [beta["id"]]
    response = client.get(API, query_string={"q": "title:(open"}, headers=auth)
    assert response.status_code == 400 and response.json["errors"][0]["field"] == "q"
