"""Access requests in the browser: the landing page's link, the request form (signed in, or a guest whose address
a mailed link confirms), the owner's page to accept (until a date), reject and revoke, and the requester's view."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from helpers.factories import published
from helpers.http import download, https_client
from helpers.mailbox import body, last_link, sent_mail
from helpers.pages import csrf_from, post_form, referer, sign_in, sign_up_and_confirm

from repository.accounts.tokens import create_token, get_user_by_email

OWNER, READER, OTHER, GUEST = "owner@example.org", "reader@example.org", "other@example.org", "guest@example.net"
PASSWORD = "correct horse battery"
RESTRICTED = {"access_right": "restricted", "access_conditions": "<p>Researchers of <b>polar</b> sites only.</p>"}
WHY = "I map permafrost thaw and need the hourly readings."
PAGE = "/account/requests/"


def browser(app, email: str):  # type: ignore[no-untyped-def]
    """A new browser, signed up (confirmed) and signed in as `email`."""
    client = https_client(app)
    sign_up_and_confirm(client, app, email, PASSWORD)
    assert sign_in(client, email, PASSWORD).status_code == 303
    return client


def token_of(app, email: str) -> dict[str, str]:
    with app.extensions["repository"].db.write() as conn:
        user = get_user_by_email(conn, email)
        assert user is not None
        return {"Authorization": f"Bearer {create_token(conn, user['id'], ['deposit:write', 'deposit:actions'])[1]}"}


def restricted_record(app, client) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    """A restricted record of OWNER with one file: its id and the file's path."""
    auth = token_of(app, OWNER)
    dep = published(client, auth, **RESTRICTED)
    entries = client.get(f"/api/records/{dep['id']}/files", headers=auth).json["entries"]
    return dep["id"], entries[0]["links"]["self"].removeprefix("https://localhost")


def action(page_html: str, verb: str) -> str:
    found = re.search(rf'action="({PAGE}\d+/\d+/{verb})"', page_html)
    assert found, f"no {verb} form on the page"
    return found.group(1)


@pytest.mark.slow
def test_ask_accept_download_and_revoke_in_the_browser(app, client):
    owner = browser(app, OWNER)
    recid, file_path = restricted_record(app, client)
    landing = client.get(f"/records/{recid}").get_data(as_text=True)
    assert f'href="/records/{recid}/access/request"' in landing and "Request access" in landing

    reader = browser(app, READER)
    form = reader.get(f"/records/{recid}/access/request")
    html = form.get_data(as_text=True)
    assert form.status_code == 200 and "Researchers of polar sites only." in html
    assert 'name="justification"' in html and 'name="email"' not in html
    assert form.headers["Cache-Control"] == "private, no-store"
    sent = post_form(reader, f"/records/{recid}/access/request", {"justification": WHY})
    assert sent.status_code == 201 and "was sent to the record" in sent.get_data(as_text=True)
    assert WHY in body(sent_mail(app, OWNER)[-1])
    assert download(reader, file_path).status_code == 404

    overview = owner.get(PAGE)
    html = overview.get_data(as_text=True)
    assert overview.status_code == 200 and WHY in html and READER in html
    tomorrow = (dt.date.today() + dt.timedelta(days=1)).isoformat()
    accepted = post_form(owner, action(html, "accept"), {"until": tomorrow, "message": "Enjoy."}, page=PAGE)
    assert accepted.status_code == 303
    after = owner.get(PAGE).get_data(as_text=True)
    assert "accepted" in after and f"after {tomorrow}" in after  # flash, and the grant's last day
    news = sent_mail(app, READER)[-1]
    assert "accepted" in str(news["Subject"]) and tomorrow in body(news) and "Enjoy." in body(news)

    got = download(reader, file_path)
    assert got.status_code == 200 and got.data == b"a,b\n1,2\n" and got.cache_control.private
    assert download(reader, file_path, headers=token_of(app, READER)).status_code == 200
    landing = reader.get(f"/records/{recid}").get_data(as_text=True)
    assert "data.csv" in landing and "Request access" not in landing
    mine = reader.get(PAGE).get_data(as_text=True)
    assert "accepted" in mine and f"until {tomorrow}" in mine
    assert download(client, file_path).status_code == 404  # still nobody else

    revoked = post_form(owner, action(owner.get(PAGE).get_data(as_text=True), "revoke"), {}, page=PAGE)
    assert revoked.status_code == 303
    assert download(reader, file_path).status_code == 404
    assert "revoked" in reader.get(PAGE).get_data(as_text=True)


@pytest.mark.slow
def test_reject_with_a_message_and_nobody_else_decides(app, client):
    owner = browser(app, OWNER)
    recid, _ = restricted_record(app, client)
    reader, other = browser(app, READER), browser(app, OTHER)
    post_form(reader, f"/records/{recid}/access/request", {"justification": WHY})
    accept_path = action(owner.get(PAGE).get_data(as_text=True), "accept")
    reject_path = accept_path.replace("/accept", "/reject")
    assert WHY not in other.get(PAGE).get_data(as_text=True)
    foreign = post_form(other, accept_path, {}, page=PAGE)
    assert foreign.status_code == 403 and "owner" in foreign.get_data(as_text=True)
    assert post_form(other, reject_path, {"message": "no"}, page=PAGE).status_code == 403
    assert WHY in owner.get(PAGE).get_data(as_text=True)  # still pending
    # A forged form (no CSRF token) changes nothing either.
    forged = owner.post(reject_path, data={"message": "x"}, headers=referer(PAGE))
    assert forged.status_code == 400

    rejected = post_form(owner, reject_path, {"message": "Only for the consortium."}, page=PAGE)
    assert rejected.status_code == 303
    news = sent_mail(app, READER)[-1]
    assert "rejected" in str(news["Subject"]) and "Only for the consortium." in body(news)
    mine = reader.get(PAGE).get_data(as_text=True)
    assert "rejected" in mine and "Only for the consortium." in mine
    # Deciding again: a clear page, no 500.
    assert post_form(owner, accept_path, {}, page=PAGE).status_code == 409


