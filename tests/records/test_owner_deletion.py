"""An owner deletes a version within RECORD_DELETE_DAYS, with a reason (docs/researchers/corrections.md): a
tombstone answering 410 with the reason, the DOI hidden through the outbox, `status="deleted"` in OAI-PMH, out of
search and the sitemap, the other versions kept and the concept leading to the newest one left; after the window
only a deletion request, listed for the administrators. The window is moved by the app's clock."""

from __future__ import annotations

import pytest
from helpers.factories import edit, new_version, published
from sqlalchemy import select

from repository.cli import COMMANDS, invoke
from repository.storage.tables.corrections import deletion_requests, record_deletions
from repository.storage.tables.outbox import outbox
from repository.storage.tables.records import records

API = "/api/deposit/depositions"
DAY = 86400


def _delete(client, auth, recid, **body):  # type: ignore[no-untyped-def]
    return client.post(f"{API}/{recid}/actions/delete", headers=auth, json=body)


def _outbox(app, kind, recid):  # type: ignore[no-untyped-def]
    with app.extensions["repository"].db.read() as conn:
        query = select(outbox.c.done).where(outbox.c.kind == kind, outbox.c.recid == recid)
        return list(conn.execute(query).scalars())


def test_owner_deletes_within_the_window(app, client, auth, clock):
    dep = published(client, auth)
    recid = dep["id"]
    clock.advance(29 * DAY)
    answer = _delete(client, auth, recid, reason="personal-data", note="A participant's name in row 2.")
    assert answer.status_code == 200, answer.json
    assert answer.json["reason"] == {"id": "personal-data", "title": "Contains personal or sensitive data"}
    gone = client.get(f"/api/records/{recid}")
    assert gone.status_code == 410
    assert gone.json["message"] == "PID has been deleted."
    assert gone.json["reason"]["id"] == "personal-data"
    assert gone.json["note"] == "A participant's name in row 2."
    assert gone.json["deleted"] == answer.json["deleted"]
    assert client.get("/api/records/").json["hits"]["total"] == 0
    listed = client.get("/oai2d?verb=GetRecord&metadataPrefix=oai_dc&identifier=oai:localhost:" + str(recid))
    assert 'status="deleted"' in listed.data.decode()
    app.extensions["repository"].indexer.run_pass(grace=0)
    assert [done is not None for done in _outbox(app, "hide_doi", recid)] == [True]
    sitemap = client.get("/sitemap-0.xml").data.decode()
    assert f"/records/{recid}<" not in sitemap
    # Twice: gone already, nothing changes.
    again = _delete(client, auth, recid, reason="mistake")
    assert again.status_code == 410 and again.json["message"] == "This version is deleted already."
    assert len(_outbox(app, "hide_doi", recid)) == 1


@pytest.mark.slow
def test_takedown_by_the_administrators_keeps_its_plain_410(app, client, auth, settings):
    from scripts import takedown

    dep = published(client, auth)
    assert takedown.main(["--recid", str(dep["id"])], settings) == 0
    assert client.get(f"/api/records/{dep['id']}").json == {"message": "PID has been deleted.", "status": 410}


def test_bad_input_changes_nothing(app, client, auth, make_token, clock):
    dep = published(client, auth)
    recid = dep["id"]
    cases = [
        ({}, 400, "reason"),
        ({"reason": "bored"}, 400, "reason"),
        ({"reason": "other"}, 400, "note"),
        ({"reason": "other", "note": "   "}, 400, "note"),
        ({"reason": "mistake", "note": 5}, 400, "note"),
        ({"reason": "mistake", "note": "x" * 2001}, 400, "note"),
        # Reasons of the wrong JSON type: no key of the list (a list cannot even be looked up in it).
        ({"reason": ["other"]}, 400, "reason"),
        ({"reason": {"id": "other"}}, 400, "reason"),
        ({"reason": None}, 400, "reason"),
    ]
    for body, status, field in cases:
        answer = _delete(client, auth, recid, **body)
        assert answer.status_code == status, (body, answer.json)
        assert [e["field"] for e in answer.json["errors"]] == [field], body
        asked = client.post(f"{API}/{recid}/actions/requestdeletion", headers=auth, json=body)
        assert asked.status_code == status and [e["field"] for e in asked.json["errors"]] == [field], body
    assert client.post(f"{API}/{recid}/actions/delete", headers=auth, data="reason=mistake",
                       content_type="application/x-www-form-urlencoded").status_code == 415
    other = {"Authorization": "Bearer " + make_token("other@example.org")}
    stranger = _delete(client, other, recid, reason="mistake")
    assert stranger.status_code == 404 and stranger.json["status"] == 404
    assert client.post(f"{API}/{recid}/actions/requestdeletion", headers=other,
                       json={"reason": "mistake"}).status_code == 404
    assert _delete(client, auth, 999999, reason="mistake").status_code == 404
    read_only = {"Authorization": "Bearer " + make_token("owner@example.org", ("deposit:write",))}
    assert _delete(client, read_only, recid, reason="mistake").status_code == 403
    edit(client, auth, recid)
    busy = _delete(client, auth, recid, reason="mistake")
    assert busy.status_code == 409 and "discard" in busy.json["message"]
    assert client.get(f"/api/records/{recid}").status_code == 200
    with app.extensions["repository"].db.read() as conn:
        assert conn.execute(select(records.c.deleted).where(records.c.id == recid)).scalar() is None
        assert conn.execute(select(record_deletions)).first() is None


