"""LOG_FORMAT=text (the default) on the real server: the access line ends with the request's id, user id and
route, and the token stays out."""

from __future__ import annotations

import http.client
import ssl

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


def test_tokens_in_paths_and_encoded_query_keys_stay_out(live_server):
    """Reset, confirmation and access-confirmation links carry their token in the path, and a client may
    percent-encode a query key (`access%5Ftoken=`): neither value reaches the log (a log reader could take over an
    account mid-reset)."""
    base, cert = live_server["url"], live_server["cert"]
    secrets = {"/account/reset/RESETSECRET1.x-y_z": "RESETSECRET1",
               "/account/confirm/CONFIRMSECRET2": "CONFIRMSECRET2",
               "/account/confirm-email/EMAILSECRET3": "EMAILSECRET3",
               "/records/1/access/confirm/ACCESSSECRET4": "ACCESSSECRET4",
               "/login/oidc/confirm/OIDCSECRET5": "OIDCSECRET5",
               "/api/records/?access%5Ftoken=QUERYSECRET6&q=x": "QUERYSECRET6",
               "/api/records/?%61ccess_token=QUERYSECRET7": "QUERYSECRET7"}
    ids = []
    host, port = base.removeprefix("https://").split(":")
    for path in secrets:  # sent as written (requests would decode %5F and %61)
        connection = http.client.HTTPSConnection(host, int(port), timeout=30,
                                                 context=ssl.create_default_context(cafile=cert))
        connection.request("GET", path)
        answer = connection.getresponse()
        assert answer.status < 500, path
        ids.append(answer.headers["X-Request-ID"])
        connection.close()
    text = log_text(live_server["log"], lambda text: all(f"request_id={i} " in text for i in ids))
    assert all(f"request_id={i} " in text for i in ids)
    for path, secret in secrets.items():
        assert secret not in text, path
    assert "/account/reset/[redacted]" in text and "access%5Ftoken=[redacted]&q=x" in text
    assert "route=/account/reset/<token>" in text  # the route names the rule, not a value
