"""The exports folder (EXPORTS_ROOT): one sub-folder per complete export, named by its UTC time
(`20260101T000000Z`), holding the data files and `manifest.json`. A folder is renamed into place only once every file
in it is written and synced, so a listed export is always whole; partial ones (`.partial-*`, left by a crash) are
never listed and are removed by the next export (docs/operators/export.md#how-an-export-is-written)."""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import orjson

from repository import urls
from repository.files.store import fsync_dir

MANIFEST = "manifest.json"
JSONL = "records.jsonl.gz"
DATACITE = "datacite.xml.gz"
FILES = (JSONL, DATACITE)
PARTIAL = ".partial-"
LOCK = ".lock"
_NAME = re.compile(r"\A\d{8}T\d{6}Z\Z")
STAMP = "%Y%m%dT%H%M%SZ"


def name_of(when: dt.datetime) -> str:
    """The folder name of an export taken at `when` (naive UTC)."""
    return when.strftime(STAMP)


def taken_at(name: str) -> dt.datetime:
    """The time of export folder `name`."""
    return dt.datetime.strptime(name, STAMP)


def is_export_name(name: str) -> bool:
    """Whether `name` can name a complete export (what a URL may ask for: nothing else is ever opened)."""
    return bool(_NAME.match(name))


def names(root: str) -> list[str]:
    """The complete exports under `root`, newest first."""
    try:
        found = os.listdir(root)
    except FileNotFoundError:
        return []
    return sorted((n for n in found if is_export_name(n) and os.path.isfile(os.path.join(root, n, MANIFEST))),
                  reverse=True)


def manifest(root: str, name: str) -> dict[str, Any] | None:
    """The manifest of complete export `name`, or None when there is no such export."""
    if not is_export_name(name):
        return None
    try:
        with open(os.path.join(root, name, MANIFEST), "rb") as handle:
            return orjson.loads(handle.read())
    except FileNotFoundError:
        return None


def file_path(root: str, name: str, file: str) -> str | None:
    """The path of data file `file` of complete export `name`, or None (an unknown export or file name)."""
    if file not in FILES and file != MANIFEST or manifest(root, name) is None:
        return None
    path = os.path.join(root, name, file)
    return path if os.path.isfile(path) else None


@contextmanager
def exclusive(root: str) -> Iterator[bool]:
    """Whether this process holds the exports' lock (an flock the kernel drops if the process dies): one export
    at a time across every process writing to `root`; yields False when another holds it."""
    os.makedirs(root, mode=0o700, exist_ok=True)
    fd = os.open(os.path.join(root, LOCK), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        yield _took(fd)
    finally:
        os.close(fd)  # and with it the lock


def _took(fd: int) -> bool:
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def clear_partials(root: str) -> None:
    """Remove what crashed exports left (called under the lock: no export is being written)."""
    for entry in os.listdir(root):
        if entry.startswith(PARTIAL):
            shutil.rmtree(os.path.join(root, entry), ignore_errors=True)


def publish(root: str, partial: str, name: str) -> str:
    """Rename the finished folder `partial` to `name` (atomic on one file system) and sync the parent."""
    final = os.path.join(root, name)
    os.rename(partial, final)
    fsync_dir(root)
    return final


def prune(root: str, keep: int) -> list[str]:
    """Remove all but the `keep` newest complete exports; returns the names removed."""
    old = names(root)[keep:]
    for name in old:
        remove(root, name)
    return old


def remove(root: str, name: str) -> None:
    """Remove complete export `name`: out of the listing first (a rename is atomic), then its files, so a reader
    never sees half an export."""
    doomed = os.path.join(root, PARTIAL + "removed-" + name)
    os.rename(os.path.join(root, name), doomed)
    shutil.rmtree(doomed, ignore_errors=True)


def listing(root: str, base: str) -> list[dict[str, Any]]:
    """The complete exports under `root`, newest first, as /api/exports/ lists them: each manifest with the
    download links of its files (`base`: the service's BASE_URL)."""
    out = []
    for name in names(root):
        found = manifest(root, name)
        if found is None:  # pruned since it was listed
            continue
        files = {file: {**about, "links": {"self": urls.export_file(base, name, file)}}
                 for file, about in found.get("files", {}).items()}
        out.append({**found, "files": files,
                    "links": {"manifest": urls.export_file(base, name, MANIFEST)}})
    return out
