"""Access requests over the API: a requester justifies, the owner (mailed) decides; an accepted requester downloads
the files while the grant lasts, with their tokens and in their browser session; nothing public changes."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from helpers.factories import published
from helpers.http import download, https_client
from helpers.mailbox import body, sent_mail
from helpers.pages import post_form, sign_in, sign_up_and_confirm
from sqlalchemy import update

from app import create_app
from repository.accounts.tokens import SCOPES, create_token, create_user
from repository.storage.tables.access_requests import access_requests

OWNER, READER, OTHER = "owner@example.org", "reader@example.org", "other@example.org"
RESTRICTED = {"access_right": "restricted", "access_conditions": "<p>Researchers only.</p>"}
WHY = "I study north-slope sensors for my thesis."


def requests_url(recid: int, *rest: object) -> str:
    return "/".join([f"/api/records/{recid}/access/requests", *map(str, rest)])


def file_url(client, recid: int, headers: dict) -> str:  # type: ignore[no-untyped-def]
    entries = client.get(f"/api/records/{recid}/files", headers=headers).json["entries"]
    return entries[0]["links"]["self"].removeprefix("https://localhost")


def bearer(make_token, email: str, scopes: tuple[str, ...] = ("deposit:write", "deposit:actions")) -> dict:  # type: ignore[no-untyped-def]
    return {"Authorization": f"Bearer {make_token(email, scopes)}"}


def browser_of(app, email: str):  # type: ignore[no-untyped-def]
    """A browser of a user who signed up (confirmed) and signed in as `email`."""
    browser = https_client(app)
    sign_up_and_confirm(browser, app, email, "correct horse battery")
    assert sign_in(browser, email, "correct horse battery").status_code == 303
    return browser


def public_views(client, recid: int) -> tuple:  # type: ignore[no-untyped-def]
    """What everyone sees of the record: its JSON (counts aside), its search hit, its OAI-PMH record."""
    record = client.get(f"/api/records/{recid}").json
    record.pop("stats", None)
    hit = client.get("/api/records/", query_string={"q": f"recid:{recid}"}).json["hits"]["hits"]
    for h in hit:
        h.pop("stats", None)
    oai = client.get("/oai2d", query_string={"verb": "GetRecord", "metadataPrefix": "oai_dc",
                                             "identifier": f"oai:localhost:{recid}"}).get_data(as_text=True)
    return record, hit, re.sub(r"<responseDate>[^<]*</responseDate>", "", oai)


@pytest.mark.slow
def test_request_accept_download_expire_revoke(app, client, auth, make_token):
    browser = browser_of(app, READER)  # the same user as the token's
    reader = bearer(make_token, READER)
    dep = published(client, auth, **RESTRICTED)
    recid = dep["id"]
    url = file_url(client, recid, auth)
    before = public_views(client, recid)
    assert "files" not in before[0] and "files" not in before[1][0] and "<GetRecord>" in before[2]
    assert download(client, url, headers=reader).status_code == 404

    made = client.post(requests_url(recid), json={"justification": WHY}, headers=reader)
    assert made.status_code == 201, made.json
    assert made.json["status"] == "pending"
    request_id = made.json["id"]
    to_owner = sent_mail(app, OWNER)[-1]
    assert WHY in body(to_owner) and READER in body(to_owner)
    assert "https://localhost/account/requests/" in body(to_owner)

    listed = client.get(requests_url(recid), headers=auth)
    assert listed.status_code == 200
    assert [(r["id"], r["status"], r["justification"]) for r in listed.json] == [(request_id, "pending", WHY)]

    tomorrow = (dt.date.today() + dt.timedelta(days=1)).isoformat()
    accepted = client.post(requests_url(recid, request_id, "accept"), json={"until": tomorrow}, headers=auth)
    assert accepted.status_code == 200, accepted.json
    assert accepted.json["status"] == "accepted" and accepted.json["until"] == tomorrow
    assert accepted.json["access"] is True
    assert "accepted" in str(sent_mail(app, READER)[-1]["Subject"])

    # With the requester's token and in their browser; private to them.
    got = download(client, url, headers=reader)
    assert got.status_code == 200 and got.data == b"a,b\n1,2\n"
    assert got.cache_control.private and not got.cache_control.public and "Authorization" in got.vary
    assert client.get(f"/api/records/{recid}/files", headers=reader).status_code == 200
    assert "files" in client.get(f"/api/records/{recid}", headers=reader).json
    assert download(browser, url).status_code == 200
    assert "Request access" not in browser.get(f"/records/{recid}").get_data(as_text=True)
    # Everyone else sees what they saw before.
    assert download(client, url).status_code == 404
    assert download(client, url, headers=bearer(make_token, OTHER)).status_code == 404
    assert public_views(client, recid) == before

    # The grant's end passes (the stored end moves, as it would by waiting).
    db = app.extensions["repository"].db
    with db.write() as conn:
        conn.execute(update(access_requests).where(access_requests.c.id == request_id)
                     .values(expires=dt.datetime.now(dt.UTC).replace(tzinfo=None) - dt.timedelta(minutes=1)))
    assert download(client, url, headers=reader).status_code == 404
    assert download(browser, url).status_code == 404
    assert client.get(requests_url(recid), headers=auth).json[0]["access"] is False
    with db.write() as conn:
        conn.execute(update(access_requests).where(access_requests.c.id == request_id).values(expires=None))
    assert download(client, url, headers=reader).status_code == 200

    revoked = client.post(requests_url(recid, request_id, "revoke"), headers=auth)
    assert revoked.status_code == 200 and revoked.json["status"] == "revoked"
    assert "revoked" in str(sent_mail(app, READER)[-1]["Subject"]).lower()
    assert download(client, url, headers=reader).status_code == 404
    assert download(browser, url).status_code == 404
    assert client.post(requests_url(recid, request_id, "revoke"), headers=auth).status_code == 409
    # Asking again is possible once the grant is gone.
    assert client.post(requests_url(recid), json={"justification": WHY}, headers=reader).status_code == 201


@pytest.mark.slow  # 0.4 s and more of work
def test_reject_with_a_message_mails_the_requester(app, client, auth, make_token):
    reader = bearer(make_token, READER, ())  # any token will do to ask
    dep = published(client, auth, **RESTRICTED)
    request_id = client.post(requests_url(dep["id"]), json={"justification": WHY}, headers=reader).json["id"]
    rejected = client.post(requests_url(dep["id"], request_id, "reject"),
                           json={"message": "Only members of the consortium."}, headers=auth)
    assert rejected.status_code == 200 and rejected.json["status"] == "rejected"
    news = sent_mail(app, READER)[-1]
    assert "rejected" in str(news["Subject"]) and "Only members of the consortium." in body(news)
    url = file_url(client, dep["id"], auth)
    assert download(client, url, headers=reader).status_code == 404
    again = client.post(requests_url(dep["id"], request_id, "accept"), json={}, headers=auth)
    assert again.status_code == 409 and "rejected" in again.json["message"]


@pytest.mark.slow  # 0.4 s and more of work
def test_only_the_owner_sees_and_decides(app, client, auth, make_token):
    reader, other = bearer(make_token, READER), bearer(make_token, OTHER)
    dep = published(client, auth, **RESTRICTED)
    request_id = client.post(requests_url(dep["id"]), json={"justification": WHY}, headers=reader).json["id"]
    assert client.get(requests_url(dep["id"]), headers=other).status_code == 403
    assert client.get(requests_url(dep["id"]), headers=reader).status_code == 403
    assert client.get(requests_url(dep["id"])).status_code == 401
    for action in ("accept", "reject", "revoke"):
        answer = client.post(requests_url(dep["id"], request_id, action), json={}, headers=other)
        assert answer.status_code == 403 and answer.json["status"] == 403
    # The owner's token without deposit:actions cannot decide either.
    weak = bearer(make_token, OWNER, ("deposit:write",))
    assert client.post(requests_url(dep["id"], request_id, "accept"), json={}, headers=weak).status_code == 403
    # A request of another record, through the owner's own record: not found.
    mine = published(client, other, **RESTRICTED)
    assert client.post(requests_url(mine["id"], request_id, "accept"), json={}, headers=other).status_code == 404
    assert client.get(requests_url(dep["id"]), headers=auth).json[0]["status"] == "pending"


@pytest.mark.slow  # 0.4 s and more of work
def test_bad_requests_get_clear_errors(app, client, auth, make_token):
    reader = bearer(make_token, READER)
    open_dep = published(client, auth)
    refused = client.post(requests_url(open_dep["id"]), json={"justification": WHY}, headers=reader)
    assert refused.status_code == 400 and "only for restricted records" in refused.json["message"]
    closed = published(client, auth, access_right="closed")
    assert client.post(requests_url(closed["id"]), json={"justification": WHY}, headers=reader).status_code == 400
    dep = published(client, auth, **RESTRICTED)
    url = requests_url(dep["id"])
    assert client.post(url, json={"justification": WHY}, headers=auth).status_code == 400  # one's own record
    for bad in ({}, {"justification": "   "}, {"justification": 5}, {"justification": "x" * 5001}):
        answer = client.post(url, json=bad, headers=reader)
        assert answer.status_code == 400 and answer.json["errors"][0]["field"] == "justification", bad
    assert client.post(url, data="not json", headers={**reader, "Content-Type": "application/json"}).status_code == 400
    assert client.post(url, json=["a list"], headers=reader).status_code == 400
    assert client.post(requests_url(999999), json={"justification": WHY}, headers=reader).status_code == 404
    first = client.post(url, json={"justification": WHY}, headers=reader)
    assert first.status_code == 201
    second = client.post(url, json={"justification": "Again."}, headers=reader)
    assert second.status_code == 409 and str(first.json["id"]) in second.json["message"]
    request_id = first.json["id"]
    for until in ("yesterday", dt.date.today().isoformat(), "2020-01-01", 20990101, "9999-12-31"):
        answer = client.post(requests_url(dep["id"], request_id, "accept"), json={"until": until}, headers=auth)
        assert answer.status_code == 400 and answer.json["errors"][0]["field"] == "until", until
    assert client.post(requests_url(dep["id"], 999999, "accept"), json={}, headers=auth).status_code == 404
    assert client.post(requests_url(dep["id"], request_id, "revoke"), headers=auth).status_code == 409
    # A guest needs a valid address.
    for email in (None, "", "not-an-address", "a@b@c", "me@x.org,postmaster", "me@x.org;eve@y.org", "me@x.org <e@y.org>"):
        answer = client.post(url, json={"justification": WHY, "email": email})
        assert answer.status_code == 400 and answer.json["errors"][0]["field"] == "email", email


@pytest.mark.slow  # 0.4 s and more of work
def test_a_guest_confirms_the_address_before_the_owner_hears(app, client, auth):
    guest = "guest@example.net"
    dep = published(client, auth, **RESTRICTED)
    made = client.post(requests_url(dep["id"]), json={"justification": WHY, "email": guest})
    assert made.status_code == 201 and made.json["status"] == "pending_confirmation"
    assert sent_mail(app, OWNER) == []
    assert client.get(requests_url(dep["id"]), headers=auth).json == []
    link = re.search(r"https://localhost(/records/\S+/access/confirm/\S+)", body(sent_mail(app, guest)[-1]))
    assert link is not None
    # The same address asking again while the link is valid: the open request is named.
    assert client.post(requests_url(dep["id"]), json={"justification": WHY, "email": guest}).status_code == 409
    confirmed = post_form(client, link.group(1), {})  # the button on the page the link opens
    assert confirmed.status_code == 200 and "confirmed" in confirmed.get_data(as_text=True)
    assert WHY in body(sent_mail(app, OWNER)[-1])
    assert post_form(client, link.group(1), {}).status_code == 400  # used
    assert post_form(client, link.group(1)[:-3] + "abc", {}).status_code == 400  # forged
    listed = client.get(requests_url(dep["id"]), headers=auth).json
    assert [(r["status"], r["requester"]["email"], r["requester"]["user_id"]) for r in listed] == [
        ("pending", guest, None)]


def test_a_title_with_a_line_break_does_not_stop_the_request(app, client, auth, make_token):
    """The record's title goes into the mails' subjects, which are one line: a title with a line break is folded
    into one line there (it was a 500 for everyone asking), the request made and every mail sent."""
    dep = published(client, auth, title="Soil cores\r\nfrom the north slope", **RESTRICTED)
    made = client.post(requests_url(dep["id"]), json={"justification": WHY}, headers=bearer(make_token, READER))
    assert made.status_code == 201, made.json
    guest = client.post(requests_url(dep["id"]), json={"justification": WHY, "email": "guest@example.net"})
    assert guest.status_code == 201, guest.json
    assert sent_mail(app, "guest@example.net")[-1]["Subject"].endswith("Soil cores from the north slope")
    assert sent_mail(app, OWNER)[-1]["Subject"] == "Access request for Soil cores from the north slope"
    decided = client.post(requests_url(dep["id"], made.json["id"], "reject"), json={}, headers=auth)
    assert decided.status_code == 200
    assert sent_mail(app, READER)[-1]["Subject"].endswith(": Soil cores from the north slope")


def test_guest_requests_that_mail_an_address_are_throttled_as_sign_ups(make_settings):
    """A guest's access request mails a confirmation link to any address: it counts against RATELIMIT_SIGNIN per
    client address (and per address mailed), not the generic guest rate; past it, a 429 error object with
    Retry-After, and no mail."""
    application = create_app(make_settings(RATELIMIT_SIGNIN="3/15minutes", RATELIMIT_GUEST="100/minute"))
    client = https_client(application)
    with application.extensions["repository"].db.write() as conn:
        owner = {"Authorization": f"Bearer {create_token(conn, create_user(conn, OWNER), list(SCOPES))[1]}"}
    dep = published(client, owner, **RESTRICTED)
    answers = [client.post(requests_url(dep["id"]), json={"justification": WHY, "email": f"v{n}@example.net"})
               for n in range(4)]
    assert [a.status_code for a in answers] == [201, 201, 201, 429]
    assert answers[-1].json["status"] == 429 and int(answers[-1].headers["Retry-After"]) > 0
    assert sent_mail(application, "v3@example.net") == []
    application.extensions["repository"].db.dispose()
