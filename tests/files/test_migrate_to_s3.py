"""`repository-admin files migrate-to-s3` (docs/operators/object-storage.md#moving-an-instances-files-to-s3): an
instance's files copied from its directory to a bucket, checked there, resumable; then served by the S3 store."""

from __future__ import annotations

import dataclasses

import pytest
from conftest import close_app
from helpers.factories import make_deposit, publish
from helpers.http import download, https_client
from helpers.seaweed import stored_objects

from app import create_app
from repository.cli import COMMANDS, invoke
from repository.files import migration

pytestmark = [pytest.mark.slow, pytest.mark.local_store]  # from the local store, to a real S3 server

FILES = {f"f{n}.bin": bytes([n]) * 5000 + f"file {n}".encode() for n in range(4)}


def test_the_files_are_copied_checked_and_served_from_s3(app, client, auth, settings, s3_settings, monkeypatch,
                                                         capsys):  # type: ignore[no-untyped-def]
    dep = make_deposit(client, auth)
    bucket = dep["links"]["bucket"].replace("https://localhost", "")
    for name, content in FILES.items():
        assert client.put(f"{bucket}/{name}", data=content, headers=auth).status_code in (200, 201)
    publish(client, auth, dep)
    s3 = dataclasses.replace(settings, **{k: v for k, v in s3_settings.items() if k != "FILES_STORE"})
    # Interrupted after the second file (as a signal would), then resumed: each file is sent once.
    real_copy, seen = migration._copy, []

    def copy_then_stop(*args):  # type: ignore[no-untyped-def]
        if len(seen) == 2:
            raise KeyboardInterrupt
        seen.append(args[2]["id"])
        return real_copy(*args)

    monkeypatch.setattr(migration, "_copy", copy_then_stop)
    assert invoke(COMMANDS["files"], ["migrate-to-s3", "--quiet"], s3) == 3
    assert len(stored_objects(s3)) == 2
    monkeypatch.setattr(migration, "_copy", real_copy)
    assert invoke(COMMANDS["files"], ["migrate-to-s3", "--quiet"], s3) == 0
    assert "4 copied (20024 bytes), 0 already there" in capsys.readouterr().err  # counted over both runs: none twice
    assert len(stored_objects(s3)) == 4
    # Run again from the start: everything is there already, checked and not sent again.
    assert invoke(COMMANDS["files"], ["migrate-to-s3", "--quiet", "--restart"], s3) == 0
    err = capsys.readouterr().err
    assert "0 copied" in err and "4 already there" in err
    # The instance switched to S3 serves the same bytes.
    switched = create_app(dataclasses.replace(s3, FILES_STORE="s3"))
    try:
        other = https_client(switched)
        record = other.get(f"/api/records/{dep['id']}").json
        for item in record["files"]:
            got = download(other, item["links"]["self"].replace("https://localhost", ""))
            assert got.data == FILES[item["key"]]
    finally:
        close_app(switched)


def test_a_file_altered_on_the_way_is_reported(app, client, auth, settings, s3_settings, weed, capsys):  # type: ignore[no-untyped-def]
    dep = make_deposit(client, auth)
    bucket = dep["links"]["bucket"].replace("https://localhost", "")
    client.put(f"{bucket}/a.bin", data=b"abc" * 1000, headers=auth)
    s3 = dataclasses.replace(settings, **{k: v for k, v in s3_settings.items() if k != "FILES_STORE"})
    assert invoke(COMMANDS["files"], ["migrate-to-s3", "--quiet"], s3) == 0
    [key] = stored_objects(s3)
    weed.client().put_object(Bucket=s3.S3_BUCKET, Key=key, Body=b"xyz" * 1000)  # same size, other bytes
    assert invoke(COMMANDS["files"], ["migrate-to-s3", "--quiet", "--restart"], s3) == 1
    assert "problem: md5" in capsys.readouterr().err
