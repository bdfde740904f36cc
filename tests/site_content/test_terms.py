"""The Terms of use at sign-up (docs/operators/branding-and-pages.md#terms-of-use): with SIGNUP_REQUIRES_TERMS the
form asks to accept the current version, refuses a sign-up without it (or after the Terms changed), and records the
version accepted per user."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient
from helpers.http import https_client
from helpers.pages import csrf_from, referer

from repository.accounts.tokens import get_user_by_email
from repository.site import terms

PASSWORD = "correct horse battery"


@pytest.fixture
def settings(make_settings):  # type: ignore[no-untyped-def]
    # The shared `app` fixture builds (and closes) the app from these.
    return make_settings(SIGNUP_REQUIRES_TERMS="true")


def _sign_up(client: FlaskClient, email: str, **extra: str):  # type: ignore[no-untyped-def]
    token = csrf_from(client.get("/signup/").get_data())
    return client.post("/signup/", data={"csrf_token": token, "email": email, "password": PASSWORD,
                                         "password_again": PASSWORD, **extra}, headers=referer("/signup/"))


def _accepted(app, email: str) -> dict | None:  # type: ignore[no-untyped-def]
    with app.extensions["repository"].db.read() as conn:
        user = get_user_by_email(conn, email)
        return terms.accepted(conn, user["id"]) if user else None


def test_sign_up_asks_to_accept_the_current_terms(app, client, root):
    assert _sign_up(https_client(app), "before@example.org").status_code == 303  # no Terms written: nothing asked
    assert _accepted(app, "before@example.org") is None
    client.put("/api/admin/site/pages/terms", json={"title": "Terms of use", "body": "Be nice."}, headers=root)
    guest = https_client(app)
    form = guest.get("/signup/").get_data(as_text=True)
    assert "I accept the" in form and 'href="/pages/terms"' in form and "(version 1)" in form
    refused = _sign_up(guest, "new@example.org", terms_version="1")
    assert refused.status_code == 400 and "Accept the Terms of use to sign up." in refused.get_data(as_text=True)
    assert _accepted(app, "new@example.org") is None
    assert get_user_by_email_in(app, "new@example.org") is None
    client.put("/api/admin/site/pages/terms", json={"title": "Terms of use", "body": "Be nicer."}, headers=root)
    stale = _sign_up(guest, "new@example.org", accept_terms="y", terms_version="1")
    assert stale.status_code == 400 and "changed since this page was shown" in stale.get_data(as_text=True)
    assert _sign_up(guest, "new@example.org", accept_terms="y", terms_version="2").status_code == 303
    assert _accepted(app, "new@example.org")["version"] == 2
    user_id = get_user_by_email_in(app, "new@example.org")["id"]
    exported = client.get(f"/api/admin/users/{user_id}/export", headers=root).get_json()
    assert [entry["version"] for entry in exported["terms_accepted"]] == [2]  # in the user's personal data


def get_user_by_email_in(app, email: str) -> dict | None:  # type: ignore[no-untyped-def]
    with app.extensions["repository"].db.read() as conn:
        return get_user_by_email(conn, email)
