"""Rate limits: headers on every response, 429 with an error object, per user not per address; counters shared by
the processes of one machine (a file under INSTANCE_PATH, by default) or of many (Redis)."""

import os
import re
import uuid

import pytest
import redis
import requests
from helpers.http import https_client, wait_for_workers

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


@pytest.mark.slow
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


def test_default_counters_live_in_a_file_under_the_instance(make_settings):
    settings = make_settings()
    path = os.path.join(settings.INSTANCE_PATH, "ratelimit.counters")
    assert settings.RATELIMIT_STORAGE_URI == "file://" + path
    https_client(create_app(settings)).get("/api/")
    assert os.path.getsize(path) > 0


def test_default_counters_are_shared_by_every_app_on_the_machine(make_settings):
    # Two apps stand for two server processes: each has its own limiter and storage object, one counter file.
    settings = make_settings(RATELIMIT_GUEST="3/minute")
    first, second = https_client(create_app(settings)), https_client(create_app(settings))
    remaining = [c.get("/api/").headers["X-RateLimit-Remaining"] for c in (first, second, first)]
    assert remaining == ["2", "1", "0"]
    assert second.get("/api/").status_code == 429
    assert first.get("/api/nothing-here").status_code == 429


def test_counter_file_settings_are_checked(make_settings, tmp_path):
    from repository.config import Settings, StartupError

    with pytest.raises(StartupError, match="RATELIMIT_STORAGE_URI"):
        Settings.from_env({"RATELIMIT_STORAGE_URI": "file://"})
    not_ours = tmp_path / "not-counters"
    not_ours.write_bytes(b"precious data")
    with pytest.raises(Exception, match="not a rate-limit counter file"):
        create_app(make_settings(RATELIMIT_STORAGE_URI=f"file://{not_ours}"))
    assert not_ours.read_bytes() == b"precious data"


def test_limits_hold_across_the_real_servers_worker_processes(live_server_3_workers):
    """120 rapid guest requests, each on a new connection (so any of the 3 workers may answer): exactly the
    first 60 are answered, Remaining going down by one each time, and the rest are refused."""
    server = live_server_3_workers
    wait_for_workers(server, 3)
    responses = []
    for _ in range(120):
        with requests.Session() as session:  # a new TLS connection per request
            session.trust_env = False
            responses.append(session.get(server["url"] + "/api/", verify=server["cert"], timeout=30))
    statuses = [r.status_code for r in responses]
    assert statuses == [200] * 60 + [429] * 60
    assert [int(r.headers["X-RateLimit-Remaining"]) for r in responses[:60]] == list(range(59, -1, -1))
    assert {r.headers["X-RateLimit-Remaining"] for r in responses[60:]} == {"0"}
    assert len({r.headers["X-RateLimit-Reset"] for r in responses}) == 1
    with open(server["log"]) as handle:
        answered_by = set(re.findall(r"pid=<?(\d+)>? GET /api/ ", handle.read()))
    assert len(answered_by) >= 2, "the requests should have been spread over several worker processes"


def test_counter_file_grows_and_stays_exact_with_many_clients(tmp_path):
    """More live counters than the file first holds (a crawler's many addresses): the table grows, no count is
    lost, and another process's view of the file (a second storage) follows the growth."""
    from limits import parse
    from limits.storage import storage_from_string
    from limits.strategies import FixedWindowRateLimiter

    uri = f"file://{tmp_path}/ratelimit.counters"
    first, second = FixedWindowRateLimiter(storage_from_string(uri)), FixedWindowRateLimiter(storage_from_string(uri))
    size = os.path.getsize(tmp_path / "ratelimit.counters")
    limit = parse("2/hour")
    clients = [f"addr:10.{n // 65536}.{n // 256 % 256}.{n % 256}" for n in range(20_000)]
    assert all(first.hit(limit, who) for who in clients)
    assert os.path.getsize(tmp_path / "ratelimit.counters") > size
    assert all(second.hit(limit, who) for who in clients[::97])  # the second hit of these
    assert not any(first.hit(limit, who) for who in clients[::97])  # a third is refused
    assert {first.get_window_stats(limit, who).remaining for who in clients[1::97]} == {1}


@pytest.mark.slow
def test_counter_file_loses_no_hit_between_processes(tmp_path):
    import subprocess
    import sys

    uri = f"file://{tmp_path}/ratelimit.counters"
    script = ("import sys; from repository.web import ratelimit_store; s = ratelimit_store.FileStorage(sys.argv[1]); "
              "[s.incr('shared', 3600) for _ in range(2000)]")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    workers = [subprocess.Popen([sys.executable, "-c", script, uri], cwd=root) for _ in range(3)]
    assert [w.wait(timeout=120) for w in workers] == [0, 0, 0]
    from repository.web.ratelimit_store import FileStorage

    assert FileStorage(uri).get("shared") == 6000


def test_a_dead_redis_does_not_take_the_api_down(make_settings):
    # Nothing listens on port 1: each process counts on its own until the storage answers again.
    client = https_client(create_app(make_settings(RATELIMIT_GUEST="2/minute",
                                                   RATELIMIT_STORAGE_URI="redis://127.0.0.1:1/0")))
    first = client.get("/api/")
    assert first.status_code == 200 and first.headers["X-RateLimit-Remaining"] == "1"
    assert [client.get("/api/").status_code for _ in range(2)] == [200, 429]
