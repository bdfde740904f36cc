"""A signed webhook event nested past the JSON depth bound is a 400 error object, never a 500 (issue 14.7)."""

from __future__ import annotations

import hashlib
import hmac

from helpers.releases import enable


def test_deeply_nested_event_is_refused(client, auth, project):
    repo = enable(client, auth)
    body = b'{"action": "published", "release": ' + b"[" * 5_000 + b"]" * 5_000 + b"}"
    signature = "sha256=" + hmac.new(repo["webhook"]["secret"].encode(), body, hashlib.sha256).hexdigest()
    response = client.post(repo["webhook"]["url"], data=body, content_type="application/json",
                           headers={"X-GitHub-Event": "release", "X-Hub-Signature-256": signature})  # fmt: skip
    assert response.status_code == 400 and "nested deeper than" in response.json["message"]
