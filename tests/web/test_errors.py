"""Every 4xx is the error object; a 500 has no body but a request id; plain HTTP is refused."""

import logging

import pytest
from helpers.http import https_client

from app import create_app
from repository.web.request import json_body


def test_unknown_route_is_404_error_object(client):
    response = client.get("/api/no/such/thing")
    assert response.status_code == 404
    assert response.json["status"] == 404 and response.json["message"]


def test_wrong_method_is_405_error_object(client):
    response = client.delete("/api/")
    assert response.status_code == 405
    assert response.json == {"message": response.json["message"], "status": 405}


@pytest.mark.slow
@pytest.mark.parametrize(("method", "path", "allowed"), [
    ("DELETE", "/api/deposit/depositions", {"GET", "POST"}),
    ("PATCH", "/api/deposit/depositions/1/files", {"GET", "POST", "PUT"}),
    ("DELETE", "/api/records", {"GET"}),
    ("POST", "/api/licenses", {"GET"}),
    ("PUT", "/api/communities", {"GET"}),
    ("DELETE", "/api/funders", {"GET"}),
    ("DELETE", "/api/grants", {"GET"}),
])
def test_wrong_method_on_slashless_path_is_405_with_allow(client, auth, method, path, allowed):
    """The specification writes these paths without the trailing slash: a wrong method there is a 405 naming the
    allowed ones, as on the slashed form, not a 404."""
    for form in (path, path + "/"):
        response = client.open(form, method=method, headers=auth)
        assert response.status_code == 405, form
        assert response.json == {"message": response.json["message"], "status": 405}
        assert allowed <= {m.strip() for m in response.headers["Allow"].split(",")}, form


@pytest.fixture
def echo_app(app):
    """The app plus a route that reads a JSON body the way every view does."""

    def echo():
        return {"got": json_body()}

    app.add_url_rule("/api/test-echo", "test_echo", echo, methods=["POST"])
    return app


def test_json_body_needs_content_type(echo_app):
    client = https_client(echo_app)
    response = client.post("/api/test-echo", data='{"a": 1}')
    assert response.status_code == 415
    assert response.json["status"] == 415
    response = client.post("/api/test-echo", data='{"a": 1}', content_type="text/plain")
    assert response.status_code == 415 and "text/plain" in response.json["message"]


def test_malformed_json_is_400(echo_app):
    client = https_client(echo_app)
    response = client.post("/api/test-echo", data='{"a": ', content_type="application/json")
    assert response.status_code == 400
    assert "not valid JSON" in response.json["message"]
    ok = client.post("/api/test-echo", json={"a": 1})
    assert ok.status_code == 200 and ok.json == {"got": {"a": 1}}


def test_oversized_json_is_413(make_settings):
    app = create_app(make_settings(MAX_JSON_BYTES=10))

    def echo():
        return {"got": json_body()}

    app.add_url_rule("/api/test-echo", "test_echo", echo, methods=["POST"])
    response = https_client(app).post("/api/test-echo", json={"a": "x" * 100})
    assert response.status_code == 413 and response.json["status"] == 413


def test_500_has_no_body_and_is_logged_with_request_id(app, caplog):
    def boom():
        raise RuntimeError("secret detail")

    app.add_url_rule("/api/test-boom", "test_boom", boom)
    client = https_client(app)
    with caplog.at_level(logging.ERROR, logger="repository"):
        response = client.get("/api/test-boom")
    assert response.status_code == 500
    assert response.data == b""
    request_id = response.headers["X-Request-ID"]
    assert request_id
    assert any(request_id in record.getMessage() for record in caplog.records)
    assert b"secret detail" not in response.data


def test_plain_http_is_refused(app):
    response = app.test_client().get("/api/")
    assert response.status_code == 403
    assert "HTTPS" in response.json["message"]


def test_plain_http_allowed_when_the_operator_says_so(make_settings):
    app = create_app(make_settings(ALLOW_HTTP=True))
    assert app.test_client().get("/api/").status_code == 200


def test_forwarded_proto_is_honoured_only_from_trusted_proxies(make_settings):
    headers = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "10.0.0.1"}
    untrusted = create_app(make_settings()).test_client()
    assert untrusted.get("/api/", headers=headers).status_code == 403
    trusted = create_app(make_settings(TRUSTED_PROXIES=1)).test_client()
    assert trusted.get("/api/", headers=headers).status_code == 200


def test_ids_too_large_for_the_database_are_404(client, auth):
    for path in ("/api/records/99999999999999999999", "/api/deposit/depositions/17648738411074043904/actions/publish"):
        response = client.post(path, headers=auth) if "actions" in path else client.get(path)
        assert response.status_code == 404, path
        assert response.json["status"] == 404


def test_dead_database_is_503(make_settings):
    # Nothing listens on this port: every request that needs the database gets a clear 503, never a 500.
    app = create_app(make_settings(DATABASE_URL="postgresql+psycopg://nobody@127.0.0.1:9/none", AUTO_MIGRATE="false"))
    client = https_client(app)
    response = client.get("/api/records/1")
    assert response.status_code == 503 and response.json["status"] == 503
    assert client.get("/api/").status_code == 200  # what needs no database still answers


def test_dead_database_with_a_token_is_503_not_401(make_settings):
    app = create_app(make_settings(DATABASE_URL="postgresql+psycopg://nobody@127.0.0.1:9/none", AUTO_MIGRATE="false"))
    response = https_client(app).get("/api/deposit/depositions", headers={"Authorization": "Bearer abc"})
    assert response.status_code == 503 and response.json["status"] == 503
