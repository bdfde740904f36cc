"""Sign-in with an OpenID Connect provider, against the stand-in provider the tests start (tests/helpers/
oidc_provider.py): the browser's trip to the provider is a real HTTP request, its way back a GET of the callback."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest
import requests
from flask import Flask
from flask.testing import FlaskClient
from helpers.http import free_port, https_client
from helpers.mailbox import body, last_link, sent_mail
from helpers.oidc_provider import CLIENT_ID, CLIENT_SECRET, StandInProvider
from helpers.pages import post_form, sign_in, sign_up, sign_up_and_confirm

from app import create_app
from repository.accounts import users
from repository.accounts.tokens import get_user_by_email
from repository.ondemand import wait_all_idle

LABEL = "Sign in with Stand-in"
ORCID = "0000-0002-1825-0097"


@pytest.fixture
def provider() -> Iterator[StandInProvider]:
    with StandInProvider() as running:
        yield running


def _app(make_settings: Any, **overrides: Any) -> Iterator[Flask]:
    application = create_app(make_settings(**overrides))
    yield application
    services = application.extensions["repository"]
    wait_all_idle()  # every background thread's connection back in the pool before the pool goes
    services.db.dispose()


@pytest.fixture
def app(make_settings: Any, provider: StandInProvider) -> Iterator[Flask]:
    """The service with the stand-in as its provider."""
    yield from _app(make_settings, OIDC_ISSUER=provider.issuer, OIDC_CLIENT_ID=CLIENT_ID,
                    OIDC_CLIENT_SECRET=CLIENT_SECRET, OIDC_LABEL=LABEL)


def go_to_provider(client: FlaskClient, provider: StandInProvider, next_url: str | None = None) -> str:
    """Press the button; follow the redirect to the provider over HTTP; the callback path it sends back to."""
    started = client.get("/login/oidc/" + (f"?{urlencode({'next': next_url})}" if next_url else ""))
    assert started.status_code == 302, started.get_data(as_text=True)
    location = started.headers["Location"]
    assert location.startswith(provider.issuer + "/authorize?")
    with requests.get(location, allow_redirects=False, timeout=10) as answer:
        assert answer.status_code == 302, answer.text
        back = answer.headers["Location"]
    assert back.startswith("https://localhost/login/oidc/callback?")
    return back.removeprefix("https://localhost")


def sign_in_with_provider(client: FlaskClient, provider: StandInProvider, next_url: str | None = None) -> Any:
    return client.get(go_to_provider(client, provider, next_url))


def signed_in_email(client: FlaskClient) -> str | None:
    """Whom the browser is signed in as, read from the page layout's account menu; None when signed out."""
    page = client.get("/logout/").get_data(as_text=True)
    found = re.search(r'<a href="/account/settings/">([^<]+)</a>', page)
    return found.group(1) if found else None


def sign_out(client: FlaskClient) -> None:
    assert post_form(client, "/logout/", {}).status_code in (302, 303)
    assert signed_in_email(client) is None


def test_new_account_from_a_verified_address(client: FlaskClient, provider: StandInProvider) -> None:
    provider.person = {"sub": ORCID, "email": "Ada@Example.org", "email_verified": True}
    answer = sign_in_with_provider(client, provider, next_url="/account/settings/applications/")
    assert answer.status_code in (302, 303)
    assert answer.headers["Location"].endswith("/account/settings/applications/")
    assert signed_in_email(client) == "ada@example.org"
    # The same identity comes back to the same account, whatever the provider now says about the address.
    sign_out(client)
    provider.person = {"sub": ORCID, "email": "other@example.org", "email_verified": True}
    assert sign_in_with_provider(client, provider).status_code in (302, 303)
    assert signed_in_email(client) == "ada@example.org"


