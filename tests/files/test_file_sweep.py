"""The background worker sweeps the file store periodically in both shapes (the thread of a server process and
scripts/worker.py): a crashed upload's old temporary file and an old file no row points at are removed; a fresh
temporary file (an upload in progress) and every recorded file are kept."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from helpers.factories import make_deposit, upload
from helpers.http import https_client

from app import create_app
from repository.files import sweeper as sweeper_module
from repository.files.store import FileStore
from repository.files.sweeper import SWEEP_STAMP, Sweeper, sweep

pytestmark = pytest.mark.local_store  # the sweep of the directory itself (S3: test_s3_store.py)

ROOT = str(Path(__file__).resolve().parents[2])
HOURS_AGO = 2 * 3600


def plant(path: Path, age: float) -> Path:
    """A file of `age` seconds (by its modification time), as a crashed upload leaves one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"left by a crash")
    then = time.time() - age
    os.utime(path, (then, then))
    return path


def leftovers(root: Path) -> dict[str, Path]:
    """An old and a fresh temporary file, and an old file in place that no row points at."""
    orphan_id = str(uuid.uuid4())
    return {
        "old_tmp": plant(root / ".tmp" / str(uuid.uuid4()), HOURS_AGO),
        "fresh_tmp": plant(root / ".tmp" / str(uuid.uuid4()), 0),
        "old_orphan": plant(root / orphan_id[:2] / orphan_id[2:4] / orphan_id, HOURS_AGO),
    }


def recorded_file(client, auth, root: Path) -> Path:  # type: ignore[no-untyped-def]
    """A real upload's file, made old: the sweep must never touch it."""
    dep = make_deposit(client, auth)
    file_id = upload(client, auth, dep)["id"]
    path = next(p for p in root.rglob(file_id))
    then = time.time() - HOURS_AGO
    os.utime(path, (then, then))
    return path


