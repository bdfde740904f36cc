"""Account pages over HTTP, as a browser uses them: sign-up, the mailed confirmation link, sign-in and sign-out,
password reset, the settings page; and what they refuse: wrong passwords, unknown addresses (the same answer),
expired or reused links, forged CSRF tokens, foreign `next=`, oversize forms, deactivated users, too many tries."""

import re
import time

import pytest
from helpers.http import https_client
from helpers.mailbox import body, last_link, sent_mail
from helpers.pages import csrf_from, post_form, referer, sign_in, sign_out, sign_up, sign_up_and_confirm
from itsdangerous.timed import TimestampSigner
from sqlalchemy import func, select

from app import create_app
from repository.accounts import signup, users
from repository.accounts.tokens import create_token, create_user, get_user_by_email
from repository.ondemand import wait_all_idle
from repository.storage.tables.mail import mail_outbox

PASSWORD = "correct horse battery"
ADA = "ada@example.org"


def signed_in_as(client) -> str | None:
    """The address the settings page shows, or None when it sends to the sign-in page."""
    page = client.get("/account/settings/")
    if page.status_code == 302:
        assert page.headers["Location"].startswith("/login/?next=")
        return None
    assert page.status_code == 200
    return re.search(r"Signed in as <strong>([^<]+)</strong>", page.get_data(as_text=True)).group(1)


def user_row(app, email):
    with app.extensions["repository"].db.read() as conn:
        return get_user_by_email(conn, email)


@pytest.fixture
def make_app(make_settings):
    """Apps with settings of their own, disposed of afterwards."""
    made = []

    def make(**overrides):
        made.append(create_app(make_settings(**overrides)))
        return made[-1]

    yield make
    wait_all_idle()  # the mail thread (a deferred reset request, a message) done with its connection first
    for application in made:
        application.extensions["repository"].db.dispose()


@pytest.fixture
def ada(client, app):
    sign_up_and_confirm(client, app, ADA, PASSWORD)
    return client


def test_sign_up_mail_confirm_sign_in_settings(client, app):
    form = client.get("/signup/")
    html = form.get_data(as_text=True)
    assert form.status_code == 200 and 'autocomplete="new-password"' in html and 'autocomplete="email"' in html
    assert '<label for="email">' in html
    answer = sign_up(client, "Ada@Example.org", PASSWORD)
    assert answer.status_code == 303 and answer.headers["Location"] == "/account/check-mail/"
    assert "is on its way" in client.get("/account/check-mail/").get_data(as_text=True)
    assert PASSWORD not in body(sent_mail(app, ADA)[-1])
    # not confirmed yet: no sign-in, and a way to get a new link
    refused = sign_in(client, ADA, PASSWORD)
    assert refused.status_code == 403 and "not confirmed" in refused.get_data(as_text=True)
    assert 'action="/account/confirm/resend/"' in refused.get_data(as_text=True)
    link = last_link(app, ADA, "/account/confirm/")
    confirmed = post_form(client, link, {})
    assert confirmed.status_code == 303 and confirmed.headers["Location"] == "/login/"
    assert signed_in_as(client) is None  # confirming does not sign in
    signed = sign_in(client, ADA, PASSWORD)
    assert signed.status_code == 303 and signed.headers["Location"] == "/deposit"  # My uploads
    assert signed_in_as(client) == ADA
    assert user_row(app, ADA)["last_login"] is not None
    again = post_form(client, link, {})  # the link did its work once
    assert again.status_code == 400 and "already confirmed" in again.get_data(as_text=True)


def test_sign_up_with_a_registered_address_looks_the_same_and_mails_its_owner(ada, app):
    client = https_client(app)
    before = len(sent_mail(app, ADA))
    answer = sign_up(client, ADA, "another password 123")
    assert answer.status_code == 303 and answer.headers["Location"] == "/account/check-mail/"
    mails = sent_mail(app, ADA)
    assert len(mails) == before + 1 and "already has an account" in body(mails[-1])
    assert "/account/reset/" in body(mails[-1])
    assert sign_in(client, ADA, "another password 123").status_code == 401  # nothing changed
    assert sign_in(client, ADA, PASSWORD).status_code == 303


