"""`/api/tokens/`: a signed-in browser session creates tokens (with its CSRF token), a token never does; listing shows
when each token was last used, noted at most once a minute."""

from __future__ import annotations

import datetime as dt

import pytest
from helpers.pages import csrf_from, referer, sign_in, sign_up_and_confirm
from sqlalchemy import update

from repository.accounts.tokens import LAST_USED_EVERY
from repository.storage.tables.accounts import tokens
from repository.timeutil import utcnow

AREA = "/account/settings/applications/"
PASSWORD = "correct horse battery"


@pytest.fixture
def session_headers(client, app) -> dict[str, str]:
    """Sign `client` in as a new user; the headers of its JSON writes (CSRF token and Referer, as a page sends)."""
    sign_up_and_confirm(client, app, "writer@example.org", PASSWORD)
    assert sign_in(client, "writer@example.org", PASSWORD).status_code in (302, 303)
    return {"X-CSRFToken": csrf_from(client.get(AREA).get_data()), **referer(AREA)}


def test_a_session_creates_a_token_shown_once_that_works(client, session_headers):
    made = client.post("/api/tokens/", json={"name": " laptop ", "scopes": ["deposit:write"]}, headers=session_headers)
    assert made.status_code == 201, made.json
    body = made.json
    assert set(body) == {"id", "name", "scopes", "created", "token"}
    assert body["name"] == "laptop" and body["scopes"] == ["deposit:write"] and body["created"].endswith("+00:00")
    bearer = {"Authorization": f"Bearer {body['token']}"}
    deposited = client.post("/api/deposit/depositions", json={}, headers=bearer)
    assert deposited.status_code == 201
    assert client.post(f"/api/deposit/depositions/{deposited.json['id']}/actions/publish",
                       headers=bearer).status_code == 403  # deposit:actions was not chosen
    listed = client.get("/api/tokens/").json  # the session lists them too; never the secret
    assert [t["name"] for t in listed] == ["laptop"] and "token" not in listed[0]


def test_a_session_without_the_csrf_token_is_refused(client, session_headers):
    for headers in ({}, referer(AREA), {"X-CSRFToken": "forged", **referer(AREA)}):
        refused = client.post("/api/tokens/", json={"name": "x", "scopes": []}, headers=headers)
        assert refused.status_code == 400 and refused.json["status"] == 400
        assert "CSRF" in refused.json["message"]
    assert client.get("/api/tokens/").json == []


def test_a_token_cannot_create_tokens(client, make_token):
    bearer = {"Authorization": f"Bearer {make_token()}"}
    refused = client.post("/api/tokens/", json={"name": "more", "scopes": ["deposit:write"]}, headers=bearer)
    assert refused.status_code == 403 and "Tokens cannot create tokens" in refused.json["message"]
    assert len(client.get("/api/tokens/", headers=bearer).json) == 1


def test_a_guest_gets_401(client):
    refused = client.post("/api/tokens/", json={"name": "x", "scopes": []})
    assert refused.status_code == 401 and refused.json["status"] == 401


@pytest.mark.parametrize(("body", "field"), [
    ({"name": "x", "scopes": ["deposit:read"]}, "scopes"),
    ({"name": "x", "scopes": "deposit:write"}, "scopes"),
    ({"name": "x", "scopes": [1]}, "scopes"),
    ({"name": "x"}, "scopes"),
    ({"scopes": []}, "name"),
    ({"name": "   ", "scopes": []}, "name"),
    ({"name": 5, "scopes": []}, "name"),
    ({"name": "n" * 101, "scopes": []}, "name"),
])
def test_bad_input_is_a_400_naming_the_field(client, session_headers, body, field):
    refused = client.post("/api/tokens/", json=body, headers=session_headers)
    assert refused.status_code == 400, refused.json
    assert [e["field"] for e in refused.json["errors"]] == [field]
    assert client.get("/api/tokens/").json == []


def test_a_body_that_is_not_an_object_is_a_400(client, session_headers):
    for raw in ('["x"]', "nope"):
        refused = client.post("/api/tokens/", data=raw, content_type="application/json", headers=session_headers)
        assert refused.status_code == 400 and refused.json["status"] == 400


