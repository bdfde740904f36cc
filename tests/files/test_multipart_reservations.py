"""What a multipart upload may reserve: never disk space the file system does not have beyond READY_MIN_FREE_BYTES
(507, nothing left behind), never more than MULTIPART_USER_RESERVED_BYTES across one user's open uploads (413),
and an abort frees its space even on a disk so full that the database cannot write. The disks are small tmpfs
file systems of the tests' own (skipped where mounting is not permitted), unmounted afterwards."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from helpers.disks import fill, mounted
from helpers.factories import make_deposit
from helpers.http import https_client

from app import create_app
from repository.accounts.tokens import SCOPES, create_token, create_user

MIB = 1024 * 1024


def bucket_of(dep: dict) -> str:
    return dep["links"]["bucket"].replace("https://localhost", "")


def start(client, auth, bucket: str, size: int, key: str = "big.bin"):  # type: ignore[no-untyped-def]
    return client.post(f"{bucket}/{key}?uploads&size={size}&partSize={max(size // 100, 1)}", headers=auth)


def assert_error(response, status: int) -> None:  # type: ignore[no-untyped-def]
    assert response.status_code == status, (response.status_code, response.get_data())
    assert response.json["status"] == status and response.json["message"]


def upload_dirs(root: Path) -> list[Path]:
    parent = root / ".tmp" / "multipart"
    return [p for p in parent.iterdir() if p.is_dir()] if parent.exists() else []


def free_on(root: Path) -> int:
    stat = os.statvfs(root)
    return stat.f_bavail * stat.f_frsize


def token_of(app, email: str) -> dict[str, str]:  # type: ignore[no-untyped-def]
    with app.extensions["repository"].db.write() as conn:
        return {"Authorization": f"Bearer {create_token(conn, create_user(conn, email), list(SCOPES))[1]}"}


@pytest.fixture
def small_disk(tmp_path):  # type: ignore[no-untyped-def]
    yield from mounted(tmp_path, "8m")


@pytest.fixture
def disk_app(make_settings, small_disk, database_url):  # type: ignore[no-untyped-def]
    """FILES_ROOT on the small disk, and on SQLite the database too (as in the embedded shape's instance folder)."""
    overrides = {"FILES_ROOT": str(small_disk / "files"), "READY_MIN_FREE_BYTES": 2 * MIB}
    if database_url.startswith("sqlite:"):
        shutil.copy(database_url.removeprefix("sqlite:///"), small_disk / "repository.db")
        overrides["DATABASE_URL"] = f"sqlite:///{small_disk / 'repository.db'}"
    application = create_app(make_settings(**overrides))
    yield application
    application.extensions["repository"].db.dispose()


@pytest.mark.local_store  # the room reserved on FILES_ROOT's disk (an S3 upload's parts are in the bucket)
def test_a_reservation_must_leave_the_free_margin(disk_app, small_disk):
    client, auth = https_client(disk_app), token_of(disk_app, "big@example.org")
    bucket = bucket_of(make_deposit(client, auth))
    refused = start(client, auth, bucket, free_on(small_disk) - MIB)  # fits the disk, but not with 2 MiB left over
    assert_error(refused, 507)
    assert "free" in refused.json["message"]
    assert upload_dirs(small_disk / "files") == []
    taken = start(client, auth, bucket, free_on(small_disk) - 3 * MIB)
    assert taken.status_code == 200, taken.json
    rest = free_on(small_disk) - 2 * MIB  # what is left beside the margin
    assert_error(start(client, auth, bucket, rest + 64 * 1024, key="second.bin"), 507)
    assert client.put(f"{bucket}/small.txt", data=b"x" * 1000, headers=auth).status_code == 200  # others still write


def test_a_user_may_not_reserve_more_than_the_cap_across_deposits(make_settings):
    app = create_app(make_settings(MULTIPART_USER_RESERVED_BYTES=1000))
    try:
        client, auth = https_client(app), token_of(app, "many@example.org")
        first, second = (bucket_of(make_deposit(client, auth)) for _ in range(2))
        opened = start(client, auth, first, 600)
        assert opened.status_code == 200
        refused = start(client, auth, second, 600)
        assert_error(refused, 413)
        assert "open multipart uploads" in refused.json["message"] and refused.json["errors"][0]["field"] == "size"
        other = token_of(app, "other@example.org")  # someone else's uploads are theirs to count
        assert start(client, other, bucket_of(make_deposit(client, other)), 600).status_code == 200
        upload_id = opened.json["id"]
        assert client.delete(f"{first}/big.bin?uploadId={upload_id}", headers=auth).status_code == 204
        assert start(client, auth, second, 600).status_code == 200
    finally:
        app.extensions["repository"].db.dispose()


def test_the_default_cap_is_set():
    from repository.config import Settings

    assert 0 < Settings.build(SECRET_KEY="x" * 40).MULTIPART_USER_RESERVED_BYTES <= 50_000_000_000


@pytest.mark.local_store  # the room reserved on FILES_ROOT's disk (an S3 upload's parts are in the bucket)
def test_an_abort_frees_the_space_on_a_full_disk(disk_app, small_disk):
    client, auth = https_client(disk_app), token_of(disk_app, "full@example.org")
    bucket = bucket_of(make_deposit(client, auth))
    opened = start(client, auth, bucket, 3 * MIB)
    assert opened.status_code == 200, opened.json
    filler = fill(small_disk)  # the disk is full: the database cannot grow either
    try:
        aborted = client.delete(f"{bucket}/big.bin?uploadId={opened.json['id']}", headers=auth)
        assert aborted.status_code == 204, (aborted.status_code, aborted.get_data())
        assert upload_dirs(small_disk / "files") == []
        listed = client.get(f"{bucket}/big.bin?uploadId={opened.json['id']}", headers=auth)
        assert_error(listed, 404)
    finally:
        filler.unlink()
