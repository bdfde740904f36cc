"""Tokens: random, stored hashed, by header or query parameter, scopes give 401/403, revocable."""

import pytest
from helpers.http import https_client
from sqlalchemy import select

from repository.accounts.tokens import create_token, create_user, hash_token
from repository.errors import BadRequest
from repository.storage.tables.accounts import tokens
from repository.web.request import require_scope


@pytest.fixture
def scoped_app(app):
    """Routes guarded the way deposit views are, to check the guard over HTTP."""

    @require_scope("deposit:write")
    def write():
        return {"ok": "write"}

    @require_scope("deposit:actions")
    def act():
        return {"ok": "actions"}

    app.add_url_rule("/api/test-write", "test_write", write)
    app.add_url_rule("/api/test-actions", "test_actions", act)
    return app


@pytest.mark.slow
def test_token_is_random_long_and_stored_only_as_hash(app, make_token):
    token = make_token()
    other = make_token("other@example.org")
    assert token != other and len(token) >= 43  # 32 bytes, urlsafe base64
    with app.extensions["repository"].db.read() as conn:
        stored = [row.token_hash for row in conn.execute(select(tokens.c.token_hash))]
    assert token not in stored and hash_token(token) in stored


def test_missing_token_is_401(scoped_app):
    client = https_client(scoped_app)
    response = client.get("/api/test-write")
    assert response.status_code == 401 and response.json["status"] == 401


def test_invalid_token_is_401_everywhere(scoped_app):
    client = https_client(scoped_app)
    for path in ("/api/test-write", "/api/"):
        response = client.get(path, headers={"Authorization": "Bearer nope"})
        assert response.status_code == 401, path
    assert client.get("/api/", headers={"Authorization": "Basic abc"}).status_code == 401


def test_header_and_query_parameter_both_work(scoped_app, make_token):
    token = make_token(scopes=("deposit:write",))
    client = https_client(scoped_app)
    assert client.get("/api/test-write", headers={"Authorization": f"Bearer {token}"}).json == {"ok": "write"}
    assert client.get(f"/api/test-write?access_token={token}").status_code == 200


def test_token_without_scope_is_403(scoped_app, make_token):
    token = make_token(scopes=("deposit:write",))
    client = https_client(scoped_app)
    response = client.get("/api/test-actions", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 403
    assert "deposit:actions" in response.json["message"]


def test_list_and_revoke_tokens_over_http(client, make_token):
    token = make_token()
    second = make_token()
    headers = {"Authorization": f"Bearer {token}"}
    listed = client.get("/api/tokens/", headers=headers).json
    assert len(listed) == 2 and all("token" not in t and "token_hash" not in t for t in listed)
    assert listed[0]["scopes"] == ["deposit:actions", "deposit:write"]
    second_id = listed[1]["id"]
    assert client.delete(f"/api/tokens/{second_id}", headers=headers).status_code == 204
    assert client.get("/api/", headers={"Authorization": f"Bearer {second}"}).status_code == 401
    again = client.delete(f"/api/tokens/{second_id}", headers=headers)
    assert again.status_code == 404 and again.json["status"] == 404


def test_a_user_cannot_revoke_someone_elses_token(client, make_token):
    mine = make_token("me@example.org")
    yours = make_token("you@example.org")
    yours_id = client.get("/api/tokens/", headers={"Authorization": f"Bearer {yours}"}).json[0]["id"]
    response = client.delete(f"/api/tokens/{yours_id}", headers={"Authorization": f"Bearer {mine}"})
    assert response.status_code == 404


def test_unknown_scope_is_refused(app):
    with app.extensions["repository"].db.write() as conn:
        user_id = create_user(conn, "x@example.org")
        with pytest.raises(BadRequest, match="deposit:everything"):
            create_token(conn, user_id, ["deposit:everything"])