def test_a_verified_address_links_the_existing_password_account(app: Flask, client: FlaskClient,
                                                                 provider: StandInProvider) -> None:
    sign_up_and_confirm(client, app, "grace@example.org", "correct horse battery")
    provider.person = {"sub": "grace-at-idp", "email": "grace@example.org", "email_verified": True}
    assert sign_in_with_provider(client, provider).status_code in (302, 303)
    assert signed_in_email(client) == "grace@example.org"
    # Both ways open the one account.
    sign_out(client)
    assert sign_in(client, "grace@example.org", "correct horse battery").status_code in (302, 303)
    assert signed_in_email(client) == "grace@example.org"
    sign_out(client)
    provider.person = {"sub": "grace-at-idp"}
    assert sign_in_with_provider(client, provider).status_code in (302, 303)
    assert signed_in_email(client) == "grace@example.org"


@pytest.mark.slow
def test_a_sign_up_nobody_confirmed_loses_its_password_to_the_verified_owner(app: Flask, client: FlaskClient,
                                                                             provider: StandInProvider) -> None:
    # Someone signs up in advance with another person's address, and never confirms it (they cannot).
    assert sign_up(client, "grace@example.org", "the squatter's password").status_code in (302, 303)
    provider.person = {"sub": "grace-at-idp", "email": "grace@example.org", "email_verified": True}
    assert sign_in_with_provider(client, provider).status_code in (302, 303)
    assert signed_in_email(client) == "grace@example.org"
    sign_out(client)
    assert sign_in(client, "grace@example.org", "the squatter's password").status_code not in (302, 303)
    assert signed_in_email(client) is None


def test_an_unverified_address_links_nothing_until_confirmed_by_mail(app: Flask, client: FlaskClient,
                                                                      provider: StandInProvider) -> None:
    sign_up_and_confirm(client, app, "grace@example.org", "correct horse battery")
    provider.person = {"sub": "mallory", "email": "grace@example.org", "email_verified": False}
    answer = sign_in_with_provider(client, provider)
    assert answer.status_code == 302 and answer.headers["Location"].endswith("/login/oidc/email")
    assert signed_in_email(client) is None
    page = client.get("/login/oidc/email")
    assert page.status_code == 200 and "mallory" in page.get_data(as_text=True)
    # Whoever holds this identity can only ask the address's owner to confirm; another browser cannot confirm.
    sent = post_form(client, "/login/oidc/email", {"email": "not an address"})
    assert sent.status_code == 400 and "valid e-mail" in sent.get_data(as_text=True)
    sent = post_form(client, "/login/oidc/email", {"email": "grace@example.org"})
    assert sent.status_code == 200 and "Check your mail" in sent.get_data(as_text=True)
    link = last_link(app, "grace@example.org", "/login/oidc/confirm/")
    elsewhere = https_client(app)
    refused = elsewhere.get(link)
    assert refused.status_code == 400
    assert "browser where you signed in" in refused.get_data(as_text=True)
    assert signed_in_email(elsewhere) is None
    # Opened where the sign-in happened: a page, then the confirmation links the identity and signs in.
    shown = client.get(link)
    assert shown.status_code == 200 and "grace@example.org" in shown.get_data(as_text=True)
    assert signed_in_email(client) is None
    assert post_form(client, link, {}).status_code in (302, 303)
    assert signed_in_email(client) == "grace@example.org"
    # Single use: the identity is linked now.
    sign_out(client)
    assert sign_in_with_provider(client, provider).status_code in (302, 303)
    assert signed_in_email(client) == "grace@example.org"
    reused = client.get(link)
    assert reused.status_code == 400


def test_no_address_at_all_like_orcid_makes_a_new_account_once_confirmed(app: Flask, client: FlaskClient,
                                                                          provider: StandInProvider) -> None:
    provider.person = {"sub": ORCID, "name": "Josiah Carberry"}
    answer = sign_in_with_provider(client, provider)
    assert answer.headers["Location"].endswith("/login/oidc/email")
    post_form(client, "/login/oidc/email", {"email": "josiah@example.org"})
    (message,) = sent_mail(app, "josiah@example.org")
    assert ORCID in body(message)
    link = last_link(app, "josiah@example.org", "/login/oidc/confirm/")
    assert post_form(client, link, {}).status_code in (302, 303)
    assert signed_in_email(client) == "josiah@example.org"
    with app.extensions["repository"].db.read() as conn:
        user = get_user_by_email(conn, "josiah@example.org")
    assert user is not None and user["password_hash"] is None and user["email_confirmed"] is not None


