"""The rate-limit counter file on a full disk: its blocks are allocated when it is made or grown, so a write
through its memory map never meets a hole the disk cannot fill (a worker would die of SIGBUS); a table that cannot
be made or grown is an OSError the limiter answers by counting in memory for a while. Real faults: the file lives
on a small tmpfs of the test's own, filled to its last block."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from helpers.disks import fill, mounted
from helpers.http import https_client

from app import create_app
from repository.web import ratelimit_store


@pytest.fixture
def small_disk(tmp_path):  # type: ignore[no-untyped-def]
    yield from mounted(tmp_path, "1m")


def test_the_counter_file_has_its_blocks_when_made(small_disk):
    path = small_disk / "ratelimit.counters"
    storage = ratelimit_store.FileStorage(f"file://{path}")
    try:
        stat = os.stat(path)
        assert stat.st_blocks * 512 >= stat.st_size  # no hole left for a later write to fault on
    finally:
        storage.close()


@pytest.mark.slow
def test_a_full_disk_never_kills_the_process_writing_counters(small_disk):
    """Made on an empty disk, then the disk filled: counting thousands of keys (every page of the table written,
    and a growth the disk cannot hold) raises OSError at worst, never SIGBUS. In a child process: a SIGBUS there
    must not take the test run with it."""
    script = textwrap.dedent("""
        import sys
        from repository.web import ratelimit_store
        storage = ratelimit_store.FileStorage("file://" + sys.argv[1])
        open(sys.argv[2], "w").close()  # the parent fills the disk now
        while open(sys.argv[2]).read() != "full":
            pass
        counted = refused = 0
        for n in range(40_000):
            try:
                storage.incr(f"client-{n}", 60)
                counted += 1
            except OSError:  # the table could not grow: each new key tries again, a scan of the table
                refused += 1
                if refused == 20:
                    break
        print("counted", counted, "refused", refused)
    """)
    path, signal = small_disk / "ratelimit.counters", small_disk.parent / "go"
    child = subprocess.Popen([sys.executable, "-c", script, str(path), str(signal)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        while not signal.exists():
            assert child.poll() is None, child.communicate()
        filler = fill(small_disk)
        signal.write_text("full")
        out, err = child.communicate(timeout=120)
    finally:
        child.kill() if child.poll() is None else None
    assert child.returncode == 0, (child.returncode, err[-2000:])  # -7 would be SIGBUS
    assert out.startswith("counted") and int(out.split()[1]) > 0
    filler.unlink()


def test_a_counter_file_that_cannot_be_made_falls_back_to_memory(small_disk, make_settings, caplog):
    """A full disk at start-up: the app starts, answers, and still limits (per process) while it cannot make the
    file; once there is room again, the file is made and used."""
    filler = fill(small_disk)
    path = small_disk / "ratelimit.counters"
    app = create_app(make_settings(RATELIMIT_STORAGE_URI=f"file://{path}", RATELIMIT_GUEST="5/minute"))
    try:
        client = https_client(app)
        answers = [client.get("/api/").status_code for _ in range(6)]
        assert answers == [200] * 5 + [429]
        assert "rate-limit storage failed" in caplog.text
        filler.unlink()
        storage = app.extensions["repository.ratelimit"].storage
        storage.incr("after", 60)  # room again: the file is made
        assert path.exists() and storage.get("after") == 1
    finally:
        app.extensions["repository"].db.dispose()
