"""The applications area: a signed-in user creates a token (shown once), uses it on the deposit API, sees when it
was last used and revokes it; nobody else's tokens, no token, no forged form gets anywhere."""

from __future__ import annotations

import re

import pytest
from helpers.http import https_client
from helpers.pages import post_form, referer, sign_in, sign_up_and_confirm

AREA = "/account/settings/applications/"
PASSWORD = "correct horse battery"
SECRET = re.compile(r'<code class="secret" id="new-token">([^<]+)</code>')


def signed_in(client, app, email: str) -> None:
    sign_up_and_confirm(client, app, email, PASSWORD)
    assert sign_in(client, email, PASSWORD).status_code in (302, 303)


def create(client, name: str, scopes: list[str]):  # type: ignore[no-untyped-def]
    """Submit the creation form and follow its redirect, as a browser does: the page that shows the new token
    (or, for a refused form, the 400 page with its errors)."""
    answer = post_form(client, AREA, {"name": name, "scopes": scopes})
    if answer.status_code != 303:
        return answer
    assert answer.headers["Location"].endswith(AREA)
    return client.get(AREA)


def revoke(client, token_id: int):  # type: ignore[no-untyped-def]
    """Confirm the revocation on its page, as a browser does."""
    return post_form(client, f"{AREA}{token_id}/revoke", {})


def secret_of(response) -> str:  # type: ignore[no-untyped-def]
    found = SECRET.search(response.get_data(as_text=True))
    assert found, "no token shown on the page"
    return found.group(1)


def token_ids(html: str) -> list[int]:
    return [int(i) for i in re.findall(r'href="/account/settings/applications/(\d+)/revoke"', html)]


@pytest.fixture
def user_client(client, app):  # type: ignore[no-untyped-def]
    signed_in(client, app, "owner@example.org")
    return client


def test_create_use_and_revoke_a_token(user_client):
    page = user_client.get(AREA)
    assert page.status_code == 200 and "no tokens yet" in page.get_data(as_text=True)
    created = create(user_client, "laptop script", ["deposit:write"])
    assert created.status_code == 200
    html = created.get_data(as_text=True)
    token = secret_of(created)
    assert len(token) >= 43 and "shown this once" in html and "laptop script" in html
    assert created.headers["Cache-Control"] == "private, no-store"
    # The page shows how to use it: a command that lists the user's uploads, and one that starts a new one.
    assert f'curl -H "Authorization: Bearer {token}"' in html and "https://localhost/api/deposit/depositions" in html
    assert "-d '{}' https://localhost/api/deposit/depositions" in html
    bearer = {"Authorization": f"Bearer {token}"}
    assert user_client.post("/api/deposit/depositions", json={}, headers=bearer).status_code == 201

    again = user_client.get(AREA).get_data(as_text=True)
    assert token not in again  # shown once only
    [token_id] = token_ids(again)
    asked = user_client.get(f"{AREA}{token_id}/revoke")
    assert asked.status_code == 200 and "Revoke the token “laptop script”?" in asked.get_data(as_text=True)
    assert user_client.get("/api/deposit/depositions", headers=bearer).status_code == 200  # asking changes nothing
    revoked = revoke(user_client, token_id)
    assert revoked.status_code == 303 and revoked.headers["Location"].endswith(AREA)
    listing = user_client.get(AREA).get_data(as_text=True)
    assert "is revoked" in listing and "Revoked" in listing and token_ids(listing) == []
    refused = user_client.post("/api/deposit/depositions", json={}, headers=bearer)
    assert refused.status_code == 401
    assert user_client.get(f"{AREA}{token_id}/revoke").status_code == 404  # nothing left to confirm


def test_a_reload_after_creating_creates_nothing_and_shows_nothing_again(user_client):
    posted = post_form(user_client, AREA, {"name": "once", "scopes": []})
    assert posted.status_code == 303 and "Bearer" not in posted.get_data(as_text=True)
    # The secret crosses the redirect sealed: the session cookie does not carry it readable.
    cookie = user_client.get_cookie("session").value
    shown = user_client.get(AREA)
    token = secret_of(shown)
    assert token not in cookie
    reloaded = user_client.get(AREA).get_data(as_text=True)
    assert token not in reloaded and 'id="new-token"' not in reloaded
    assert [t["name"] for t in user_client.get("/api/tokens/").json] == ["once"]