def test_an_operator_made_account_is_claimed_only_through_its_mailbox(client, app):
    with app.extensions["repository"].db.write() as conn:
        create_user(conn, "robot@example.org")
    assert sign_up(client, "robot@example.org", PASSWORD).status_code == 303
    assert sign_in(client, "robot@example.org", PASSWORD).status_code == 401
    reset_link = last_link(app, "robot@example.org", "/account/reset/")
    done = post_form(client, reset_link, {"password": PASSWORD, "password_again": PASSWORD})
    assert done.status_code == 303 and signed_in_as(client) == "robot@example.org"


@pytest.mark.parametrize(("password", "again", "message"), [
    ("short", "short", "at least 10 characters"),
    (ADA, ADA, "cannot be your e-mail address"),
    (PASSWORD, PASSWORD + "x", "two passwords differ"),
    ("x" * 1025, "x" * 1025, "1024"),
])
def test_sign_up_refuses_bad_passwords(client, app, password, again, message):
    answer = post_form(client, "/signup/", {"email": ADA, "password": password, "password_again": again})
    html = answer.get_data(as_text=True)
    assert answer.status_code == 400 and message in html and 'aria-invalid="true"' in html
    assert password == ADA or password not in html
    assert user_row(app, ADA) is None and sent_mail(app, ADA) == []


def test_sign_up_refuses_a_bad_address(client, app):
    for email in ("not an address", "a@" + "b" * 300):
        answer = post_form(client, "/signup/", {"email": email, "password": PASSWORD, "password_again": PASSWORD})
        assert answer.status_code == 400 and "field-error" in answer.get_data(as_text=True)


def test_sign_up_closed_is_404(make_app):
    client = https_client(make_app(SIGNUP_ENABLED=False))
    assert client.get("/signup/").status_code == 404
    page = client.post("/signup/", data={"csrf_token": csrf_from(client.get("/login/").get_data())},
                       headers=referer("/signup/"))
    assert page.status_code == 404 and "<h1>Not found</h1>" in page.get_data(as_text=True)


def test_wrong_password_and_unknown_address_read_the_same(ada, app):
    client = https_client(app)
    wrong = sign_in(client, ADA, "not the password")
    unknown = sign_in(client, "nobody@example.org", "not the password")
    assert wrong.status_code == unknown.status_code == 401

    def text(response):
        return re.sub(r'value="[^"]*"', "", response.get_data(as_text=True))

    assert text(wrong) == text(unknown)
    assert "not the password" not in wrong.get_data(as_text=True)
    assert signed_in_as(client) is None


def confirm_page(client, link):
    """GET a mailed confirmation link: a page with one form posting back to the link (and its CSRF token)."""
    page = client.get(link)
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and "no-store" in page.headers["Cache-Control"]
    assert f'<form method="post" action="{link}">' in html and csrf_from(html)
    return html


def test_a_sign_up_link_confirms_only_on_a_post_from_its_page(client, app):
    """A mail gateway that opens every link (GET, no cookie) confirms nothing; the person presses the button."""
    sign_up(client, ADA, PASSWORD)
    link = last_link(app, ADA, "/account/confirm/")
    assert "Confirm" in confirm_page(https_client(app), link)  # a link scanner: no cookie, no form sent
    assert user_row(app, ADA)["email_confirmed"] is None
    assert client.post(link, data={}, headers=referer(link)).status_code == 400  # no CSRF token: nothing
    assert user_row(app, ADA)["email_confirmed"] is None
    confirmed = post_form(client, link, {})
    assert confirmed.status_code == 303 and confirmed.headers["Location"] == "/login/"
    assert user_row(app, ADA)["email_confirmed"] is not None


def test_an_address_change_link_confirms_only_on_a_post_from_its_page(ada, app):
    sign_in(ada, ADA, PASSWORD)
    new = "ada.lovelace@example.org"
    post_form(ada, "/account/settings/email", {"new_email": new, "password": PASSWORD}, page="/account/settings/")
    link = last_link(app, new, "/account/confirm-email/")
    confirm_page(https_client(app), link)
    confirm_page(ada, link)
    assert signed_in_as(ada) == ADA  # opening the link changed nothing
    assert post_form(ada, link, {}).status_code == 303
    assert signed_in_as(ada) == new