@pytest.mark.slow  # 0.4 s and more of work
def test_a_guest_asks_confirms_and_signs_up_with_that_address(app, client):
    owner = browser(app, OWNER)
    recid, file_path = restricted_record(app, client)
    guest = https_client(app)
    form = guest.get(f"/records/{recid}/access/request").get_data(as_text=True)
    assert 'name="email"' in form and 'name="justification"' in form
    bad = post_form(guest, f"/records/{recid}/access/request", {"justification": WHY, "email": "nope"})
    html = bad.get_data(as_text=True)
    assert bad.status_code == 400 and 'aria-invalid="true"' in html and "Not a valid e-mail address." in html
    sent = post_form(guest, f"/records/{recid}/access/request", {"justification": WHY, "email": GUEST})
    assert sent.status_code == 201 and GUEST in sent.get_data(as_text=True)
    assert WHY not in owner.get(PAGE).get_data(as_text=True)  # not before the address is confirmed

    link = last_link(app, GUEST, "/access/confirm/")
    confirmed = post_form(guest, link, {})
    assert confirmed.status_code == 200 and "Request confirmed" in confirmed.get_data(as_text=True)
    assert post_form(guest, link, {}).status_code == 400  # used
    html = owner.get(PAGE).get_data(as_text=True)
    assert WHY in html and GUEST in html
    assert post_form(owner, action(html, "accept"), {}, page=PAGE).status_code == 303
    assert "Sign in with this address" in body(sent_mail(app, GUEST)[-1])

    # The grant follows the confirmed address: signing up with it opens the files.
    assert download(guest, file_path).status_code == 404
    signed_up = browser(app, GUEST)
    assert download(signed_up, file_path).status_code == 200
    assert "accepted" in signed_up.get(PAGE).get_data(as_text=True)


@pytest.mark.slow
def test_form_refusals_are_pages(app, client):
    owner = browser(app, OWNER)
    recid, _ = restricted_record(app, client)
    open_dep = published(client, token_of(app, OWNER))
    page = client.get(f"/records/{open_dep['id']}/access/request").get_data(as_text=True)
    assert "only for restricted records" in page and 'name="justification"' not in page
    refused = post_form(client, f"/records/{open_dep['id']}/access/request", {"justification": WHY, "email": GUEST},
                        page=f"/records/{recid}/access/request")  # the open record's page has no form
    assert refused.status_code == 400 and "only for restricted records" in refused.get_data(as_text=True)
    assert "You own this record" in owner.get(f"/records/{recid}/access/request").get_data(as_text=True)
    assert client.get("/records/999999/access/request").status_code == 404

    reader = browser(app, READER)
    empty = post_form(reader, f"/records/{recid}/access/request", {"justification": "  "})
    assert empty.status_code == 400 and 'aria-invalid="true"' in empty.get_data(as_text=True)
    post_form(reader, f"/records/{recid}/access/request", {"justification": WHY})
    twice = post_form(reader, f"/records/{recid}/access/request", {"justification": WHY})
    assert twice.status_code == 409 and "already asked" in twice.get_data(as_text=True)

    html = owner.get(PAGE).get_data(as_text=True)
    past = post_form(owner, action(html, "accept"), {"until": "2020-01-01"}, page=PAGE)
    assert past.status_code == 303 and "Must be in the future" in owner.get(PAGE).get_data(as_text=True)
    garbled = post_form(owner, action(html, "accept"), {"until": "soon"}, page=PAGE)
    assert garbled.status_code == 303 and "not valid" in owner.get(PAGE).get_data(as_text=True)
    last_day = post_form(owner, action(html, "accept"), {"until": "9999-12-31"}, page=PAGE)
    assert last_day.status_code == 303 and "leave it empty" in owner.get(PAGE).get_data(as_text=True)
    assert WHY in owner.get(PAGE).get_data(as_text=True)  # still pending

    assert client.get(PAGE).status_code == 302 and "/login/" in client.get(PAGE).headers["Location"]
    assert client.get(PAGE, headers=token_of(app, OWNER)).status_code == 401
    assert post_form(client, f"/records/{recid}/access/confirm/not-a-token", {}).status_code == 400
    assert csrf_from(owner.get(PAGE).get_data(as_text=True))


def test_a_guest_access_request_is_confirmed_only_on_a_post_from_its_page(app, client):
    """A link-scanning mail gateway opening the link (a GET) must not confirm the request for whoever asked."""
    owner = browser(app, OWNER)
    recid, _ = restricted_record(app, client)
    guest = https_client(app)
    post_form(guest, f"/records/{recid}/access/request", {"justification": WHY, "email": GUEST})
    link = last_link(app, GUEST, "/access/confirm/")
    scanned = https_client(app).get(link)
    html = scanned.get_data(as_text=True)
    assert scanned.status_code == 200 and f'<form method="post" action="{link}">' in html and csrf_from(html)
    assert WHY not in owner.get(PAGE).get_data(as_text=True)  # the owner has heard nothing
    assert guest.post(link, data={}, headers=referer(link)).status_code == 400  # no CSRF token
    confirmed = post_form(guest, link, {})
    assert confirmed.status_code == 200 and "Request confirmed" in confirmed.get_data(as_text=True)
    assert WHY in owner.get(PAGE).get_data(as_text=True)
