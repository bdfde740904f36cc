"""LOG_FORMAT=json on the real server: every line is a JSON object (time, level, logger, message); the access line
of each request carries its request id, user id and route; tokens and passwords never appear."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest
import requests
from helpers.http import log_text, token_session, wait_until_serving
from helpers.pages import csrf_from

PASSWORD = "Correct-Horse-Battery-9731"


@pytest.fixture(scope="module")
def json_logs() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LOG_FORMAT", "json")
        yield


def log_entries(path: str) -> list[dict]:
    """Every line the server wrote after the command's own two lines (certificate, address), parsed."""
    with open(path) as handle:
        lines = [line for line in handle.read().splitlines() if line.strip()]
    server = [line for line in lines if not line.startswith(("created a self-signed", "serving https://"))]
    return [json.loads(line) for line in server]  # a line that is not JSON fails here


def access_line(entries: list[dict], request_id: str) -> dict:
    found = [e for e in entries if e["logger"] == "gunicorn.access" and e.get("request_id") == request_id]
    assert len(found) == 1, request_id
    return found[0]


def access_lines_of(*responses: requests.Response) -> Callable[[str], bool]:
    """Whether a log's text holds the access line of each of `responses` (written after the response is sent)."""
    ids = [f'"{r.headers["X-Request-ID"]}"' for r in responses]

    def ready(text: str) -> bool:
        access = [line for line in text.splitlines() if '"gunicorn.access"' in line]
        return all(any(i in line for line in access) for i in ids)

    return ready


def test_json_lines_carry_the_request_and_keep_secrets_out(json_logs, live_server):
    base, cert = live_server["url"], live_server["cert"]
    wait_until_serving(base, cert)
    user = token_session(live_server, "logged@example.org")
    token = user.headers["Authorization"].split()[1]

    mine = user.get(base + "/api/tokens/", headers={"X-Request-ID": "req-tokens-1"}, timeout=30)
    assert mine.status_code == 200 and mine.headers["X-Request-ID"] == "req-tokens-1"
    in_url = requests.get(f"{base}/api/records/?access_token={token}&q=x", verify=cert, timeout=30)
    assert in_url.status_code == 200

    browser = requests.Session()
    browser.verify = cert
    browser.trust_env = False  # a CA bundle named in the environment must not replace the server certificate
    form = browser.get(base + "/login/", timeout=30)
    refused = browser.post(base + "/login/", timeout=30, headers={"Referer": base + "/login/"},
                           data={"csrf_token": csrf_from(form.text), "email": "logged@example.org",
                                 "password": PASSWORD})
    assert refused.status_code == 401  # no password set for this user: the form again
    log_text(live_server["log"], access_lines_of(mine, in_url, refused))

    entries = log_entries(live_server["log"])
    assert all({"time", "level", "logger", "message"} <= set(entry) for entry in entries)
    tokens = access_line(entries, "req-tokens-1")
    assert isinstance(tokens["user_id"], int) and tokens["route"] == "/api/tokens/"
    assert tokens["status"] == 200 and tokens["method"] == "GET" and tokens["pid"] > 0
    by_url = access_line(entries, in_url.headers["X-Request-ID"])  # the token in the URL authenticates too
    assert by_url["user_id"] == tokens["user_id"] and by_url["route"] == "/api/records/"
    assert by_url["query"] == "access_token=[redacted]&q=x"
    login = access_line(entries, refused.headers["X-Request-ID"])
    assert login["user_id"] is None and login["route"] == "/login/" and login["status"] == 401

    with open(live_server["log"]) as handle:
        text = handle.read()
    assert token not in text and PASSWORD not in text
