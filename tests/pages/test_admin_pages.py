"""The administration pages over HTTP (docs/operators/administration.md): a moderator blocks a user and takes a
record down, an administrator gives roles and reads the audit log; everyone else gets a 403 page and an audit entry;
forms without the CSRF token change nothing."""

from __future__ import annotations

import re

import pytest
from helpers.factories import published
from helpers.http import https_client
from helpers.pages import post_form, referer, signed_in

from repository.accounts import admin, audit
from repository.accounts.audit import Actor
from repository.accounts.tokens import get_user_by_email

PASSWORD = "correct horse battery"


def _role(app, email: str, role: str) -> int:
    with app.extensions["repository"].db.write() as conn:
        user = get_user_by_email(conn, email)
        assert user is not None
        admin.set_role(conn, Actor.operator(), user["id"], role)
        return int(user["id"])


def _entries(app, **args):
    with app.extensions["repository"].db.read() as conn:
        return audit.search(conn, **args)[0]


def test_a_moderator_blocks_a_user_and_cannot_change_roles(app, client):
    signed_in(client, app, "mod@example.org", PASSWORD)
    spammer = https_client(app)
    signed_in(spammer, app, "spam@example.org", PASSWORD)
    assert client.get("/admin/").status_code == 403
    _role(app, "mod@example.org", "moderator")
    spam_id = _role(app, "spam@example.org", "none")
    found = client.get("/admin/?q=spam").get_data(as_text=True)
    assert f'href="/admin/users/{spam_id}"' in found
    page = client.get(f"/admin/users/{spam_id}").get_data(as_text=True)
    assert "Block this user" in page and "Save the role" not in page  # a moderator sees no role form
    assert spammer.get("/deposit").status_code == 200
    answer = post_form(client, f"/admin/users/{spam_id}/block", {"reason": "Links to a casino"},
                       page=f"/admin/users/{spam_id}")
    assert answer.status_code == 303
    assert "Blocked: Links to a casino" in client.get(f"/admin/users/{spam_id}").get_data(as_text=True)
    assert spammer.get("/deposit").status_code in (302, 303)  # signed out at once
    refused = post_form(client, f"/admin/users/{spam_id}/role", {"role": "admin"}, page=f"/admin/users/{spam_id}")
    assert refused.status_code == 403
    assert client.get("/admin/audit/").status_code == 403
    assert [e["action"] for e in _entries(app, target=f"user:{spam_id}")] == ["user.block"]
    assert len(_entries(app, action="admin.refused")) == 3


def test_a_form_without_the_csrf_token_changes_nothing(app, client):
    signed_in(client, app, "root@example.org", PASSWORD)
    root_id = _role(app, "root@example.org", "admin")
    answer = client.post(f"/admin/users/{root_id}/role", data={"role": "none"}, headers=referer("/admin/"))
    assert answer.status_code == 400
    assert [e["actor_id"] for e in _entries(app, action="user.")] == [None]  # the operator's only


@pytest.mark.slow  # 0.4 s and more of work
def test_an_admin_takes_a_record_down_with_a_reason_then_restores_it(app, client, auth):
    signed_in(client, app, "root@example.org", PASSWORD)
    _role(app, "root@example.org", "admin")
    recid = published(client, auth)["id"]
    page = f"/admin/records/{recid}"
    assert post_form(client, f"{page}/takedown", {"reason": "", "note": ""}, page=page).status_code == 303
    assert "Give the public reason" in client.get(page).get_data(as_text=True)
    assert client.get(f"/api/records/{recid}").status_code == 200
    post_form(client, f"{page}/takedown", {"reason": "Plagiarised", "note": "complaint 12"}, page=page)
    shown = client.get(page).get_data(as_text=True)
    assert "Plagiarised" in shown and "complaint 12" in shown and "Restore this record" in shown
    tombstone = client.get(f"/records/{recid}")
    assert tombstone.status_code == 410 and "Plagiarised" in tombstone.get_data(as_text=True)
    assert "complaint 12" not in tombstone.get_data(as_text=True)
    post_form(client, f"{page}/restore", {}, page=page)
    assert client.get(f"/records/{recid}").status_code == 200
    log = client.get("/admin/audit/?target=record:" + str(recid)).get_data(as_text=True)
    assert "record.takedown" in log and "record.restore" in log


@pytest.mark.slow  # 0.4 s and more of work
def test_the_owners_deletion_requests_are_accepted_or_declined(app, client, auth):
    signed_in(client, app, "mod@example.org", PASSWORD)
    _role(app, "mod@example.org", "moderator")
    kept, dropped = published(client, auth)["id"], published(client, auth)["id"]
    for recid in (kept, dropped):
        asked = client.post(f"/api/deposit/depositions/{recid}/actions/requestdeletion",
                            json={"reason": "duplicate", "note": f"same as another {recid}"}, headers=auth)
        assert asked.status_code == 202, asked.get_json()
    listing = client.get("/admin/requests/").get_data(as_text=True)
    assert f"same as another {kept}" in listing and "A duplicate of another record" in listing
    ids = [int(i) for i in re.findall(r'action="/admin/requests/(\d+)/accept"', listing)]
    post_form(client, f"/admin/requests/{ids[0]}/decline", {}, page="/admin/requests/")
    post_form(client, f"/admin/requests/{ids[1]}/accept", {}, page="/admin/requests/")
    assert client.get(f"/api/records/{kept}").status_code == 200
    gone = client.get(f"/api/records/{dropped}")
    assert gone.status_code == 410 and "A duplicate of another record" in gone.get_json()["note"]
    assert post_form(client, f"/admin/requests/{ids[1]}/accept", {}, page="/admin/requests/").status_code == 404
    assert "No open requests" in client.get("/admin/requests/").get_data(as_text=True)
    assert [e["action"] for e in _entries(app, action="request.")] == ["request.accept", "request.decline"]


def test_an_admin_resends_a_confirmation_exports_and_deletes_an_account(app, client):
    from helpers.mailbox import sent_mail
    from helpers.pages import sign_up

    signed_in(client, app, "root@example.org", PASSWORD)
    _role(app, "root@example.org", "admin")
    assert sign_up(https_client(app), "late@example.org", PASSWORD).status_code in (302, 303)
    late_id = _role(app, "late@example.org", "none")
    page = f"/admin/users/{late_id}"
    html = client.get(page).get_data(as_text=True)
    assert "<title>User late@example.org" in html and html.count('id="data-heading"') == 1
    before = len(sent_mail(app, "late@example.org"))
    assert post_form(client, f"{page}/resend", {}, page=page).status_code == 303
    assert len(sent_mail(app, "late@example.org")) == before + 1
    download = client.get(f"{page}/export")
    assert download.headers["Content-Disposition"] == f'attachment; filename="user-{late_id}.json"'
    assert download.get_json()["account"]["email"] == "late@example.org"
    post_form(client, f"{page}/delete", {"confirm": "someone@example.org"}, page=page)
    assert "Type the e-mail address of the account" in client.get(page).get_data(as_text=True)
    answer = post_form(client, f"{page}/delete", {"confirm": "late@example.org"}, page=page)
    assert answer.status_code == 303 and answer.headers["Location"].endswith("/admin/")
    assert f"deleted-{late_id}@invalid" in client.get(page).get_data(as_text=True)
    assert [e["action"] for e in _entries(app, target=f"user:{late_id}")][:3] == [
        "user.delete", "user.export", "user.resend_confirmation"]