def test_a_provider_taking_the_secret_only_in_the_form(client: FlaskClient, provider: StandInProvider) -> None:
    provider.auth_methods = ["client_secret_post"]  # as some providers' discovery documents say
    provider.person = {"sub": ORCID, "email": "ada@example.org", "email_verified": True}
    assert sign_in_with_provider(client, provider).status_code in (302, 303)
    assert signed_in_email(client) == "ada@example.org"


def test_asking_for_links_is_throttled_and_bounded(make_settings: Any, provider: StandInProvider) -> None:
    for application in _app(make_settings, OIDC_ISSUER=provider.issuer, OIDC_CLIENT_ID=CLIENT_ID,
                            OIDC_CLIENT_SECRET=CLIENT_SECRET, RATELIMIT_SIGNIN="2/minute"):
        browser = https_client(application)
        provider.person = {"sub": ORCID}
        sign_in_with_provider(browser, provider)
        for attempt, address in enumerate(("a@example.org", "b@example.org", "c@example.org")):
            answer = post_form(browser, "/login/oidc/email", {"email": address})
            assert answer.status_code == (429 if attempt == 2 else 200)
        assert "Retry-After" in answer.headers and not sent_mail(application, "c@example.org")
        huge = post_form(browser, "/login/oidc/email", {"email": "d@example.org", "filler": "x" * 100_000})
        assert huge.status_code == 413


def test_the_address_comes_from_userinfo_when_the_id_token_lacks_it(client: FlaskClient,
                                                                    provider: StandInProvider) -> None:
    provider.person = {"sub": ORCID}
    provider.userinfo_extra = {"email": "ada@example.org", "email_verified": True}
    assert sign_in_with_provider(client, provider).status_code in (302, 303)
    assert signed_in_email(client) == "ada@example.org"


def test_a_deactivated_user_is_refused(app: Flask, client: FlaskClient, provider: StandInProvider) -> None:
    provider.person = {"sub": ORCID, "email": "ada@example.org", "email_verified": True}
    sign_in_with_provider(client, provider)
    sign_out(client)
    with app.extensions["repository"].db.write() as conn:  # as the operator's command does
        user = get_user_by_email(conn, "ada@example.org")
        assert user is not None
        users.deactivate(conn, user["id"])
    refused = sign_in_with_provider(client, provider)
    assert refused.status_code == 403 and "deactivated" in refused.get_data(as_text=True)
    assert signed_in_email(client) is None
    # Nor through a verified address of a deactivated account.
    provider.person = {"sub": "someone-else", "email": "ada@example.org", "email_verified": True}
    assert sign_in_with_provider(client, provider).status_code == 403
    assert signed_in_email(client) is None


def test_no_new_account_when_sign_up_is_closed(make_settings: Any, provider: StandInProvider) -> None:
    for application in _app(make_settings, OIDC_ISSUER=provider.issuer, OIDC_CLIENT_ID=CLIENT_ID,
                            OIDC_CLIENT_SECRET=CLIENT_SECRET, SIGNUP_ENABLED=False):
        browser = https_client(application)
        provider.person = {"sub": ORCID, "email": "ada@example.org", "email_verified": True}
        refused = sign_in_with_provider(browser, provider)
        assert refused.status_code == 403 and "operator" in refused.get_data(as_text=True)
        assert signed_in_email(browser) is None


