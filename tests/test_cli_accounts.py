"""Operator commands for accounts: create an administrator, deactivate and reactivate a user."""

import io

from helpers.http import https_client
from helpers.mailbox import sent_mail
from helpers.pages import post_form, sign_in, sign_up_and_confirm

from repository.accounts.tokens import create_token, get_user_by_email
from repository.accounts.users import is_admin
from repository.cli import COMMANDS, invoke

PASSWORD = "correct horse battery"


def run(settings, name, *argv):
    return invoke(COMMANDS[name], list(argv), settings)


def user(app, email):
    with app.extensions["repository"].db.read() as conn:
        return get_user_by_email(conn, email)


def test_create_admin_with_a_password_from_stdin(app, settings, monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO(PASSWORD + "\n"))
    assert run(settings, "create-admin", "Root@Example.org", "--password-stdin") == 0
    out = capsys.readouterr().out
    assert "created administrator root@example.org" in out and PASSWORD not in out
    admin = user(app, "root@example.org")
    assert is_admin(admin) and admin["email_confirmed"] is not None
    client = https_client(app)
    assert sign_in(client, "root@example.org", PASSWORD).status_code == 303


def test_create_admin_without_a_password_prints_a_link_to_choose_one(app, settings, capsys):
    assert run(settings, "create-admin", "root@example.org") == 0
    link = capsys.readouterr().out.split("at: ")[-1].strip()
    assert link.startswith("https://localhost/account/reset/")
    client = https_client(app)
    path = link.removeprefix("https://localhost")
    assert post_form(client, path, {"password": PASSWORD, "password_again": PASSWORD}).status_code == 303
    assert client.get(path).status_code == 400  # used
    assert sign_in(https_client(app), "root@example.org", PASSWORD).status_code == 303


def test_create_admin_promotes_an_existing_user_and_keeps_the_password(app, settings, capsys):
    sign_up_and_confirm(https_client(app), app, "ada@example.org", PASSWORD)
    assert run(settings, "create-admin", "ada@example.org") == 0
    out = capsys.readouterr().out
    assert "updated administrator" in out and "/account/reset/" not in out
    assert is_admin(user(app, "ada@example.org"))
    assert sign_in(https_client(app), "ada@example.org", PASSWORD).status_code == 303


def test_create_admin_refuses_a_short_password(settings, monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO("short\n"))
    assert run(settings, "create-admin", "root@example.org", "--password-stdin") == 2
    assert "at least" in capsys.readouterr().err


def test_deactivate_stops_sessions_and_tokens_at_once_and_reactivate_brings_them_back(app, settings, capsys):
    client = https_client(app)
    sign_up_and_confirm(client, app, "ada@example.org", PASSWORD)
    sign_in(client, "ada@example.org", PASSWORD)
    with app.extensions["repository"].db.write() as conn:
        token = create_token(conn, user(app, "ada@example.org")["id"], ["deposit:write"])[1]
    bearer = {"Authorization": f"Bearer {token}"}
    assert run(settings, "deactivate-user", "ada@example.org") == 0
    assert "is now deactivated" in capsys.readouterr().out
    assert client.get("/account/settings/").status_code == 302  # signed out
    assert https_client(app).get("/api/tokens/", headers=bearer).status_code == 401
    assert sign_in(https_client(app), "ada@example.org", PASSWORD).status_code == 403
    assert user(app, "ada@example.org") is not None  # nothing deleted
    assert run(settings, "deactivate-user", "ada@example.org") == 0
    assert "was already deactivated" in capsys.readouterr().out
    assert run(settings, "reactivate-user", "ada@example.org") == 0
    assert https_client(app).get("/api/tokens/", headers=bearer).status_code == 200
    assert sign_in(https_client(app), "ada@example.org", PASSWORD).status_code == 303
    assert sent_mail(app, "ada@example.org")


def test_unknown_user_is_exit_1(settings, capsys):
    assert run(settings, "deactivate-user", "nobody@example.org") == 1
    assert "no user" in capsys.readouterr().err
