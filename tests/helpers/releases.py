"""What the release-archiving tests share: the API path, authors and a licence text; enabling a repository,
delivering signed webhook events and waiting for a release's outcome."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any

REPOS = "/api/releases/repositories"
MIT = "MIT License\n\nCopyright (c) 2024 The authors\n"
ALICE = "Alice Archer <alice@example.org>"
BOB = "Bob Baker <bob@example.org>"
BOT = "Dependabot <dependabot[bot]@example.org>"


def enable(client, auth: dict, full_name: str = "alice/tool", **extra: Any) -> dict:  # type: ignore[no-untyped-def]
    response = client.post(REPOS, json={"repository": full_name, **extra}, headers=auth)
    assert response.status_code == 201, response.json
    return response.json


def deliver(client, repo: dict, hosted: Any, tag: str, action: str = "published",  # type: ignore[no-untyped-def]
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


def archive(client, auth: dict, repo: dict, hosted: Any, tag: str, **release: Any) -> dict:  # type: ignore[no-untyped-def]
    """Publish a release on the stand-in, deliver its event and wait for the outcome."""
    hosted.release(tag, **release)
    response = deliver(client, repo, hosted, tag)
    assert response.status_code == 202, response.json
    return wait_for(client, auth, response.json["release"]["links"]["self"])
