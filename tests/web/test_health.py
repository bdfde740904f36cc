"""`/healthz` and `/readyz` over HTTP: ready when every dependency answers, 503 naming the check that failed when
one does not (never a 500), and free of rate limits."""

from __future__ import annotations

import datetime as dt
import os
import shutil

import pytest
from helpers.factories import published
from helpers.http import free_port, https_client
from sqlalchemy import update

from app import create_app
from repository.accounts.tokens import SCOPES, create_token, create_user
from repository.storage.tables.outbox import outbox as outbox_table
from repository.timeutil import utcnow

CHECKS = {"database", "search", "files", "disk", "outbox"}


def ready(client) -> tuple[int, dict]:  # type: ignore[no-untyped-def]
    response = client.get("/readyz")
    assert response.mimetype == "application/json" and response.headers["Cache-Control"] == "no-store"
    return response.status_code, response.json


def failed(body: dict) -> set[str]:
    return {name for name, check in body["checks"].items() if not check["ok"]}


def test_a_working_service_is_live_and_ready(make_settings):
    client = https_client(create_app(make_settings(READY_MIN_FREE_BYTES=1)))
    live = client.get("/healthz")
    assert live.status_code == 200 and live.json == {"status": "ok"}
    status, body = ready(client)
    assert status == 200 and body["status"] == "ready"
    assert set(body["checks"]) == CHECKS and failed(body) == set()
    assert all(check["ms"] >= 0 for check in body["checks"].values())
    assert "free_bytes" not in body["checks"]["disk"] and body["checks"]["outbox"]["pending"] == 0


def test_probes_are_not_rate_limited_and_ignore_the_api_token_scheme(make_settings):
    client = https_client(create_app(make_settings(RATELIMIT_GUEST="2/minute", READY_MIN_FREE_BYTES=1)))
    for _ in range(5):
        assert client.get("/healthz").status_code == 200
        assert client.get("/readyz").status_code == 200
    assert client.get("/api/").status_code == 200
    assert client.get("/api/licenses/").status_code == 200
    assert client.get("/api/").status_code == 429  # the API's own limit still counts
    # An Authorization header a probe carries is not taken for an API token (which would be a 401).
    assert client.get("/readyz", headers={"Authorization": "Bearer not-an-api-token"}).status_code == 200


def test_an_unreachable_database_is_a_503_naming_it(make_settings):
    port = free_port()  # nothing listens there
    settings = make_settings(DATABASE_URL=f"postgresql+psycopg://postgres@127.0.0.1:{port}/gone",
                             AUTO_MIGRATE="false", READY_MIN_FREE_BYTES=1)
    client = https_client(create_app(settings))
    assert client.get("/healthz").status_code == 200  # the process itself is fine
    status, body = ready(client)
    assert status == 503 and body["status"] == "not ready"
    assert failed(body) == {"database", "outbox"}
    assert body["checks"]["database"]["error"] == "The database does not answer."
    assert "127.0.0.1" not in str(body)  # no connection details for the public


def test_a_removed_sqlite_file_is_a_503(make_settings):
    settings = make_settings(READY_MIN_FREE_BYTES=1)
    if not settings.DATABASE_URL.startswith("sqlite"):
        pytest.skip("a SQLite database file")
    client = https_client(create_app(settings))
    assert ready(client)[0] == 200  # the pool now holds open connections to the file
    path = settings.DATABASE_URL.removeprefix("sqlite:///")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    status, body = ready(client)
    assert status == 503 and "database" in failed(body)


def test_a_missing_files_directory_is_a_503(make_settings):
    settings = make_settings(READY_MIN_FREE_BYTES=1)
    client = https_client(create_app(settings))
    shutil.rmtree(settings.FILES_ROOT)  # a volume that is not mounted
    status, body = ready(client)
    assert status == 503 and "files" in failed(body)
    assert body["checks"]["files"]["error"] == "The files directory is not writable."
    assert client.get("/healthz").status_code == 200


def test_too_little_free_disk_is_a_503(make_settings):
    """Anyone sees that the disk check failed; only the operator (METRICS_TOKEN) sees how many bytes are free: a
    stranger filling the disk is told nothing of how far it has got."""
    client = https_client(create_app(make_settings(READY_MIN_FREE_BYTES=10**18, METRICS_TOKEN="ops-secret-123")))
    status, body = ready(client)
    assert status == 503 and failed(body) == {"disk"}
    disk = body["checks"]["disk"]
    assert set(disk) == {"ok", "error", "ms"} and "READY_MIN_FREE_BYTES" in disk["error"]
    assert not any(ch.isdigit() for ch in disk["error"])
    for wrong in ({}, {"Authorization": "Bearer wrong"}):
        assert "free_bytes" not in client.get("/readyz", headers=wrong).json["checks"]["disk"]
    operator = client.get("/readyz", headers={"Authorization": "Bearer ops-secret-123"}).json["checks"]["disk"]
    assert operator["min_free_bytes"] == 10**18 and operator["free_bytes"] < 10**18


@pytest.mark.slow
def test_an_outbox_entry_waiting_too_long_is_a_503(make_settings):
    # DataCite cannot be reached: the publish's DOI registration stays in the outbox. The token is made through this
    # app: the `make_token` fixture would build the default app on the same database, whose background thread (with
    # the local registrar) could apply the outbox row meanwhile.
    unreachable = dict(REGISTRAR="datacite", DOI_PREFIX="10.12345", DATACITE_URL=f"https://127.0.0.1:{free_port()}",
                       DATACITE_USERNAME="X.Y", DATACITE_PASSWORD="secret", READY_MIN_FREE_BYTES=1)
    app = create_app(make_settings(READY_MAX_OUTBOX_AGE_SECONDS=1, **unreachable))
    client = https_client(app)
    with app.extensions["repository"].db.write() as conn:
        _, token = create_token(conn, create_user(conn, "owner@example.org"), list(SCOPES))
    published(client, {"Authorization": f"Bearer {token}"})
    # Aged in the database rather than by waiting: the failed registration may be retried once its back-off (2 s)
    # has passed, and any applier still running on a shared PostgreSQL test database (another test's server or
    # thread, with its own registrar) could then apply it — the answer was 200 under load, twice in CI and once at
    # a load average of 15. Ready checks only look at the row's age.
    with app.extensions["repository"].db.write() as conn:
        conn.execute(update(outbox_table).where(outbox_table.c.done.is_(None))
                     .values(created=utcnow() - dt.timedelta(seconds=10)))
    status, body = ready(client)
    assert status == 503 and failed(body) == {"outbox"}
    outbox = body["checks"]["outbox"]
    assert outbox["pending"] == 1 and outbox["oldest_seconds"] >= 2 and outbox["max_seconds"] == 1
    # The same outbox with the check off (0) is ready.
    unchecked = https_client(create_app(make_settings(READY_MAX_OUTBOX_AGE_SECONDS=0, **unreachable)))
    assert ready(unchecked)[0] == 200


def test_the_probes_are_in_the_openapi_description(client):
    paths = client.get("/api/openapi.json").json["paths"]
    assert "503" in paths["/readyz"]["get"]["responses"] and "get" in paths["/healthz"]
    assert "get" in paths["/metrics"]
