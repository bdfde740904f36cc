"""Rate limits: headers on every response, 429 with an error object, per user not per address, Redis shared."""

import uuid

import pytest
import redis
from support import https_client

from app import create_app

REDIS_URL = "redis://127.0.0.1:6379/15"


def test_headers_on_every_response(client):
    response = client.get("/api/")
    assert response.headers["X-RateLimit-Limit"] == "60"
    assert response.headers["X-RateLimit-Remaining"] == "59"
    assert int(response.headers["X-RateLimit-Reset"]) > 0
    assert "Retry-After" not in response.headers
    assert client.get("/api/nothing-here").headers["X-RateLimit-Remaining"] == "58"


def test_authenticated_users_get_their_own_higher_limit(client, auth):
    response = client.get("/api/", headers=auth)
    assert response.headers["X-RateLimit-Limit"] == "100"


def test_exceeding_the_limit_gives_429_error_object(make_settings):
    client = https_client(create_app(make_settings(RATELIMIT_GUEST="3/minute")))
    statuses = [client.get("/api/").status_code for _ in range(3)]
    assert statuses == [200, 200, 200]
    refused = client.get("/api/")
    assert refused.status_code == 429
    assert refused.json["status"] == 429 and "3 per 1 minute" in refused.json["message"]
    assert 0 < int(refused.headers["Retry-After"]) <= 60
    assert refused.headers["X-RateLimit-Remaining"] == "0"


def test_users_are_counted_per_user_not_per_address(make_settings, make_token):
    app = create_app(make_settings(RATELIMIT_USER="2/minute"))
    token = make_token()
    client = https_client(app)
    headers = {"Authorization": f"Bearer {token}"}
    for address in ("10.0.0.1", "10.0.0.2"):
        assert client.get("/api/", headers=headers, environ_base={"REMOTE_ADDR": address}).status_code == 200
    third = client.get("/api/", headers=headers, environ_base={"REMOTE_ADDR": "10.0.0.3"})
    assert third.status_code == 429
    # A guest at one of those addresses still has its own allowance.
    assert client.get("/api/", environ_base={"REMOTE_ADDR": "10.0.0.1"}).status_code == 200


def test_limits_can_be_switched_off(make_settings):
    client = https_client(create_app(make_settings(RATELIMIT_GUEST="1/minute", RATELIMIT_ENABLED=False)))
    assert [client.get("/api/").status_code for _ in range(3)] == [200, 200, 200]
    assert "X-RateLimit-Limit" not in client.get("/api/").headers


@pytest.fixture
def redis_db():
    connection = redis.Redis.from_url(REDIS_URL)
    connection.ping()  # the machines run Redis; CI starts it when it is down
    connection.flushdb()
    yield connection
    connection.flushdb()


def test_redis_counters_are_shared_between_processes(make_settings, redis_db):
    address = {"REMOTE_ADDR": f"10.9.{uuid.uuid4().int % 250}.1"}
    settings = make_settings(RATELIMIT_GUEST="3/minute", RATELIMIT_STORAGE_URI=REDIS_URL)
    first = https_client(create_app(settings))
    second = https_client(create_app(settings))
    assert first.get("/api/", environ_base=address).status_code == 200
    assert second.get("/api/", environ_base=address).status_code == 200
    assert first.get("/api/", environ_base=address).status_code == 200
    assert second.get("/api/", environ_base=address).status_code == 429
    assert redis_db.keys("*"), "the counters should live in Redis"