def test_a_token_with_no_scope_reads_but_does_not_write(client, session_headers):
    secret = client.post("/api/tokens/", json={"name": "reader", "scopes": []}, headers=session_headers).json["token"]
    bearer = {"Authorization": f"Bearer {secret}"}
    assert client.get("/api/deposit/depositions", headers=bearer).status_code == 200
    assert client.post("/api/deposit/depositions", json={}, headers=bearer).status_code == 403


def test_a_token_with_no_scope_cannot_revoke_tokens(client, make_token):
    """A token with no scope is read-only (docs/api/index.md): revoking, its own or another, is a write."""
    reader = {"Authorization": f"Bearer {make_token('reader@example.org', scopes=())}"}
    writer = {"Authorization": f"Bearer {make_token('reader@example.org', scopes=('deposit:write',))}"}
    listed = client.get("/api/tokens/", headers=reader).json
    assert len(listed) == 2
    for token in listed:
        refused = client.delete(f"/api/tokens/{token['id']}", headers=reader)
        assert refused.status_code == 403 and refused.json["status"] == 403 and "read" in refused.json["message"]
    assert client.get("/api/tokens/", headers=reader).status_code == 200
    assert all(t["revoked"] is None for t in client.get("/api/tokens/", headers=writer).json)
    reader_id = next(t["id"] for t in listed if t["scopes"] == [])
    assert client.delete(f"/api/tokens/{reader_id}", headers=writer).status_code == 204  # a scoped token may
    assert client.get("/api/tokens/", headers=reader).status_code == 401


def test_the_session_revokes_with_its_csrf_token(client, session_headers):
    made = client.post("/api/tokens/", json={"name": "x", "scopes": []}, headers=session_headers).json
    assert client.delete(f"/api/tokens/{made['id']}", headers=referer(AREA)).status_code == 400
    assert client.delete(f"/api/tokens/{made['id']}", headers=session_headers).status_code == 204
    assert client.get("/api/", headers={"Authorization": f"Bearer {made['token']}"}).status_code == 401


def _set_last_used(app, value: dt.datetime) -> None:
    with app.extensions["repository"].db.write() as conn:
        conn.execute(update(tokens).values(last_used=value))


def test_last_used_is_noted_at_most_once_a_minute(client, app, make_token):
    secret = make_token(scopes=())
    bearer = {"Authorization": f"Bearer {secret}"}
    before = utcnow()
    assert client.get("/api/", headers=bearer).status_code == 200
    listed = client.get("/api/tokens/", headers=bearer).json
    used = dt.datetime.fromisoformat(listed[0]["last_used"]).replace(tzinfo=None)
    assert before <= used <= utcnow()  # noted at the use (utcnow() is to the second, as stored)

    recent = utcnow() - dt.timedelta(seconds=30)
    _set_last_used(app, recent)
    client.get("/api/", headers=bearer)
    shown = client.get("/api/tokens/", headers=bearer).json[0]["last_used"]
    # Not noted again within the minute (unless the two requests took the rest of it on a very slow machine).
    assert shown == recent.isoformat() + "+00:00" or utcnow() - recent >= LAST_USED_EVERY

    _set_last_used(app, utcnow() - dt.timedelta(seconds=61))
    before = utcnow()
    client.get("/api/", headers=bearer)
    used = dt.datetime.fromisoformat(client.get("/api/tokens/", headers=bearer).json[0]["last_used"])
    assert before <= used.replace(tzinfo=None) <= utcnow()


def test_a_browser_session_notes_no_token_use(client, session_headers):
    made = client.post("/api/tokens/", json={"name": "x", "scopes": []}, headers=session_headers).json
    client.get("/api/deposit/depositions")  # the session, not the token
    assert client.get("/api/tokens/").json[0]["last_used"] is None
    client.get("/api/deposit/depositions", headers={"Authorization": f"Bearer {made['token']}"})
    assert client.get("/api/tokens/").json[0]["last_used"] is not None



def test_a_use_that_cannot_be_noted_still_answers(client, app, make_token, caplog):
    secret = make_token(scopes=())
    bearer = {"Authorization": f"Bearer {secret}"}
    with app.extensions["repository"].db.write() as conn:  # another writer holds the token's row (and, on SQLite,
        conn.execute(update(tokens).values(name="busy"))  # the database's write lock) for this whole request
        answer = client.get("/api/deposit/depositions", headers=bearer)
    assert answer.status_code == 200
    assert "could not record the use of token" in caplog.text
    assert client.get("/api/tokens/", headers=bearer).json[0]["last_used"] is not None  # noted by the next use
