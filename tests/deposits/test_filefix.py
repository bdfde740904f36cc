"""Fixing a published version's files within FILES_EDIT_DAYS (docs/researchers/corrections.md#fixing-files): unlocked
once, files replaced or added through the usual file interfaces, published again with the same DOI, each change in
the file history of the record's JSON; outside the window, twice, on someone else's: refused, nothing changed. A
client that does not unlock keeps the specification's 403s. The window is moved by the app's clock."""

from __future__ import annotations

import hashlib

import pytest
from helpers.factories import published, upload
from helpers.xsd import schema
from lxml import etree
from sqlalchemy import select

from repository.storage.tables.corrections import file_changes, file_unlocks
from repository.storage.tables.outbox import outbox

API = "/api/deposit/depositions"
DAY = 86400


def _md5(data: bytes) -> str:
    return "md5:" + hashlib.md5(data).hexdigest()


def _unlock(client, auth, dep_id):  # type: ignore[no-untyped-def]
    return client.post(f"{API}/{dep_id}/actions/unlockfiles", headers=auth)


@pytest.mark.slow  # 0.4 s and more of work
def test_fix_a_file_and_publish_again(app, client, auth, clock):
    dep = published(client, auth, content=b"a,b\n1,2\n")
    recid, doi = dep["id"], dep["doi"]
    bucket = dep["links"]["bucket"].removeprefix("https://localhost")
    # Without the action, the specification's rule: the files cannot change.
    assert client.put(f"{bucket}/data.csv", headers=auth, data=b"a,b\n1,3\n").status_code == 403
    assert client.delete(f"{API}/{recid}/files/{dep['files'][0]['id']}", headers=auth).status_code == 403
    clock.advance(29 * DAY)
    opened = _unlock(client, auth, recid)
    assert opened.status_code == 201, opened.json
    assert opened.json["state"] == "inprogress"
    # The same bytes again change nothing: refused.
    same = client.put(f"{bucket}/data.csv", headers=auth, data=b"a,b\n1,2\n")
    assert same.status_code == 400 and "same content" in same.json["message"]
    assert client.put(f"{bucket}/data.csv", headers=auth, data=b"a,b\n1,3\n").status_code == 200
    upload(client, auth, {"id": recid}, name="readme.txt", content=b"fixed")
    republished = client.post(f"{API}/{recid}/actions/publish", headers=auth)
    assert republished.status_code == 202, republished.json
    assert republished.json["doi"] == doi and republished.json["state"] == "done"
    record = client.get(f"/api/records/{recid}").json
    assert record["doi"] == doi
    assert sorted(f["key"] for f in record["files"]) == ["data.csv", "readme.txt"]
    history = record["files_history"]
    assert [(h["key"], h["action"]) for h in history] == [("data.csv", "replaced"), ("readme.txt", "added")]
    assert history[0]["old_checksum"] == _md5(b"a,b\n1,2\n") and history[0]["new_checksum"] == _md5(b"a,b\n1,3\n")
    assert history[1]["old_checksum"] is None and history[1]["new_size"] == 5
    assert all(h["user"] == record["owners"][0] and h["changed"] for h in history)
    # DataCite's kernel says it too: an Updated date naming the changes, valid against the official schema.
    xml = etree.fromstring(client.get(f"/api/records/{recid}?format=datacite").data)
    schema("datacite4").assertValid(xml)
    updated = xml.find(".//{http://datacite.org/schema/kernel-4}date[@dateType='Updated']")
    assert updated is not None and updated.text == history[0]["changed"][:10]
    assert updated.get("dateInformation") == ("Files changed after publication: data.csv replaced, "
                                              "readme.txt added")
    download = client.get(record["files"][0]["links"]["self"].removeprefix("https://localhost"))
    assert download.data in (b"a,b\n1,3\n", b"fixed")
    # Locked again, for good: the rule holds once more, and a second unlock is refused.
    assert client.put(f"{bucket}/data.csv", headers=auth, data=b"a,b\n1,4\n").status_code == 403
    twice = _unlock(client, auth, recid)
    assert twice.status_code == 403 and "once already" in twice.json["message"]
    with app.extensions["repository"].db.read() as conn:
        registrations = conn.execute(select(outbox.c.id).where(outbox.c.kind == "register_doi",
                                                               outbox.c.recid == recid)).all()
    assert len(registrations) == 2  # the DOI's metadata (sizes, formats) registered again


def test_discard_puts_the_published_files_back(app, client, auth, clock):
    dep = published(client, auth)
    recid = dep["id"]
    assert _unlock(client, auth, recid).status_code == 201
    files = client.get(f"{API}/{recid}/files", headers=auth).json
    assert client.delete(f"{API}/{recid}/files/{files[0]['id']}", headers=auth).status_code == 204
    upload(client, auth, {"id": recid}, name="other.csv", content=b"x\n1\n")
    assert client.post(f"{API}/{recid}/actions/discard", headers=auth).status_code == 201
    after = client.get(f"{API}/{recid}/files", headers=auth).json
    assert [f["filename"] for f in after] == ["data.csv"] and after[0]["checksum"] == files[0]["checksum"]
    assert "files_history" not in client.get(f"/api/records/{recid}").json
    assert _unlock(client, auth, recid).status_code == 403  # the one unlock is used


@pytest.mark.slow
def test_refusals_change_nothing(app, client, auth, make_token, clock):
    dep = published(client, auth)
    recid = dep["id"]
    other = {"Authorization": "Bearer " + make_token("other@example.org")}
    assert _unlock(client, other, recid).status_code == 404
    draft = client.post(f"{API}/", headers=auth, json={}).json
    assert _unlock(client, auth, draft["id"]).status_code == 400
    assert client.post(f"{API}/{recid}/actions/edit", headers=auth).status_code == 201
    assert _unlock(client, auth, recid).status_code == 400  # being edited
    assert client.post(f"{API}/{recid}/actions/discard", headers=auth).status_code == 201
    clock.advance(30 * DAY)
    late = _unlock(client, auth, recid)
    assert late.status_code == 403 and "within 30 days" in late.json["message"]
    assert "new version" in late.json["message"]
    assert client.get(f"{API}/{recid}", headers=auth).json["state"] == "done"
    with app.extensions["repository"].db.read() as conn:
        assert conn.execute(select(file_unlocks)).first() is None
        assert conn.execute(select(file_changes)).first() is None
    clock.offset = clock.offset * 0
    assert client.post(f"{API}/{recid}/actions/delete", headers=auth, json={"reason": "mistake"}).status_code == 200
    assert _unlock(client, auth, recid).status_code == 410


def test_publishing_without_files_is_refused(app, client, auth, clock):
    dep = published(client, auth)
    recid = dep["id"]
    assert _unlock(client, auth, recid).status_code == 201
    files = client.get(f"{API}/{recid}/files", headers=auth).json
    client.delete(f"{API}/{recid}/files/{files[0]['id']}", headers=auth)
    refused = client.post(f"{API}/{recid}/actions/publish", headers=auth)
    assert refused.status_code == 400 and refused.json["errors"][0]["field"] == "files"
    assert client.get(f"/api/records/{recid}").json["files"][0]["key"] == "data.csv"