def wait_until_gone(path: Path, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    return not path.exists()


@pytest.mark.slow
def test_the_server_thread_sweeps_periodically(make_settings, make_token):
    settings = make_settings(BACKGROUND_WORKER=True, FILES_SWEEP_INTERVAL=0)
    app = create_app(settings)
    try:
        client = https_client(app)
        auth = {"Authorization": f"Bearer {make_token()}"}
        root = Path(settings.FILES_ROOT)
        kept = recorded_file(client, auth, root)
        # Planted while the server runs: only a periodic sweep (not one at start-up) can find them.
        files = leftovers(root)
        assert wait_until_gone(files["old_tmp"]) and wait_until_gone(files["old_orphan"])
        assert files["fresh_tmp"].exists() and kept.exists()
    finally:
        app.extensions["repository"].indexer.stop()
        app.extensions["repository"].db.dispose()


@pytest.mark.slow  # a subprocess: seconds of start-up
def test_scripts_worker_sweeps_periodically(make_settings, client, auth, settings):
    root = Path(settings.FILES_ROOT)
    kept = recorded_file(client, auth, root)
    env = {**os.environ, "INSTANCE_PATH": settings.INSTANCE_PATH, "DATABASE_URL": settings.DATABASE_URL,
           "SECRET_KEY": "test-secret", "FILES_SWEEP_INTERVAL": "0", "AUTO_MIGRATE": "false"}
    worker = subprocess.Popen([sys.executable, os.path.join(ROOT, "scripts", "worker.py"), "--interval", "0.2"],
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        files = leftovers(root)
        gone = wait_until_gone(files["old_tmp"]) and wait_until_gone(files["old_orphan"])
        # A second round, long after the worker started: it sweeps again.
        again = plant(root / ".tmp" / str(uuid.uuid4()), HOURS_AGO)
        gone_again = wait_until_gone(again)
    finally:
        worker.terminate()
        _, errors = worker.communicate(timeout=30)
    assert worker.returncode == 0, errors.decode()
    assert gone and gone_again, errors.decode()
    assert files["fresh_tmp"].exists() and kept.exists()


def test_worker_once_sweeps_and_keeps_recorded_files(client, auth, settings, monkeypatch, capsys):
    from scripts import worker

    root = Path(settings.FILES_ROOT)
    kept = recorded_file(client, auth, root)
    files = leftovers(root)
    for name, value in (("INSTANCE_PATH", settings.INSTANCE_PATH), ("DATABASE_URL", settings.DATABASE_URL),
                        ("SECRET_KEY", "test-secret")):
        monkeypatch.setenv(name, value)
    assert worker.main(["--once"]) == 0
    assert "applied" in capsys.readouterr().out
    assert not files["old_tmp"].exists() and not files["old_orphan"].exists()
    assert files["fresh_tmp"].exists() and kept.exists()


# --- one sweep per interval for every process sharing the store (each server process runs the worker thread) ---
INTERVAL = 600
ORPHAN_AGE = 3600


def orphan(root: Path) -> Path:
    """An old file in place that no row points at."""
    file_id = str(uuid.uuid4())
    return plant(root / file_id[:2] / file_id[2:4] / file_id, HOURS_AGO)


@pytest.fixture
def database(settings):  # type: ignore[no-untyped-def]
    from repository.storage import open_database

    db = open_database(settings.DATABASE_URL)
    yield db
    db.dispose()


def sweeper(database, root: Path) -> Sweeper:  # type: ignore[no-untyped-def]
    """What a newly started process builds: its own store object and sweeper on the shared root."""
    return Sweeper(database, FileStore(str(root)), INTERVAL, ORPHAN_AGE)


def test_a_process_starting_after_a_sweep_does_not_sweep_again(database, tmp_path):
    root = tmp_path / "files"
    first = orphan(root)
    assert sweeper(database, root)() == 1 and not first.exists()
    second = orphan(root)
    stamp = root / SWEEP_STAMP
    then = stamp.stat().st_mtime - 100
    os.utime(stamp, (then, then))  # that sweep started 100 s ago
    swept = stamp.stat().st_mtime
    before = time.monotonic(), time.time()
    later = [sweeper(database, root) for _ in range(3)]  # three more processes start within the interval
    assert [s() for s in later] == [0, 0, 0] and second.exists()
    after = time.monotonic(), time.time()
    # Each waits for the rest of the interval (from that sweep), not a whole one of its own: its next turn is
    # INTERVAL after the sweep, by the clocks read around the calls (however long they took).
    earliest = before[0] + (INTERVAL - (after[1] - swept))
    latest = after[0] + (INTERVAL - (before[1] - swept))
    assert all(earliest <= s._due <= latest for s in later)
    then = time.time() - INTERVAL - 1
    os.utime(stamp, (then, then))  # the interval has passed since that sweep
    assert sweeper(database, root)() == 1 and not second.exists()
    # Kept by its own sweep, and renewed (compared with the back-dated time, not with time.time(): the kernel
    # stamps files from a coarser clock, which may lag it by a few milliseconds).
    assert stamp.exists() and stamp.stat().st_mtime > then + INTERVAL / 2


def test_no_sweep_while_another_process_sweeps(database, tmp_path):
    root = tmp_path / "files"
    left = orphan(root)
    FileStore(str(root))
    fd = os.open(root / SWEEP_STAMP, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # another process is sweeping (an flock taken through its own descriptor)
        assert sweeper(database, root)() == 0 and left.exists()
    finally:
        os.close(fd)
    # That sweep never completed (its process died holding the lock): the next process sweeps.
    assert sweeper(database, root)() == 1 and not left.exists()


def test_a_failed_sweep_leaves_it_due(database, tmp_path, monkeypatch):
    root = tmp_path / "files"
    left = orphan(root)
    failing = sweeper(database, root)

    def broken(store, conn, min_age):  # type: ignore[no-untyped-def]
        raise OSError("the disk went away")

    monkeypatch.setattr(sweeper_module, "sweep", broken)
    with pytest.raises(OSError):
        failing()
    monkeypatch.undo()
    assert sweeper(database, root)() == 1 and not left.exists()


def test_the_stamp_is_never_swept(database, tmp_path):
    root = tmp_path / "files"
    store = FileStore(str(root))
    assert sweeper(database, root)() == 0
    stamp = root / SWEEP_STAMP
    os.utime(stamp, (time.time() - HOURS_AGO, time.time() - HOURS_AGO))
    with database.read() as conn:
        assert sweep(store, conn, min_age=0) == 0
    assert stamp.exists()
