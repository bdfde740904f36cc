"""Fixtures for release archiving: the platform stand-in, fixture git repositories, signed webhook deliveries."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app import create_app

from .standin import GitRepo, Hosted, StandIn

REPOS = "/api/releases/repositories"
MIT = "MIT License\n\nCopyright (c) 2024 The authors\n"
ALICE = "Alice Archer <alice@example.org>"
BOB = "Bob Baker <bob@example.org>"
BOT = "Dependabot <dependabot[bot]@example.org>"


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


def enable(client, auth: dict, full_name: str = "alice/tool", **extra: Any) -> dict:  # type: ignore[no-untyped-def]
    response = client.post(REPOS, json={"repository": full_name, **extra}, headers=auth)
    assert response.status_code == 201, response.json
    return response.json


def deliver(client, repo: dict, hosted: Hosted, tag: str, action: str = "published",  # type: ignore[no-untyped-def]
            secret: str | None = None, signature: str | None = None):
    """POST a signed GitHub `release` event for `tag` to the repository's webhook."""
    payload = {"action": action, "release": hosted.releases[tag],
               "repository": {"id": 42, "full_name": hosted.full_name}}
    body = json.dumps(payload).encode()
    key = (secret or repo["webhook"]["secret"]).encode()
    headers = {"X-GitHub-Event": "release", "X-GitHub-Delivery": "d-" + tag + action,
               "X-Hub-Signature-256": signature or "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()}
    return client.post(repo["webhook"]["url"], data=body, headers=headers, content_type="application/json")


def wait_for(client, auth: dict, release_url: str, deadline: float = 20.0) -> dict:  # type: ignore[no-untyped-def]
    """Poll the release's status until it is published or failed."""
    end = time.monotonic() + deadline
    while True:
        body = client.get(release_url, headers=auth).json
        if body["status"] in ("published", "failed") or time.monotonic() > end:
            return body
        time.sleep(0.02)


def archive(client, auth: dict, repo: dict, hosted: Hosted, tag: str, **release: Any) -> dict:  # type: ignore[no-untyped-def]
    """Publish a release on the stand-in, deliver its event and wait for the outcome."""
    hosted.release(tag, **release)
    response = deliver(client, repo, hosted, tag)
    assert response.status_code == 202, response.json
    return wait_for(client, auth, response.json["release"]["links"]["self"])
