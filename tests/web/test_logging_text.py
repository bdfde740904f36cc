"""LOG_FORMAT=text (the default) on the real server: the access line ends with the request's id, user id and
route, and the token stays out."""

from __future__ import annotations

import requests
from helpers.http import log_text, token_session


def test_the_text_access_line_names_request_user_and_route(live_server):
    base, cert = live_server["url"], live_server["cert"]
    for _ in range(60):  # the workers load the app after the server listens
        try:
            if requests.get(base + "/healthz", verify=cert, timeout=30).status_code == 200:
                break
        except requests.ConnectionError:
            pass
    user = token_session(live_server, "text@example.org")
    token = user.headers["Authorization"].split()[1]
    answer = user.get(base + "/api/tokens/", headers={"X-Request-ID": "text-req-1"}, timeout=30)
    assert answer.status_code == 200
    guest = requests.get(f"{base}/api/records/?access_token=not-a-token", verify=cert, timeout=30)
    needles = ("request_id=text-req-1 ", f"request_id={guest.headers['X-Request-ID']} ")  # on access lines only
    text = log_text(live_server["log"], lambda text: all(needle in text for needle in needles))
    [line] = [line for line in text.splitlines() if "request_id=text-req-1 " in line]
    assert '"GET /api/tokens/ HTTP/1.1" 200' in line and line.endswith(" route=/api/tokens/")
    assert "user_id=- " not in line and token not in text
    [refused] = [line for line in text.splitlines() if f"request_id={guest.headers['X-Request-ID']} " in line]
    assert "access_token=[redacted]" in refused and "user_id=- route=/api/records/" in refused
