"""Small file systems of their own for full-disk tests: a tmpfs mounted for a test (skipped where mounting is not
permitted) and unmounted afterwards, and a way to fill one to its last block."""

from __future__ import annotations

import errno
import os
import subprocess
import uuid
from pathlib import Path

import pytest


def mounted(tmp_path: Path, size: str):  # type: ignore[no-untyped-def]
    """A file system of `size` of its own (tmpfs), unmounted afterwards."""
    mount_point = tmp_path / f"disk-{uuid.uuid4().hex[:8]}"
    mount_point.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount_point)],
                          capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip("mounting a small tmpfs is not permitted here: " + done.stderr.decode(errors="replace").strip())
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def fill(root: Path) -> Path:
    """Fill the file system of `root` to its last block; returns the filler file (remove it to free the space)."""
    filler = root / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)
    return filler