def test_expired_and_reused_confirmation_links(client, app, monkeypatch):
    sign_up(client, ADA, PASSWORD)
    link = last_link(app, ADA, "/account/confirm/")
    now = time.time()
    monkeypatch.setattr(TimestampSigner, "get_timestamp", lambda self: int(now) + 49 * 3600)
    expired = post_form(client, link, {})
    assert expired.status_code == 400 and "expired" in expired.get_data(as_text=True)
    assert 'href="/account/confirm/resend/"' in expired.get_data(as_text=True)
    monkeypatch.undo()
    assert user_row(app, ADA)["email_confirmed"] is None
    assert post_form(client, link, {}).status_code == 303
    assert post_form(client, link, {}).status_code == 400
    forged = post_form(client, link[:-3] + "abc", {})
    assert forged.status_code == 400 and "not valid" in forged.get_data(as_text=True)


def test_resend_confirmation_answers_the_same_for_any_address(client, app):
    sign_up(client, ADA, PASSWORD)
    for email in (ADA, "nobody@example.org"):
        answer = post_form(https_client(app), "/account/confirm/resend/", {"email": email})
        assert answer.status_code == 303 and answer.headers["Location"] == "/account/check-mail/"
    assert len(sent_mail(app, ADA)) == 2 and sent_mail(app, "nobody@example.org") == []
    assert post_form(client, last_link(app, ADA, "/account/confirm/"), {}).status_code == 303


def test_missing_or_forged_csrf_token_changes_nothing(client, app):
    data = {"email": ADA, "password": PASSWORD, "password_again": PASSWORD}
    client.get("/signup/")
    missing = client.post("/signup/", data=data, headers=referer("/signup/"))
    forged = client.post("/signup/", data=data | {"csrf_token": "forged"}, headers=referer("/signup/"))
    token = csrf_from(client.get("/signup/").get_data())
    foreign = client.post("/signup/", data=data | {"csrf_token": token},
                          headers={"Referer": "https://evil.example/signup/"})
    for answer in (missing, forged, foreign):
        assert answer.status_code == 400 and "Reload the page" in answer.get_data(as_text=True)
        assert answer.mimetype == "text/html"
    assert user_row(app, ADA) is None


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example", "/\\evil", "javascript:alert(1)"])
def test_foreign_next_goes_to_my_uploads(ada, target):
    answer = sign_in(ada, ADA, PASSWORD, next_url=target)
    assert answer.status_code == 303 and answer.headers["Location"] == "/deposit"


def test_next_on_this_site_is_followed(ada):
    page = ada.get("/account/settings/applications/")
    if page.status_code == 302:  # the applications area sends to sign-in with its own next=
        assert page.headers["Location"] == "/login/?next=/account/settings/applications/"
    form = ada.get("/login/?next=%2Faccount%2Fsettings%2Fapplications%2F").get_data(as_text=True)
    assert 'value="/account/settings/applications/"' in form
    answer = sign_in(ada, ADA, PASSWORD, next_url="/account/settings/applications/")
    assert answer.headers["Location"] == "/account/settings/applications/"


def test_oversize_forms_are_refused_clearly(client, app):
    token = csrf_from(client.get("/login/").get_data())
    huge = client.post("/login/", data={"csrf_token": token, "email": ADA, "password": "x" * 200_000},
                       headers=referer("/login/"))
    assert huge.status_code == 413 and huge.mimetype == "text/html"
    long_field = client.post("/login/", data={"csrf_token": token, "email": "a" * 5000 + "@example.org",
                                              "password": "x" * 2000}, headers=referer("/login/"))
    assert long_field.status_code == 400 and "field-error" in long_field.get_data(as_text=True)


def test_session_cookie_is_secure_httponly_lax_and_changes_at_sign_in(ada):
    ada.get("/login/")
    before = ada.get_cookie("session").value
    answer = sign_in(ada, ADA, PASSWORD)
    cookie = next(c for c in answer.headers.getlist("Set-Cookie") if c.startswith("session="))
    assert "Secure" in cookie and "HttpOnly" in cookie and "SameSite=Lax" in cookie
    assert ada.get_cookie("session").value != before


