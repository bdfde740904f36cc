"""scripts/backup.py takes a consistent copy while deposits are being published; scripts/restore.py brings it back
into a new, empty instance with every record, every file (checksums) and a clean `reindex --check`."""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time

import pytest
from helpers.databases import drop_database, empty_database
from helpers.factories import make_deposit, publish, published, upload
from helpers.http import download, https_client

import scripts.reindex
from app import create_app
from repository.accounts import audit
from repository.config import Settings
from scripts import backup, restore


def _published_big(client, auth: dict, title: str, content: bytes) -> int:  # type: ignore[no-untyped-def]
    """A record whose one file is uploaded as a raw body (a large multipart body would spool to a temp file)."""
    dep = make_deposit(client, auth, title=title)
    response = client.put(dep["links"]["bucket"].removeprefix("https://localhost") + "/big.bin", data=content,
                          headers={**auth, "Content-Type": "application/octet-stream"})
    assert response.status_code in (200, 201), response.json
    return publish(client, auth, dep)["id"]


def _listed(client) -> set[int]:  # type: ignore[no-untyped-def]
    """Every record id the search lists (all versions)."""
    found = client.get("/api/records/", query_string={"size": 200, "all_versions": "true"}).json["hits"]["hits"]
    return {hit["id"] for hit in found}


