"""Uploads when the file store fails: a full disk answers 507, a store that cannot be written 503, each with an
error object, leaving no temporary file and no row behind. The faults are real: FILES_ROOT is a 1 MiB tmpfs
(skipped where mounting is not permitted)."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest
from helpers.disks import fill, mounted
from helpers.factories import make_deposit
from helpers.http import https_client
from werkzeug.datastructures import FileStorage
from werkzeug.test import encode_multipart

from app import create_app

pytestmark = pytest.mark.local_store  # a full or failing local file system (S3 faults: test_s3_store.py)

API = "/api/deposit/depositions"


@pytest.fixture
def small_disk(tmp_path):  # type: ignore[no-untyped-def]
    """A 1 MiB file system for FILES_ROOT."""
    yield from mounted(tmp_path, "1m")


@pytest.fixture
def disk_app(make_settings, small_disk):  # type: ignore[no-untyped-def]
    application = create_app(make_settings(FILES_ROOT=str(small_disk / "files")))
    yield application
    application.extensions["repository"].db.dispose()


@pytest.fixture
def disk_auth(disk_app) -> dict[str, str]:  # type: ignore[no-untyped-def]
    from repository.accounts.tokens import SCOPES, create_token, create_user

    with disk_app.extensions["repository"].db.write() as conn:
        token = create_token(conn, create_user(conn, "full@example.org"), list(SCOPES))[1]
    return {"Authorization": f"Bearer {token}"}


def files_on(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


def used_bytes(root: Path) -> int:
    stat = os.statvfs(root)
    return (stat.f_blocks - stat.f_bfree) * stat.f_frsize


def multipart(client, dep: dict, auth: dict, name: str, content: bytes):  # type: ignore[no-untyped-def]
    """An upload through the old interface, its body encoded in memory (the test client would spool a large one
    to a temporary file it never closes)."""
    boundary, body = encode_multipart({"name": name, "file": FileStorage(io.BytesIO(content), name)})
    return client.post(f"{API}/{dep['id']}/files", headers=auth, data=body,
                       content_type=f"multipart/form-data; boundary={boundary}")


def assert_error(response, status: int) -> None:  # type: ignore[no-untyped-def]
    assert response.status_code == status, (response.status_code, response.get_data())
    assert response.json["status"] == status and response.json["message"]


def test_a_full_disk_answers_507_and_leaves_nothing(disk_app, disk_auth, small_disk):
    client = https_client(disk_app)
    dep = make_deposit(client, disk_auth)
    bucket = dep["links"]["bucket"].replace("https://localhost", "")
    before = used_bytes(small_disk)
    too_big = os.urandom(2 * 1024 * 1024)

    assert_error(client.put(f"{bucket}/big.bin", data=too_big, headers=disk_auth), 507)
    assert "full" in client.put(f"{bucket}/big.bin", data=too_big, headers=disk_auth).json["message"]
    assert_error(multipart(client, dep, disk_auth, "big.bin", too_big), 507)

    # Nothing behind: no temporary or final file, no row, the space given back.
    assert files_on(small_disk) == []
    assert used_bytes(small_disk) == before
    assert client.get(bucket, headers=disk_auth).json["contents"] == []
    assert client.get(f"{API}/{dep['id']}/files", headers=disk_auth).json == []
    # A file that fits is stored as usual afterwards.
    response = client.put(f"{bucket}/small.txt", data=b"fits", headers=disk_auth)
    assert response.status_code == 200 and response.json["size"] == 4


def test_a_store_that_cannot_be_written_answers_503(disk_app, disk_auth, small_disk):
    client = https_client(disk_app)
    dep = make_deposit(client, disk_auth)
    bucket = dep["links"]["bucket"].replace("https://localhost", "")
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    try:
        assert_error(client.put(f"{bucket}/a.txt", data=b"x" * 1000, headers=disk_auth), 503)
        assert_error(multipart(client, dep, disk_auth, "a.txt", b"x"), 503)
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(small_disk)], check=True)
    assert files_on(small_disk) == []
    assert client.get(bucket, headers=disk_auth).json["contents"] == []
    assert client.put(f"{bucket}/a.txt", data=b"x", headers=disk_auth).status_code == 200


@pytest.mark.skipif(not os.environ.get("TEST_DATABASE_URL"), reason="PostgreSQL: a backend ended mid-transaction")
def test_a_replacement_whose_transaction_dies_keeps_the_old_file(app, client, auth):
    """A PUT replacing a file loses its database connection after it released the old file (a restart of the
    database, a network failure): the rollback brings the old row back, and its bytes must still be there."""
    import json

    from helpers.datadesc_docs import DESCRIPTOR, VALID_ROWS, csv_bytes
    from sqlalchemy import select, text

    from repository.storage.tables.validations import datadesc_validations

    dep = make_deposit(client, auth)
    bucket = dep["links"]["bucket"].replace("https://localhost", "")
    old = csv_bytes(*VALID_ROWS)
    assert client.put(f"{bucket}/data.csv", data=old, headers=auth).status_code == 200
    assert client.put(f"{bucket}/datapackage.json", data=json.dumps(DESCRIPTOR).encode(),
                      headers=auth).status_code == 200
    services = app.extensions["repository"]
    services.validations.wait_idle()
    answers: list = []
    with services.db.engine.connect() as blocker, services.db.engine.connect() as killer:
        blocker.begin()
        # Hold the package's report: replacing the table it names makes the PUT mark it stale, so the PUT waits
        # there, after it released the old table's file.
        blocker.execute(select(datadesc_validations)
                        .where(datadesc_validations.c.key == "datapackage.json").with_for_update())
        thread = threading.Thread(target=lambda: answers.append(
            https_client(app).put(f"{bucket}/data.csv", data=b"other,table\n", headers=auth)))
        thread.start()
        waiting = None
        while waiting is None and thread.is_alive():
            waiting = killer.execute(text(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' "
                "AND pid <> pg_backend_pid()")).scalar()
            killer.rollback()
        assert waiting is not None
        killer.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": waiting})
        thread.join()
        blocker.rollback()
    assert_error(answers[0], 503)
    kept = client.get(f"{bucket}/data.csv", headers=auth)
    assert kept.status_code == 200 and kept.data == old
    kept.close()


@pytest.mark.skipif(bool(os.environ.get("TEST_DATABASE_URL")), reason="the SQLite file on a disk of its own")
def test_a_full_disk_under_the_database_or_temporary_files_answers_507(make_settings, database_url, tmp_path,
                                                                        monkeypatch):
    disk = next(mounted_disk := mounted(tmp_path, "16m"))
    try:
        (disk / "instance").mkdir()
        shutil.copy(database_url.removeprefix("sqlite:///"), disk / "instance" / "repository.db")
        app = create_app(make_settings(INSTANCE_PATH=str(disk / "instance"), FILES_ROOT=str(disk / "files"),
                                       DATABASE_URL=f"sqlite:///{disk}/instance/repository.db"))
        client = https_client(app)
        from repository.accounts.tokens import SCOPES, create_token, create_user

        with app.extensions["repository"].db.write() as conn:
            token = create_token(conn, create_user(conn, "f@example.org"), list(SCOPES))[1]
        auth = {"Authorization": f"Bearer {token}"}
        dep = make_deposit(client, auth)
        filler = fill(disk)

        # The database cannot grow: a write answers 507 (not "database not available"), nothing is stored.
        before = client.get(API, headers=auth).json
        assert_error(client.post(API, json={"metadata": {"description": "x" * 150_000}}, headers=auth), 507)
        assert client.get(API, headers=auth).json == before
        # Temporary files of a large multipart body (the form parser spools them to TMPDIR) on the full disk.
        (disk / "tmp").mkdir(exist_ok=True)
        monkeypatch.setattr(tempfile, "tempdir", str(disk / "tmp"))
        assert_error(multipart(client, dep, auth, "big.bin", os.urandom(1024 * 1024)), 507)
        assert files_on(disk / "tmp") == []

        filler.unlink()
        assert client.post(API, json={}, headers=auth).status_code == 201
        app.extensions["repository"].db.dispose()
    finally:
        next(mounted_disk, None)