@pytest.mark.slow
def test_a_sealed_secret_is_shown_only_for_a_live_token_of_the_user(user_client):
    assert post_form(user_client, AREA, {"name": "soon gone", "scopes": []}).status_code == 303
    [token_id] = [t["id"] for t in user_client.get("/api/tokens/").json]
    # Revoked (on its confirmation page, which leaves the sealed secret in the session) before the page after the
    # redirect is read: that page then shows no secret.
    assert revoke(user_client, token_id).status_code == 303
    assert 'id="new-token"' not in user_client.get(AREA).get_data(as_text=True)


def test_last_use_is_shown(user_client):
    token = secret_of(create(user_client, "reader", []))
    row = re.compile(r"<h3>reader</h3>.*?</li>", re.S)
    before = row.search(user_client.get(AREA).get_data(as_text=True)).group(0)
    assert "none (read only)" in before and before.count("<time") == 1 and "never" in before
    assert user_client.get("/api/deposit/depositions", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    after = row.search(user_client.get(AREA).get_data(as_text=True)).group(0)
    assert after.count("<time") == 2 and "never" not in after


def test_another_users_token_is_not_found_and_stays_valid(client, app):
    signed_in(client, app, "first@example.org")
    theirs = secret_of(create(client, "first laptop", ["deposit:write"]))
    [their_id] = token_ids(client.get(AREA).get_data(as_text=True))
    other = https_client(app)
    signed_in(other, app, "second@example.org")
    assert other.get(f"{AREA}{their_id}/revoke").status_code == 404
    refused = post_form(other, f"{AREA}{their_id}/revoke", {}, page=AREA)
    assert refused.status_code == 404 and "text/html" in refused.content_type
    assert "first laptop" not in refused.get_data(as_text=True)
    assert "first laptop" not in other.get(AREA).get_data(as_text=True)
    assert client.get("/api/deposit/depositions", headers={"Authorization": f"Bearer {theirs}"}).status_code == 200


def test_a_token_cannot_open_the_area(user_client, app):
    token = secret_of(create(user_client, "script", ["deposit:write", "deposit:actions"]))
    guest = https_client(app)
    bearer = {"Authorization": f"Bearer {token}"}
    answer = guest.get(AREA, headers=bearer)
    assert answer.status_code == 401 and "text/html" in answer.content_type
    assert "Create a token" not in answer.get_data(as_text=True)
    assert guest.get(f"{AREA}?access_token={token}").status_code == 401
    # A token cannot post the forms either (no session, so no CSRF token): nothing is created.
    assert guest.post(AREA, data={"name": "more"}, headers={**bearer, **referer(AREA)}).status_code in (400, 401)
    assert len(user_client.get("/api/tokens/").json) == 1


def test_a_guest_is_sent_to_sign_in(client):
    answer = client.get(AREA)
    assert answer.status_code in (302, 303) and "/login/?next=" in answer.headers["Location"]


def test_a_form_without_its_csrf_token_is_refused(user_client):
    refused = user_client.post(AREA, data={"name": "x", "scopes": ["deposit:write"]}, headers=referer(AREA))
    assert refused.status_code == 400 and "text/html" in refused.content_type
    forged = user_client.post(AREA, data={"name": "x", "csrf_token": "forged"}, headers=referer(AREA))
    assert forged.status_code == 400
    token = secret_of(create(user_client, "kept", []))
    [token_id] = token_ids(user_client.get(AREA).get_data(as_text=True))
    assert user_client.post(f"{AREA}{token_id}/revoke", headers=referer(AREA)).status_code == 400
    assert user_client.get("/api/", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    assert [t["name"] for t in user_client.get("/api/tokens/").json] == ["kept"]


@pytest.mark.slow  # 0.4 s and more of work
@pytest.mark.parametrize(("data", "field", "message"), [
    ({"name": ""}, "name", "Give the token a name."),
    ({"name": "   "}, "name", "Give the token a name."),
    ({"name": "n" * 101}, "name", "At most 100 characters."),
    ({"name": "x", "scopes": ["deposit:read"]}, "scopes", "is not a valid choice"),
])
def test_bad_input_shows_the_form_with_the_error(user_client, data, field, message):
    answer = create(user_client, data["name"], data.get("scopes", []))
    html = answer.get_data(as_text=True)
    assert answer.status_code == 400 and message in html
    assert f'id="{field}-error"' in html and re.search(rf'aria-describedby="[^"]*{field}-error', html)
    assert user_client.get("/api/tokens/").json == []


def test_revoking_twice_is_not_found(user_client):
    create(user_client, "once", [])
    [token_id] = token_ids(user_client.get(AREA).get_data(as_text=True))
    assert revoke(user_client, token_id).status_code == 303
    assert post_form(user_client, f"{AREA}{token_id}/revoke", {}, page=AREA).status_code == 404
