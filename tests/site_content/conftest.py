"""What the site's tests share: an administrator signed in on the client, with an admin-scoped token."""

from __future__ import annotations

import pytest
from helpers.pages import signed_in

from repository.accounts import admin
from repository.accounts.audit import Actor
from repository.accounts.tokens import create_token, get_user_by_email

PASSWORD = "correct horse battery"


@pytest.fixture
def root(app, client) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """Sign root@example.org in on `client` as an administrator; the headers of their admin-scoped token."""
    signed_in(client, app, "root@example.org", PASSWORD)
    with app.extensions["repository"].db.write() as conn:
        user = get_user_by_email(conn, "root@example.org")
        assert user is not None
        admin.set_role(conn, Actor.operator(), user["id"], "admin")
        token = create_token(conn, user["id"], ["admin"])[1]
    return {"Authorization": f"Bearer {token}"}
