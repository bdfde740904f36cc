"""CORS: preflights answered in full and never counted by the rate limits; the headers clients read are exposed;
and a real browser page on another origin deposits with a bearer token (headless Chromium through Playwright)."""

from __future__ import annotations

import http.server
import json
import os
import shutil
import threading
from collections.abc import Iterator

import pytest
from helpers.http import https_client

from app import create_app

PREFLIGHT = {
    "Origin": "https://elsewhere.example",
    "Access-Control-Request-Method": "PUT",
    "Access-Control-Request-Headers": "authorization, content-type, if-match, range",
}


def _listed(value: str | None) -> set[str]:
    return {part.strip().lower() for part in (value or "").split(",") if part.strip()}


def test_preflight_is_answered_in_full(client):
    response = client.options("/api/deposit/depositions/1", headers=PREFLIGHT)
    assert response.status_code == 200
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    assert {"get", "post", "put", "delete"} <= _listed(response.headers.get("Access-Control-Allow-Methods"))
    assert {"authorization", "content-type", "if-match", "range"} <= _listed(
        response.headers.get("Access-Control-Allow-Headers"))
    assert int(response.headers["Access-Control-Max-Age"]) > 0
    assert "Access-Control-Allow-Credentials" not in response.headers  # a page needs a token, never a cookie


def test_preflights_do_not_count_against_the_rate_limit(make_settings):
    client = https_client(create_app(make_settings(RATELIMIT_GUEST="2/minute")))
    for _ in range(5):
        assert client.options("/api/records/", headers=PREFLIGHT).status_code == 200
    first = client.get("/api/", headers={"Origin": "https://elsewhere.example"})
    assert first.status_code == 200 and first.headers["X-RateLimit-Remaining"] == "1"
    assert client.get("/api/").status_code == 200
    # A plain OPTIONS (no preflight) is a request like any other.
    assert client.options("/api/").status_code == 429


def test_responses_expose_the_headers_clients_read(client):
    response = client.get("/api/", headers={"Origin": "https://elsewhere.example"})
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    exposed = _listed(response.headers.get("Access-Control-Expose-Headers"))
    assert {"x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "etag", "link",
            "content-range", "retry-after"} <= exposed
    refused = client.get("/api/deposit/depositions", headers={"Origin": "https://elsewhere.example"})
    assert refused.status_code == 401 and refused.headers["Access-Control-Allow-Origin"] == "*"


# --- a real browser ----------------------------------------------------------------------------------------------
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--ignore-certificate-errors"]
PAGE = """<!doctype html><meta charset="utf-8"><title>elsewhere</title>
<script>
async function deposit(api, token) {
  const created = await fetch(api + "/api/deposit/depositions", {
    method: "POST", mode: "cors",
    headers: {"Authorization": "Bearer " + token, "Content-Type": "application/json"},
    body: JSON.stringify({metadata: {title: "From another origin"}}),
  });
  const body = await created.json();
  const listed = await fetch(api + "/api/deposit/depositions", {headers: {"Authorization": "Bearer " + token}});
  return {status: created.status, id: body.id, title: body.metadata && body.metadata.title,
          remaining: created.headers.get("X-RateLimit-Remaining"), listed: listed.status,
          count: (await listed.json()).length};
}
</script>"""


@pytest.fixture
def other_origin() -> Iterator[str]:
    """A tiny HTTP server on another port serving the page that calls the API."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server interface
            body = PAGE.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/page.html"
    server.shutdown()
    server.server_close()


def _token(live_server: dict) -> str:
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return subprocess.run(
        [sys.executable, os.path.join(root, "scripts", "create_token.py"), "--email", "cors@example.org",
         "--scopes", "deposit:write,deposit:actions"],
        cwd=root, env=live_server["env"], capture_output=True, text=True, check=True).stdout.strip()


def _wait_until_answering(server: dict, seconds: float = 120) -> None:
    """The workers boot slowly on a busy machine: wait for an answer (a preflight, which no limit counts)."""
    import time

    import requests

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            requests.options(server["url"] + "/api/", headers=PREFLIGHT, verify=server["cert"], timeout=30)
            return
        except requests.RequestException:
            time.sleep(0.2)


def test_a_page_on_another_origin_deposits_with_a_bearer_token(live_server, other_origin):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip("chromium is not installed (apt-get install chromium)")
    token = _token(live_server)
    _wait_until_answering(live_server)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_context(ignore_https_errors=True).new_page()
            page.goto(other_origin)
            result = page.evaluate("([api, token]) => deposit(api, token)", [live_server["url"], token])
        finally:
            browser.close()
    assert result["status"] == 201, json.dumps(result)
    assert result["title"] == "From another origin" and isinstance(result["id"], int)
    assert result["remaining"] is not None and int(result["remaining"]) >= 0  # exposed to the page
    assert result["listed"] == 200 and result["count"] >= 1
