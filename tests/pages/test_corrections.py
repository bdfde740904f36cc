"""The deposit page's corrections over HTTP (repository/pages/corrections.py): the confirmation page, the deletion
with a reason (the tombstone page after), the deletion request after the window, the files unlock; each form needs
its CSRF token, anyone else's deposition is the 404 page, and a refusal says why and changes nothing. The window
is moved by the app's clock."""

from __future__ import annotations

import pytest
from helpers.factories import publish, upload
from helpers.http import https_client
from helpers.pages import csrf_from, referer, sign_in, sign_up_and_confirm

from repository.accounts.tokens import create_token, get_user_by_email

OWNER, OTHER = "owner@example.org", "other@example.org"
PASSWORD = "correct horse battery"
DAY = 86400
SCOPES = ["deposit:write", "deposit:actions"]


def _browser(app, email: str):  # type: ignore[no-untyped-def]
    client = https_client(app)
    sign_up_and_confirm(client, app, email, PASSWORD)
    assert sign_in(client, email, PASSWORD).status_code in (302, 303)
    return client


@pytest.fixture
def owner(app):  # type: ignore[no-untyped-def]
    return _browser(app, OWNER)


@pytest.fixture
def version(app, owner) -> int:  # type: ignore[no-untyped-def]
    """A version published by OWNER (through the API, with a token of theirs)."""
    with app.extensions["repository"].db.write() as conn:
        user = get_user_by_email(conn, OWNER)
        assert user is not None
        auth = {"Authorization": f"Bearer {create_token(conn, user['id'], SCOPES)[1]}"}
    api = https_client(app)
    dep = api.post("/api/deposit/depositions/", headers=auth, json={"metadata": {
        "upload_type": "dataset", "title": "Lake temperatures", "description": "Daily means.",
        "creators": [{"name": "Doe, Jane"}]}}).json  # fmt: skip
    upload(api, auth, dep)
    return int(publish(api, auth, dep)["id"])


def _post(client, path: str, page: str, **fields: str):  # type: ignore[no-untyped-def]
    token = csrf_from(client.get(page).get_data())
    return client.post(path, data={"csrf_token": token, **fields}, headers=referer(page))


@pytest.mark.slow
def test_delete_after_confirming(owner, version, client):
    page = owner.get(f"/deposit/{version}")
    assert "Delete this version…" in page.get_data(as_text=True)
    confirm = owner.get(f"/deposit/{version}/delete").get_data(as_text=True)
    assert "Why should it be deleted?" in confirm and "Contains personal or sensitive data" in confirm
    # Without the form's token: refused, nothing deleted.
    forged = owner.post(f"/deposit/{version}/delete-version", data={"reason": "mistake"},
                        headers=referer(f"/deposit/{version}/delete"))
    assert forged.status_code == 400
    assert client.get(f"/api/records/{version}").status_code == 200
    # A bad reason: back to the confirmation page, which says why.
    bad = _post(owner, f"/deposit/{version}/delete-version", f"/deposit/{version}/delete", reason="other")
    assert bad.status_code == 303 and bad.headers["Location"].endswith(f"/deposit/{version}/delete")
    assert "needs a note" in owner.get(bad.headers["Location"]).get_data(as_text=True)
    assert client.get(f"/api/records/{version}").status_code == 200
    done = _post(owner, f"/deposit/{version}/delete-version", f"/deposit/{version}/delete", reason="duplicate",
                 note="Same as record 1.")
    assert done.status_code == 303 and done.headers["Location"].endswith(f"/records/{version}")
    tombstone = client.get(f"/records/{version}")
    assert tombstone.status_code == 410
    text = tombstone.get_data(as_text=True)
    assert "Lake temperatures" in text and "A duplicate of another record" in text and "Same as record 1." in text
    assert "This version is deleted" in owner.get(f"/deposit/{version}").get_data(as_text=True)
    assert "deleted already" in owner.get(f"/deposit/{version}/delete").get_data(as_text=True)


def test_after_the_window_a_request(owner, version, client, clock):
    clock.advance(31 * DAY)
    confirm = owner.get(f"/deposit/{version}/delete").get_data(as_text=True)
    assert "Send the deletion request" in confirm and "within 30 days" in confirm
    late = _post(owner, f"/deposit/{version}/delete-version", f"/deposit/{version}/delete", reason="mistake")
    assert "within 30 days" in owner.get(late.headers["Location"]).get_data(as_text=True)
    sent = _post(owner, f"/deposit/{version}/request-deletion", f"/deposit/{version}/delete", reason="mistake")
    assert sent.status_code == 303
    assert "deletion request was sent" in owner.get(sent.headers["Location"]).get_data(as_text=True)
    assert client.get(f"/api/records/{version}").status_code == 200
    page = owner.get(f"/deposit/{version}").get_data(as_text=True)
    assert "Fix the files</button>" not in page and "Ask for its deletion…" in page


def test_unlock_the_files_from_the_page(owner, version, app):
    opened = _post(owner, f"/deposit/{version}/unlockfiles", f"/deposit/{version}")
    assert opened.status_code == 303
    page = owner.get(f"/deposit/{version}").get_data(as_text=True)
    assert "You are fixing the files of a published upload" in page and "data-upload-form" in page
    again = _post(owner, f"/deposit/{version}/unlockfiles", f"/deposit/{version}")
    assert "being edited" in owner.get(again.headers["Location"]).get_data(as_text=True)


def test_anyone_elses_is_not_found(app, version):
    other = _browser(app, OTHER)
    assert other.get(f"/deposit/{version}/delete").status_code == 404
    token = csrf_from(other.get("/deposit/new").get_data())
    for action in ("delete-version", "request-deletion", "unlockfiles"):
        answer = other.post(f"/deposit/{version}/{action}", data={"csrf_token": token, "reason": "mistake"},
                            headers=referer("/deposit/new"))
        assert answer.status_code == 404, action
    assert https_client(app).get(f"/api/records/{version}").status_code == 200