def test_after_the_window_only_a_request(app, client, auth, clock, settings, capsys):
    dep = published(client, auth)
    recid = dep["id"]
    clock.advance(30 * DAY)
    late = _delete(client, auth, recid, reason="mistake")
    assert late.status_code == 403
    assert "within 30 days" in late.json["message"] and "deletion request" in late.json["message"]
    assert client.get(f"/api/records/{recid}").status_code == 200
    asked = client.post(f"{API}/{recid}/actions/requestdeletion", headers=auth,
                        json={"reason": "duplicate", "note": "Same as record 12."})
    assert asked.status_code == 202, asked.json
    assert asked.json["state"] == "open" and asked.json["reason"]["id"] == "duplicate"
    twice = client.post(f"{API}/{recid}/actions/requestdeletion", headers=auth, json={"reason": "duplicate"})
    assert twice.status_code == 409
    assert invoke(COMMANDS["deletion-requests"], [], settings) == 0
    out = capsys.readouterr().out
    assert f"\t{recid}\t" in out and "duplicate" in out and "Same as record 12." in out
    with app.extensions["repository"].db.read() as conn:
        assert len(conn.execute(select(deletion_requests)).all()) == 1


def test_a_doi_registered_elsewhere_is_only_requested(app, client, auth, clock):
    dep = published(client, auth, doi="10.9999/elsewhere.1")
    refused = _delete(client, auth, dep["id"], reason="mistake")
    assert refused.status_code == 403 and "registered elsewhere" in refused.json["message"]
    assert client.get(f"/api/records/{dep['id']}").status_code == 200


def test_other_versions_stay_and_the_concept_leads_to_the_newest_left(app, client, auth, clock):
    first = published(client, auth)
    second = new_version(client, auth, first, b"a,b\n3,4\n")
    concept = first["conceptrecid"]
    assert client.get(f"/api/records/{concept}").headers["Location"].endswith(f"/api/records/{second}")
    registered_before = len(_outbox(app, "register_doi", first["id"]))
    assert _delete(client, auth, second, reason="mistake").status_code == 200
    assert client.get(f"/api/records/{second}").status_code == 410
    kept = client.get(f"/api/records/{first['id']}")
    assert kept.status_code == 200
    assert kept.json["metadata"]["relations"]["version"][0]["is_last"] is True
    assert client.get(f"/api/records/{concept}").headers["Location"].endswith(f"/api/records/{first['id']}")
    # The concept DOI's metadata follows the newest version left.
    assert len(_outbox(app, "register_doi", first["id"])) == registered_before + 1
    assert client.get("/api/records/").json["hits"]["total"] == 1


def test_a_deleted_version_is_not_edited_or_versioned(app, client, auth, clock):
    dep = published(client, auth)
    assert _delete(client, auth, dep["id"], reason="mistake").status_code == 200
    for action in ("edit", "newversion", "unlockfiles"):
        answer = client.post(f"{API}/{dep['id']}/actions/{action}", headers=auth)
        assert answer.status_code == 410, (action, answer.json)
    assert client.post(f"{API}/{dep['id']}/actions/requestdeletion", headers=auth,
                       json={"reason": "mistake"}).status_code == 410
