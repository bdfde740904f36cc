"""The moderation pages over HTTP (docs/operators/moderation.md): a moderator bans a link domain, the held
publication shows in the queue and is approved; a record is hidden while reviewed and unhidden from its moderation
page; the queue blocks an owner; everyone else gets a 403 page and an audit entry; bad input changes nothing."""

from __future__ import annotations

import pytest
from helpers.factories import published
from helpers.http import https_client
from helpers.mailbox import body, sent_mail
from helpers.pages import post_form, signed_in

from repository.accounts import admin, audit
from repository.accounts.audit import Actor
from repository.accounts.tokens import get_user_by_email

PASSWORD = "correct horse battery"
CASINO = '<p>Play at <a href="https://win.casino.example/">the tables</a> today, the data is there.</p>'


def _role(app, email: str, role: str) -> int:  # type: ignore[no-untyped-def]
    with app.extensions["repository"].db.write() as conn:
        user = get_user_by_email(conn, email)
        assert user is not None
        admin.set_role(conn, Actor.operator(), user["id"], role)
        return int(user["id"])


def _actions(app, **args) -> list[str]:  # type: ignore[no-untyped-def]
    with app.extensions["repository"].db.read() as conn:
        return [e["action"] for e in audit.search(conn, **args)[0]]


@pytest.mark.slow  # a whole walk through several requests: 0.4 s and more
def test_a_moderator_bans_a_domain_and_approves_the_held_publication(app, client, auth):
    signed_in(client, app, "mod@example.org", PASSWORD)
    _role(app, "mod@example.org", "moderator")
    queue = "/admin/moderation/"
    assert "Nothing to review" in client.get(queue).get_data(as_text=True)
    assert post_form(client, "/admin/moderation/domains", {"domain": "not a domain"}, page=queue).status_code == 303
    assert "Give a domain name" in client.get(queue).get_data(as_text=True)
    assert post_form(client, "/admin/moderation/domains", {"domain": "Casino.example"}, page=queue).status_code == 303
    recid = published(client, auth, title="Table games", description=CASINO)["record_id"]
    page = client.get(queue).get_data(as_text=True)
    assert "Table games" in page and "Links to a banned domain: casino.example." in page
    assert "win.casino.example" in page
    assert https_client(app).get(f"/records/{recid}").status_code == 404  # not public while it waits
    held = client.get(f"/records/{recid}")
    assert held.status_code == 200 and held.headers["X-Robots-Tag"] == "noindex"
    assert "awaits a moderator" in held.get_data(as_text=True)
    assert post_form(client, f"/admin/moderation/{recid}/approve", {}, page=queue).status_code == 303
    assert "is approved" in client.get(queue).get_data(as_text=True)
    assert https_client(app).get(f"/records/{recid}").status_code == 200
    assert _actions(app, target=f"record:{recid}")[:2] == ["record.approve", "record.held"]
    assert _actions(app, action="domain.") == ["domain.ban"]
    assert post_form(client, "/admin/moderation/domains/casino.example/delete", {}, page=queue).status_code == 303
    assert "No domain is banned" in client.get(queue).get_data(as_text=True)


@pytest.mark.slow  # 0.4 s and more of work
def test_a_record_is_hidden_while_reviewed_then_unhidden(app, client, auth):
    signed_in(client, app, "mod@example.org", PASSWORD)
    _role(app, "mod@example.org", "moderator")
    recid = published(client, auth, title="Questioned")["record_id"]
    page = f"/admin/records/{recid}"
    assert post_form(client, f"{page}/hide", {"reason": ""}, page=page).status_code == 303
    assert "Give the public reason" in client.get(page).get_data(as_text=True)
    assert "Hidden while reviewed" not in client.get(page).get_data(as_text=True)
    assert post_form(client, f"{page}/hide", {"reason": "Checking the authorship"}, page=page).status_code == 303
    shown = client.get(page).get_data(as_text=True)
    assert "Hidden while reviewed" in shown and "Checking the authorship" in shown
    assert "Hidden while reviewed" in client.get("/admin/moderation/").get_data(as_text=True)
    public = https_client(app).get(f"/records/{recid}")
    assert public.status_code == 200 and "hidden from search" in public.get_data(as_text=True)
    assert post_form(client, f"{page}/unhide", {}, page=page).status_code == 303
    assert "Public" in client.get(page).get_data(as_text=True)
    assert _actions(app, target=f"record:{recid}")[:2] == ["record.unhide", "record.hide"]
    assert "Checking the authorship" in body(sent_mail(app)[-2])


def test_the_queue_blocks_an_owner_and_takes_their_records_down(app, client, auth):
    signed_in(client, app, "root@example.org", PASSWORD)
    _role(app, "root@example.org", "admin")
    recid = published(client, auth, title="Pills")["record_id"]
    other = published(client, auth, title="More pills")["record_id"]
    post_form(client, f"/admin/records/{recid}/hide", {"reason": "Reported"}, page=f"/admin/records/{recid}")
    queue = "/admin/moderation/"
    assert post_form(client, f"/admin/moderation/{recid}/block", {"reason": ""}, page=queue).status_code == 303
    assert "Say why" in client.get(queue).get_data(as_text=True)
    assert post_form(client, f"/admin/moderation/{recid}/block", {"reason": "Spam"}, page=queue).status_code == 303
    assert "Nothing to review" in client.get(queue).get_data(as_text=True)
    for each in (recid, other):
        gone = https_client(app).get(f"/api/records/{each}")
        assert gone.status_code == 410 and gone.get_json()["note"] == "Spam"
    assert "user.block" in _actions(app, action="user.")


def test_everyone_else_gets_403_and_an_audit_entry(app, client, auth):
    signed_in(client, app, "plain@example.org", PASSWORD)
    recid = published(client, auth)["record_id"]
    assert client.get("/admin/moderation/").status_code == 403
    for path in (f"/admin/moderation/{recid}/approve", f"/admin/records/{recid}/hide", "/admin/moderation/domains"):
        assert post_form(client, path, {"reason": "x", "domain": "a.example"}, page="/").status_code == 403
    assert len(_actions(app, action="admin.refused")) == 4
    assert https_client(app).get(f"/records/{recid}").status_code == 200
    _role(app, "plain@example.org", "moderator")
    assert "No domain is banned" in client.get("/admin/moderation/").get_data(as_text=True)