def test_sign_out_ends_the_session(ada):
    sign_in(ada, ADA, PASSWORD)
    page = ada.get("/logout/")
    assert page.status_code == 200 and "Sign out" in page.get_data(as_text=True)
    answer = sign_out(ada)
    assert answer.status_code == 303 and answer.headers["Location"] == "/"
    assert signed_in_as(ada) is None


def _copy_of(client, app):
    """Another browser holding a copy of `client`'s session cookie (as a thief would)."""
    copy = https_client(app)
    copy.set_cookie("session", client.get_cookie("session").value, domain="localhost")
    return copy


def test_sign_out_ends_the_session_on_the_server(ada, app):
    sign_in(ada, ADA, PASSWORD)
    copy = _copy_of(ada, app)
    assert signed_in_as(copy) == ADA
    assert sign_out(ada).status_code == 303
    assert signed_in_as(copy) is None  # the copied cookie no longer signs anyone in


def test_a_copied_cookie_cannot_create_a_token_after_sign_out(ada, app):
    sign_in(ada, ADA, PASSWORD)
    copy = _copy_of(ada, app)
    headers = {"X-CSRFToken": csrf_from(copy.get("/account/settings/applications/").get_data()),
               **referer("/account/settings/applications/")}
    assert sign_out(ada).status_code == 303
    made = copy.post("/api/tokens/", json={"name": "x", "scopes": ["deposit:write"]}, headers=headers)
    assert made.status_code == 401 and made.json["status"] == 401


def test_sign_out_everywhere_from_the_settings_page(ada, app):
    sign_in(ada, ADA, PASSWORD)
    other = https_client(app)
    sign_in(other, ADA, PASSWORD)
    page = ada.get("/account/settings/").get_data(as_text=True)
    assert re.search(r'<form method="post" action="/logout/"[^>]*>', page) and "Sign out everywhere" in page
    assert post_form(ada, "/logout/", {}, page="/account/settings/").status_code == 303
    assert signed_in_as(ada) is None and signed_in_as(other) is None
    assert ada.post("/logout/", data={}, headers=referer("/account/settings/")).status_code == 400  # CSRF


def test_a_session_ends_after_its_absolute_lifetime_however_used(ada, app):
    sign_in(ada, ADA, PASSWORD)
    user = user_row(app, ADA)
    limit = app.extensions["repository"].settings.SESSION_MAX_DAYS * 86400
    serializer = app.session_interface.get_signing_serializer(app)

    def began(ago):  # a browser whose session (otherwise genuine) began `ago` seconds back
        browser = https_client(app)
        content = {"uid": user["id"], "epoch": user["auth_epoch"], "since": int(time.time() - ago)}
        browser.set_cookie("session", serializer.dumps(content), domain="localhost")
        return browser

    assert signed_in_as(began(limit - 60)) == ADA  # used every day until now: still signed in
    assert signed_in_as(began(limit + 60)) is None
    old = https_client(app)  # a cookie from before sessions carried their start
    old.set_cookie("session", serializer.dumps({"uid": user["id"], "epoch": user["auth_epoch"]}), domain="localhost")
    assert signed_in_as(old) is None


