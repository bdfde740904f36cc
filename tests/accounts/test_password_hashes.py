"""Password hashes follow PASSWORD_HASH_PROFILE: a hash made with weaker parameters is replaced at the next sign-in,
and an account signs in the same under either profile."""

from __future__ import annotations

import pytest
from helpers.http import https_client
from helpers.pages import sign_in, sign_up_and_confirm
from sqlalchemy import select

from app import create_app
from repository.ondemand import wait_all_idle
from repository.storage.tables.accounts import users

EMAIL, PASSWORD = "hash@example.org", "a long enough passphrase"


def stored_hash(app) -> str:  # type: ignore[no-untyped-def]
    with app.extensions["repository"].db.read() as conn:
        return str(conn.execute(select(users.c.password_hash).where(users.c.email == EMAIL)).scalar_one())


@pytest.mark.slow
def test_a_weaker_hash_is_upgraded_at_sign_in(app, client, make_settings) -> None:  # type: ignore[no-untyped-def]
    sign_up_and_confirm(client, app, EMAIL, PASSWORD)
    assert stored_hash(app).startswith("$argon2id$v=19$m=8,t=1,p=1$")  # the test suite's cheapest profile

    stronger = create_app(make_settings(PASSWORD_HASH_PROFILE="rfc9106-low-memory"))
    try:
        assert sign_in(https_client(stronger), EMAIL, "not the password").status_code == 401
        assert stored_hash(stronger).startswith("$argon2id$v=19$m=8,")  # a failed sign-in changes nothing
        assert sign_in(https_client(stronger), EMAIL, PASSWORD).status_code == 303
        assert stored_hash(stronger).startswith("$argon2id$v=19$m=65536,t=3,p=4$")
    finally:
        services = stronger.extensions["repository"]
        wait_all_idle()  # every background thread's connection back in the pool before the pool goes
        services.db.dispose()
    # Back under the cheap profile (a new app sets it again), the stronger hash still verifies.
    fresh = create_app(make_settings())
    try:
        assert sign_in(https_client(fresh), EMAIL, PASSWORD).status_code == 303
    finally:
        fresh.extensions["repository"].db.dispose()