@pytest.mark.slow
def test_backup_while_publishing_then_restore_into_a_new_instance(app, client, auth, settings, tmp_path, capsys):
    big = os.urandom(6 << 20)  # files of some size, so the backup takes long enough to overlap publishing
    before = [_published_big(client, auth, f"Before {i}", big + bytes([i])) for i in range(5)]
    draft = make_deposit(client, auth, title="A draft")
    upload(client, auth, draft, name="draft.bin", content=b"draft bytes")

    finished: list[tuple[int, float]] = []  # (record id, when its publish returned)
    failures: list[BaseException] = []
    stop = threading.Event()

    def publish_until_stopped() -> None:
        try:
            for i in range(500):
                if stop.is_set():
                    return
                finished.append((published(client, auth, title=f"During {i}", content=f"{i}".encode())["id"],
                                 time.monotonic()))
        except BaseException as exc:  # noqa: BLE001 - reported by the test below
            failures.append(exc)

    publisher = threading.Thread(target=publish_until_stopped)
    publisher.start()
    while not finished and not failures:
        time.sleep(0.01)
    # Back up again and again while the publishing goes on, until a publish has committed in the middle of one
    # (a backup takes a fraction of a second here): every backup must succeed; that one is restored.
    target, started, ended = None, 0.0, 0.0
    try:
        for attempt in range(20):
            folder = tmp_path / f"backup{attempt}"
            started = time.monotonic()
            assert backup.main([str(folder), "--quiet"], settings) == 0
            ended = time.monotonic()
            assert "backed up" in capsys.readouterr().out
            if any(started < when < ended for _, when in finished):
                target = folder
                break
    finally:
        stop.set()
        publisher.join()
    assert failures == []
    assert target is not None, "no publish finished during any backup"
    published_before = set(before) | {recid for recid, when in finished if when < started}
    everything = set(before) | {recid for recid, _ in finished}
    manifest = json.loads((target / "manifest.json").read_text())
    assert not list(tmp_path.glob(".backup*.partial-*"))  # renamed into place, nothing left beside it

    # Every line of SHA256SUMS holds for the folder.
    for line in (target / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split("  ", 1)
        assert hashlib.sha256((target / name).read_bytes()).hexdigest() == digest, name

    restored_url = empty_database(tmp_path, "restored")
    restored_client = None
    try:
        restored = Settings.build(INSTANCE_PATH=str(tmp_path / "restored"), DATABASE_URL=restored_url,
                                  BASE_URL="https://localhost", SECRET_KEY="test-secret", BACKGROUND_WORKER=False)
        assert restore.main([str(target), "--quiet"], restored) == 0
        out = capsys.readouterr().out
        assert "restore check passed" in out, out
        assert scripts.reindex.main(["--check", "--quiet"], restored) == 0
        assert "index check passed" in capsys.readouterr().out

        restored_client = https_client(create_app(restored))
        found = _listed(restored_client)
        # The audit log is in the backup: each restored record's publication is there, as it was written.
        with restored_client.application.extensions["repository"].db.read() as conn:
            published_entries = {int(e["target_id"]) for e in audit.search(conn, action="deposit.publish",
                                                                            size=1000)[0]}
        assert found <= published_entries
        assert published_before <= found <= everything  # whatever was published before is there; nothing made up
        assert len(found) == manifest["counts"]["records"]
        for recid in found:  # every file of every record, by checksum, as the original instance serves it
            original = client.get(f"/api/records/{recid}").json
            record = restored_client.get(f"/api/records/{recid}").json
            assert record["metadata"]["title"] == original["metadata"]["title"]
            assert [f["checksum"] for f in record["files"]] == [f["checksum"] for f in original["files"]]
            for entry in record["files"]:
                body = download(restored_client, entry["links"]["self"].removeprefix("https://localhost")).data
                assert "md5:" + hashlib.md5(body).hexdigest() == entry["checksum"]
        # The draft came back too, with its file.
        draft_files = restored_client.get(f"/api/deposit/depositions/{draft['id']}/files", headers=auth)
        assert [f["filename"] for f in draft_files.json] == ["draft.bin"]

        # A restore goes into an empty instance only: the same again is refused, and changes nothing.
        assert restore.main([str(target), "--quiet"], restored) == 2
        assert "not empty" in capsys.readouterr().err
    finally:
        if restored_client is not None:
            restored_client.application.extensions["repository"].db.dispose()
        drop_database(restored_url)


def test_backup_refuses_a_folder_that_is_not_empty(settings, tmp_path, capsys):
    target = tmp_path / "used"
    target.mkdir()
    (target / "something").write_text("kept")
    assert backup.main([str(target), "--quiet"], settings) == 2
    assert "not an empty folder" in capsys.readouterr().err
    assert sorted(p.name for p in target.iterdir()) == ["something"]


def test_backup_into_an_empty_folder_and_a_damaged_backup_is_refused(client, auth, settings, tmp_path, capsys):
    published(client, auth)
    target = tmp_path / "empty"
    target.mkdir()
    assert backup.main([str(target), "--quiet"], settings) == 0
    manifest = json.loads((target / "manifest.json").read_text())
    dump = target / manifest["database"]["file"]
    dump.write_bytes(dump.read_bytes() + b"damage")
    fresh = Settings.build(INSTANCE_PATH=str(tmp_path / "fresh"), DATABASE_URL=f"sqlite:///{tmp_path}/fresh/db",
                           SECRET_KEY="test-secret")
    capsys.readouterr()
    assert restore.main([str(target), "--quiet"], fresh) == 2
    assert "does not match its checksum" in capsys.readouterr().err
    assert not (tmp_path / "fresh" / "db").exists()


def test_restore_refuses_a_folder_that_is_no_backup(settings, tmp_path, capsys):
    assert restore.main([str(tmp_path), "--quiet"], settings) == 2
    assert "is not a backup folder" in capsys.readouterr().err


def test_the_sweep_stamp_does_not_make_the_file_store_non_empty(settings):
    from pathlib import Path

    import pytest

    from repository import backup as backups
    from repository.files.store import FileStore
    from repository.files.sweeper import SWEEP_STAMP

    root = Path(settings.FILES_ROOT)
    FileStore(str(root))  # its empty staging folder
    (root / SWEEP_STAMP).write_bytes(b"1")  # a worker swept the empty store before the restore
    with pytest.raises(backups.BackupError, match="database"):  # the files pass; this test's database has tables
        backups._check_empty(settings)
    (root / "ab").mkdir()
    with pytest.raises(backups.BackupError, match="FILES_ROOT"):
        backups._check_empty(settings)
