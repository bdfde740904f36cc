"""Users of the administration tests: made directly in the database, with a role and a token, and (for the real
server) the command line and the API driven the way an operator and a depositor would."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from helpers.browser import api_session, check_page, screenshot
from helpers.http import ROOT
from repository.accounts import admin
from repository.accounts.audit import Actor
from repository.accounts.tokens import create_token, create_user

DEPOSITOR = ("deposit:write", "deposit:actions")


def staff_user(app: Any, email: str, role: str = "none", scopes: tuple[str, ...] = DEPOSITOR) -> tuple[int, dict]:
    """Create `email` with `role`; returns (user id, Authorization headers of a token with `scopes`)."""
    with app.extensions["repository"].db.write() as conn:
        user_id = create_user(conn, email)
        if role != "none":
            admin.set_role(conn, Actor.operator(), user_id, role)
        token = create_token(conn, user_id, list(scopes))[1]
    return user_id, {"Authorization": f"Bearer {token}"}


def admin_command(live_server: dict, *argv: str, stdin: str = "") -> str:
    """`repository-admin ARGV` against the live server's instance; its output."""
    done = subprocess.run([sys.executable, "-m", "repository", *argv], env=live_server["env"], cwd=ROOT,
                          input=stdin, capture_output=True, text=True, check=True)
    return done.stdout


def cli_token(live_server: dict, email: str) -> str:
    """A token of `email` (created with the account if need be) from scripts/create_token.py."""
    made = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "create_token.py"), "--email", email],
                          env=live_server["env"], cwd=ROOT, capture_output=True, text=True, check=True)
    return made.stdout.strip().splitlines()[-1]


def publish_over_api(live_server: dict, token: str, title: str,
                     description: str = "<p>Visit casino-links.example.</p>") -> int:
    """Deposit one file with `title` and `description` and publish it over the API; returns the record id."""
    http = api_session(live_server)
    http.headers["Authorization"] = f"Bearer {token}"
    base = live_server["url"] + "/api/deposit/depositions"
    body = {"title": title, "upload_type": "dataset", "description": description,
            "creators": [{"name": "Spam, Sam"}]}
    dep = http.post(base, json={"metadata": body}).json()
    sent = http.post(f"{base}/{dep['id']}/files", files={"file": ("a.txt", b"buy")}, data={"name": "a.txt"})
    assert sent.status_code == 201, sent.text
    done = http.post(f"{base}/{dep['id']}/actions/publish")
    assert done.status_code == 202, done.text
    return int(done.json()["record_id"])


def check_and_photograph(page: Any, what: str, name: str) -> None:
    """axe-core on the page, then its screenshots at desktop and phone width."""
    check_page(page, what)
    screenshot(page, name)