def test_deactivated_user_is_signed_out_and_tokens_refused(ada, app):
    sign_in(ada, ADA, PASSWORD)
    with app.extensions["repository"].db.write() as conn:
        user = get_user_by_email(conn, ADA)
        token = create_token(conn, user["id"], ["deposit:write"])[1]
    assert https_client(app).get("/api/tokens/", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    with app.extensions["repository"].db.write() as conn:
        users.deactivate(conn, user["id"])
    assert signed_in_as(ada) is None
    assert https_client(app).get("/api/tokens/", headers={"Authorization": f"Bearer {token}"}).status_code == 401
    again = sign_in(https_client(app), ADA, PASSWORD)
    assert again.status_code == 403 and "deactivated" in again.get_data(as_text=True)


@pytest.mark.slow
def test_token_cannot_open_account_pages(app, make_token):
    token = make_token("robot@example.org")
    answer = https_client(app).get("/account/settings/", headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 401


def test_password_change_ends_other_sessions_and_keeps_this_one(ada, app):
    sign_in(ada, ADA, PASSWORD)
    other = https_client(app)
    sign_in(other, ADA, PASSWORD)
    wrong = post_form(ada, "/account/settings/password", {
        "current_password": "not it at all", "new_password": "a new long password",
        "new_password_again": "a new long password"}, page="/account/settings/")
    assert wrong.status_code == 400 and "not your current password" in wrong.get_data(as_text=True)
    assert signed_in_as(other) == ADA
    done = post_form(ada, "/account/settings/password", {
        "current_password": PASSWORD, "new_password": "a new long password",
        "new_password_again": "a new long password"}, page="/account/settings/")
    assert done.status_code == 303
    assert signed_in_as(ada) == ADA and signed_in_as(other) is None
    assert sign_in(https_client(app), ADA, PASSWORD).status_code == 401
    assert sign_in(https_client(app), ADA, "a new long password").status_code == 303


@pytest.mark.slow
def test_reset_flow(ada, app):
    other = https_client(app)
    sign_in(other, ADA, PASSWORD)
    client = https_client(app)
    for email in (ADA, "nobody@example.org"):
        answer = post_form(client, "/account/reset/", {"email": email})
        assert answer.status_code == 303 and answer.headers["Location"] == "/account/check-mail/"
    assert sent_mail(app, "nobody@example.org") == []
    link = last_link(app, ADA, "/account/reset/")
    page = client.get(link)
    assert page.status_code == 200 and 'autocomplete="new-password"' in page.get_data(as_text=True)
    short = post_form(client, link, {"password": "short", "password_again": "short"})
    assert short.status_code == 400
    done = post_form(client, link, {"password": "brand new password", "password_again": "brand new password"})
    assert done.status_code == 303 and signed_in_as(client) == ADA
    assert signed_in_as(other) is None  # every other session ended
    used = https_client(app).get(link)
    assert used.status_code == 400 and "already been used" in used.get_data(as_text=True)
    assert sign_in(https_client(app), ADA, "brand new password").status_code == 303


def test_a_reset_request_does_the_same_work_in_the_request_for_any_address(ada, app, monkeypatch):
    """The answer must not take longer for a registered address: the request only hands the address to the mail
    thread, the same way for both; the lookup, the link and the message happen there, off the request path."""
    mailer = app.extensions["repository"].mailer
    monkeypatch.setattr(mailer, "kick", lambda: None)  # hold the thread: see what the request itself did
    calls = []
    real = signup.request_reset
    monkeypatch.setattr(signup, "request_reset", lambda *args, **kwargs: calls.append(args[1]) or real(*args, **kwargs))
    mail_rows = []
    for email in (ADA, "nobody@example.org"):
        answer = post_form(https_client(app), "/account/reset/", {"email": email})
        assert answer.status_code == 303 and answer.headers["Location"] == "/account/check-mail/"
        with app.extensions["repository"].db.read() as conn:
            mail_rows.append(conn.execute(select(func.count()).select_from(mail_outbox)).scalar_one())
    assert calls == [] and mail_rows[0] == mail_rows[1]  # nothing looked up, nothing queued by either request
    assert "/account/reset/" in last_link(app, ADA, "/account/reset/")  # the thread's pass: mailed to ADA only
    assert calls == [ADA, "nobody@example.org"] and sent_mail(app, "nobody@example.org") == []


def test_expired_reset_link(ada, app, monkeypatch):
    post_form(ada, "/account/reset/", {"email": ADA})
    link = last_link(app, ADA, "/account/reset/")
    now = time.time()
    monkeypatch.setattr(TimestampSigner, "get_timestamp", lambda self: int(now) + 3 * 3600)
    expired = ada.get(link)
    assert expired.status_code == 400 and "expired" in expired.get_data(as_text=True)


def test_change_email_switches_once_the_new_address_confirms(ada, app):
    sign_in(ada, ADA, PASSWORD)
    new = "ada.lovelace@example.org"
    wrong = post_form(ada, "/account/settings/email", {"new_email": new, "password": "wrong password"},
                      page="/account/settings/")
    assert wrong.status_code == 400 and "not your current password" in wrong.get_data(as_text=True)
    done = post_form(ada, "/account/settings/email", {"new_email": new, "password": PASSWORD},
                     page="/account/settings/")
    assert done.status_code == 303 and signed_in_as(ada) == ADA  # not switched yet
    assert new in body(sent_mail(app, ADA)[-1])  # the old address is told
    link = last_link(app, new, "/account/confirm-email/")
    assert post_form(ada, link, {}).status_code == 303
    assert signed_in_as(ada) == new
    assert post_form(ada, link, {}).status_code == 400  # single use
    assert "is now" in body(sent_mail(app, ADA)[-1])
    assert sign_in(https_client(app), new, PASSWORD).status_code == 303


def test_change_email_to_a_registered_address_does_not_take_it(ada, app):
    sign_up_and_confirm(https_client(app), app, "bob@example.org", PASSWORD)
    sign_in(ada, ADA, PASSWORD)
    done = post_form(ada, "/account/settings/email", {"new_email": "bob@example.org", "password": PASSWORD},
                     page="/account/settings/")
    assert done.status_code == 303
    assert "already has an account" in body(sent_mail(app, "bob@example.org")[-1])
    assert signed_in_as(ada) == ADA


def client_at(app, address):
    client = https_client(app)
    client.environ_base["REMOTE_ADDR"] = address
    return client


def test_sign_in_sign_up_and_reset_are_throttled_per_client(make_app):
    app = make_app(RATELIMIT_SIGNIN="3/minute")
    sign_up_and_confirm(client_at(app, "10.0.0.100"), app, ADA, PASSWORD)
    client = client_at(app, "10.0.0.1")
    for email in ("a@example.org", "b@example.org", "c@example.org"):
        assert sign_in(client, email, "wrong password!").status_code == 401
    refused = sign_in(client, ADA, PASSWORD)  # right this time, but the fourth attempt of the minute from here
    assert refused.status_code == 429 and 0 < int(refused.headers["Retry-After"]) <= 60
    assert "Too many attempts" in refused.get_data(as_text=True)
    assert sign_up(client, "d@example.org", PASSWORD).status_code == 429
    assert post_form(client, "/account/reset/", {"email": "e@example.org"}).status_code == 429
    assert signed_in_as(client) is None
    assert sign_in(client_at(app, "10.0.0.2"), ADA, PASSWORD).status_code == 303  # elsewhere, ADA is fine


def test_sign_in_is_throttled_per_address_and_account_the_same_for_unknown_ones(make_app):
    app = make_app(RATELIMIT_SIGNIN="3/minute")
    sign_up_and_confirm(client_at(app, "10.0.0.100"), app, ADA, PASSWORD)
    for n, email in enumerate((ADA, "nobody@example.org")):
        stranger = client_at(app, f"10.0.{n}.1")
        answers = [sign_in(stranger, email, f"wrong password {i}").status_code for i in range(4)]
        assert answers == [401, 401, 401, 429]  # the same whether the address has an account or not
    # the right password from the stranger's address does not get through a spent counter
    assert sign_in(client_at(app, "10.0.0.1"), ADA, PASSWORD).status_code == 429
    assert sign_in(client_at(app, "10.0.9.2"), "bob@example.org", "wrong password!").status_code == 401


def test_attempts_from_one_address_never_lock_the_owner_out_elsewhere(make_app):
    """Fifty-one wrong sign-ins for ADA from one address (past both of the default limits) lock neither ADA's
    sign-in nor ADA's password reset from another address; and the reset path is never locked by sign-ins."""
    app = make_app()
    sign_up_and_confirm(client_at(app, "10.0.0.100"), app, ADA, PASSWORD)
    stranger = client_at(app, "10.6.6.6")
    token = csrf_from(stranger.get("/login/").get_data())  # one page, then the posts (the guest limit is 60/minute)
    answers = [stranger.post("/login/", data={"csrf_token": token, "email": ADA, "password": f"guess number {i}"},
                             headers=referer("/login/")).status_code for i in range(51)]
    assert answers[:10] == [401] * 10 and set(answers[10:]) == {429}
    elsewhere = client_at(app, "10.0.0.200")
    assert post_form(elsewhere, "/account/reset/", {"email": ADA}).status_code == 303
    assert "/account/reset/" in last_link(app, ADA, "/account/reset/")
    assert sign_in(elsewhere, ADA, PASSWORD).status_code == 303
    assert signed_in_as(elsewhere) == ADA


def test_strangers_asking_for_resets_never_lock_the_owners_reset(make_app):
    app = make_app(RATELIMIT_SIGNIN="3/minute")
    sign_up_and_confirm(client_at(app, "10.0.0.100"), app, ADA, PASSWORD)
    for n in range(4):  # four strangers, each asking as often as allowed and more
        stranger = client_at(app, f"10.7.{n}.1")
        answers = [post_form(stranger, "/account/reset/", {"email": ADA}).status_code for _ in range(4)]
        assert answers == [303, 303, 303, 429]
    assert post_form(client_at(app, "10.0.0.200"), "/account/reset/", {"email": ADA}).status_code == 303
    assert sign_in(client_at(app, "10.0.0.200"), ADA, PASSWORD).status_code == 303


def test_the_settings_forms_throttle_current_password_checks_per_account(make_app):
    app = make_app(RATELIMIT_SIGNIN="3/minute")
    sign_up_and_confirm(client_at(app, "10.0.0.100"), app, ADA, PASSWORD)
    browser = client_at(app, "10.0.0.1")
    assert sign_in(browser, ADA, PASSWORD).status_code == 303
    other = client_at(app, "10.0.0.2")  # the same account in another browser, elsewhere
    assert sign_in(other, ADA, PASSWORD).status_code == 303
    new = "another horse battery"
    guesses = [post_form(browser, "/account/settings/password", {
        "current_password": f"guess {i}", "new_password": new, "new_password_again": new},
        page="/account/settings/").status_code for i in range(2)]
    guesses.append(post_form(browser, "/account/settings/email", {"new_email": "x@example.org",
                                                                  "password": "guess 3"},
                             page="/account/settings/").status_code)
    assert guesses == [400, 400, 400]
    refused = post_form(other, "/account/settings/password", {
        "current_password": PASSWORD, "new_password": new, "new_password_again": new}, page="/account/settings/")
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 0  # per account, wherever from
    assert sign_in(client_at(app, "10.0.0.3"), ADA, PASSWORD).status_code == 303  # sign-in is not locked by it


def test_a_hash_with_weaker_parameters_is_replaced_at_sign_in(ada, app):
    from argon2 import PasswordHasher
    from sqlalchemy import update

    from repository.storage.tables.accounts import users as user_table

    weak = PasswordHasher(time_cost=1, memory_cost=8192).hash(PASSWORD)
    with app.extensions["repository"].db.write() as conn:
        conn.execute(update(user_table).where(user_table.c.email == ADA).values(password_hash=weak))
    assert sign_in(ada, ADA, PASSWORD).status_code == 303
    stored = user_row(app, ADA)["password_hash"]
    assert stored != weak and stored.startswith("$argon2id$")
    assert sign_in(https_client(app), ADA, PASSWORD).status_code == 303


def test_the_headers_sign_in_link_comes_back_to_the_page(client, app):
    sign_up_and_confirm(client, app, ADA, PASSWORD)
    page = client.get("/communities/?q=soil").get_data(as_text=True)
    link = re.search(r'<a href="([^"]*)">Sign in</a>', page).group(1)
    assert link == "/login/?next=/communities/%3Fq%3Dsoil"
    # The sign-in pages themselves link to a plain sign-in (which then goes on to My uploads).
    assert re.search(r'<a href="([^"]*)">Sign in</a>', client.get("/signup/").get_data(as_text=True)).group(1) == "/login/"
    form = client.get(link)
    answer = client.post(link, data={"csrf_token": csrf_from(form.get_data()), "email": ADA, "password": PASSWORD,
                                     "next": re.search(r'name="next"[^>]*value="([^"]*)"', form.get_data(as_text=True))
                                     .group(1).replace("&amp;", "&")}, headers=referer(link))  # fmt: skip
    assert answer.status_code == 303 and answer.headers["Location"] == "/communities/?q=soil"
