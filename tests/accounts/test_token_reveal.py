"""The sealed secret of a new token: read back once with the service's secret, refused when altered, sealed with
another service's secret, malformed or older than REVEAL_SECONDS."""

from __future__ import annotations

import time

import pytest

from repository.accounts import token_reveal

SECRET = b"service-secret"


def test_a_sealed_secret_is_read_back_and_does_not_show_in_the_seal():
    held = token_reveal.seal(SECRET, 7, "the-token")
    assert "the-token" not in held["sealed"]
    assert token_reveal.unseal(SECRET, held) == (7, "the-token")


@pytest.mark.parametrize("held", [
    None, "x", {}, {"id": "7", "sealed": "x"}, {"id": 7, "sealed": 5}, {"id": 7, "sealed": "not a fernet token"},
])
def test_anything_else_than_a_seal_is_none(held):
    assert token_reveal.unseal(SECRET, held) is None


def test_an_altered_seal_or_another_services_secret_is_none():
    held = token_reveal.seal(SECRET, 7, "the-token")
    assert token_reveal.unseal(b"another-secret", held) is None
    sealed = held["sealed"]
    altered = sealed[:20] + ("A" if sealed[20] != "A" else "B") + sealed[21:]
    assert token_reveal.unseal(SECRET, {"id": 7, "sealed": altered}) is None


def test_a_seal_older_than_the_reveal_time_is_none(monkeypatch):
    held = token_reveal.seal(SECRET, 7, "the-token")
    later = time.time() + token_reveal.REVEAL_SECONDS + 5
    monkeypatch.setattr(time, "time", lambda: later)  # Fernet reads the clock through time.time
    assert token_reveal.unseal(SECRET, held) is None