@pytest.mark.slow
@pytest.mark.parametrize(("misbehave", "status", "says"), [
    ("access_denied", 400, "cancelled"),
    ("wrong_nonce", 502, "could not be verified"),
    ("wrong_audience", 502, "could not be verified"),
    ("wrong_issuer", 502, "could not be verified"),
    ("bad_signature", 502, "could not be verified"),
    ("expired", 502, "could not be verified"),
])
def test_a_bad_answer_signs_nobody_in(client: FlaskClient, provider: StandInProvider, misbehave: str,
                                      status: int, says: str) -> None:
    provider.person = {"sub": ORCID, "email": "ada@example.org", "email_verified": True}
    provider.misbehave = misbehave
    answer = sign_in_with_provider(client, provider)
    assert answer.status_code == status
    assert answer.mimetype == "text/html" and says in answer.get_data(as_text=True)
    assert signed_in_email(client) is None


def test_an_answer_for_another_browser_or_a_forged_state_is_refused(app: Flask, client: FlaskClient,
                                                                    provider: StandInProvider) -> None:
    provider.person = {"sub": ORCID, "email": "ada@example.org", "email_verified": True}
    callback = go_to_provider(client, provider)
    other = https_client(app)
    refused = other.get(callback)
    assert refused.status_code == 400 and "Start again" in refused.get_data(as_text=True)
    assert signed_in_email(other) is None
    forged = re.sub(r"state=[^&]+", "state=forged", callback)
    assert client.get(forged).status_code == 400
    assert client.get("/login/oidc/callback").status_code == 400
    assert signed_in_email(client) is None
    assert provider.token_requests == 0  # nothing was even asked of the provider


def test_an_unreachable_provider_gets_a_page(make_settings: Any) -> None:
    for application in _app(make_settings, OIDC_ISSUER=f"http://127.0.0.1:{free_port()}", OIDC_CLIENT_ID="x"):
        answer = https_client(application).get("/login/oidc/")
        assert answer.status_code == 502 and "could not be reached" in answer.get_data(as_text=True)


def test_without_a_provider_the_pages_are_404_and_there_is_no_button(make_settings: Any) -> None:
    for application in _app(make_settings):
        browser = https_client(application)
        for path in ("/login/oidc/", "/login/oidc/callback?code=x&state=y", "/login/oidc/email"):
            answer = browser.get(path)
            assert answer.status_code == 404 and answer.mimetype == "text/html", path
        assert "/login/oidc/" not in browser.get("/login/").get_data(as_text=True)


def test_with_a_provider_the_sign_in_page_has_the_button(client: FlaskClient) -> None:
    page = client.get("/login/?next=/account/settings/").get_data(as_text=True)
    assert re.search(r'href="/login/oidc/\?next=[^"]*settings[^"]*">Sign in with Stand-in</a>', page)


def test_claims_longer_than_the_columns_sign_in_or_ask(app: Flask, client: FlaskClient,
                                                       provider: StandInProvider) -> None:
    """A provider's `sub` past the identity column's 255 characters still signs its person in, to the same account
    each time; a verified address longer than any usable one (254) is not taken: the person is asked for one.
    Neither is a 500 (PostgreSQL refused the insert)."""
    long_sub = "s" * 300
    provider.person = {"sub": long_sub, "email": "lin@example.org", "email_verified": True}
    assert sign_in_with_provider(client, provider).status_code in (302, 303)
    assert signed_in_email(client) == "lin@example.org"
    sign_out(client)
    provider.person = {"sub": long_sub}
    assert sign_in_with_provider(client, provider).status_code in (302, 303)
    assert signed_in_email(client) == "lin@example.org"
    sign_out(client)
    provider.person = {"sub": "other-" + long_sub, "email": "x" * 250 + "@example.org", "email_verified": True}
    answer = sign_in_with_provider(client, provider)
    assert answer.status_code == 302 and answer.headers["Location"].endswith("/login/oidc/email")
    assert signed_in_email(client) is None
    post_form(client, "/login/oidc/email", {"email": "max@example.org"})
    link = last_link(app, "max@example.org", "/login/oidc/confirm/")
    assert post_form(client, link, {}).status_code in (302, 303)
    assert signed_in_email(client) == "max@example.org"
