"""Fixtures for the OAI-PMH tests: an app whose host is a domain name, a controllable clock, and an OAI client."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from helpers.clock import Clock
from helpers.oai_client import HOST, Oai

from repository.config import Settings
from repository.storage import Database


@pytest.fixture
def settings(make_settings: Callable[..., Settings]) -> Settings:
    """Identify's oai-identifier description wants a domain name and the schema a dotted e-mail domain."""
    return make_settings(BASE_URL=f"https://{HOST}", ADMIN_EMAIL="admin@example.org", OAI_PAGE_SIZE=5)


@pytest.fixture
def db(app) -> Database:  # type: ignore[no-untyped-def]
    return app.extensions["repository"].db


@pytest.fixture
def oai(client, clock) -> Oai:  # type: ignore[no-untyped-def]
    """OAI-PMH requests over HTTP, each response validated against the schemas."""
    return Oai(client)


@pytest.fixture(scope="module")
def module_settings(module_make_settings: Callable[..., Settings]) -> Settings:
    """`settings` for a module's shared app."""
    return module_make_settings(BASE_URL=f"https://{HOST}", ADMIN_EMAIL="admin@example.org", OAI_PAGE_SIZE=5)


@pytest.fixture(scope="module")
def module_clock(module_app) -> Clock:  # type: ignore[no-untyped-def]
    """The shared app's clock (tests of a shared app read it, none moves it)."""
    value = Clock()
    module_app.extensions["repository"].clock = value
    return value


@pytest.fixture(scope="module")
def module_db(module_app) -> Database:  # type: ignore[no-untyped-def]
    return module_app.extensions["repository"].db


@pytest.fixture
def module_oai(module_client, module_clock) -> Oai:  # type: ignore[no-untyped-def]
    """`oai` on the module's shared app."""
    return Oai(module_client)
