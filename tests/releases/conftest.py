"""Fixtures for release archiving: the platform stand-in, fixture git repositories, signed webhook deliveries."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.releases import ALICE, BOB, BOT, MIT

from app import create_app

from .standin import GitRepo, Hosted, StandIn


@pytest.fixture
def standin() -> Iterator[StandIn]:
    server = StandIn()
    yield server
    server.close()


@pytest.fixture
def settings(make_settings, standin: StandIn):  # type: ignore[no-untyped-def]
    """The test settings, with the platform's API at the stand-in."""
    return make_settings(RELEASES_API_URL=standin.url)


@pytest.fixture
def app(settings):  # type: ignore[no-untyped-def]
    """The application; its release thread is finished before its database is closed."""
    application = create_app(settings)
    yield application
    application.extensions["repository"].releases.shutdown()
    application.extensions["repository"].db.dispose()


@pytest.fixture
def project(tmp_path: Path, standin: StandIn) -> Hosted:
    """`alice/tool` with an MIT license, commits by Alice (3), Bob (1) and a bot (2), tagged v1.0.0."""
    repo = GitRepo(tmp_path / "tool")
    repo.commit(ALICE, {"README.md": "# tool\n", "LICENSE": MIT, "tool.py": "print('hello')\n"})
    repo.commit(BOT, {"requirements.txt": "requests==2.0\n"})
    repo.commit(BOT, {"requirements.txt": "requests==2.1\n"})
    repo.commit(ALICE, {"tool.py": "print('hello, world')\n"})
    repo.commit(BOB, {"docs.md": "Docs\n"})
    repo.commit(ALICE, {"tool.py": "print('hello, world!')\n"})
    repo.tag("v1.0.0")
    profiles = {"alice": {"name": "Archer, Alice", "company": "Example University"}, "bob": {"name": None}}
    return standin.host(repo, "alice/tool", description="A tool that greets.", profiles=profiles)
