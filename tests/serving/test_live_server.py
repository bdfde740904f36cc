"""End to end: the README's run command serves HTTPS; curl-like clients trust its certificate."""

import subprocess
import sys

import requests


def test_api_root_over_tls(live_server):
    response = requests.get(live_server["url"] + "/api/", verify=live_server["cert"], timeout=10)
    assert response.status_code == 200
    assert response.json()["links"]["records"] == live_server["url"] + "/api/records/"
    assert response.headers["X-RateLimit-Limit"] == "60"


def test_untrusted_certificate_is_rejected_by_default(live_server):
    try:
        requests.get(live_server["url"] + "/api/", timeout=10)
    except requests.exceptions.SSLError:
        return
    raise AssertionError("a self-signed certificate should not be trusted without --cacert")


def test_token_from_the_script_works_against_the_server(live_server):
    token = subprocess.run(
        [sys.executable, "scripts/create_token.py", "--email", "live@example.org", "--scopes", "deposit:write"],
        env=live_server["env"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    response = requests.get(
        live_server["url"] + "/api/tokens/", headers={"Authorization": f"Bearer {token}"},
        verify=live_server["cert"], timeout=10,
    )
    assert response.status_code == 200 and response.json()[0]["scopes"] == ["deposit:write"]
    assert response.headers["X-RateLimit-Limit"] == "100"
