"""Moving an instance's files from its local directory to an S3 bucket (`repository-admin files migrate-to-s3`,
docs/operators/object-storage.md#moving-an-instances-files-to-s3): each file instance is copied under the same
name (its uri), then read back from the bucket and checked against its recorded size, MD5 and SHA-256.

Resumable: the id of the last file copied and checked is saved after each one (as fixity's pass does), and a file
already in the bucket at its recorded size is not sent again, only checked. Nothing is deleted from the directory:
the operator switches FILES_STORE=s3 once a run ends with no problem, and removes the directory afterwards."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from repository.files.fixity import batches
from repository.files.s3store import S3Store
from repository.files.store import FileStore
from repository.storage import Database


@dataclass
class Migration:
    after: str = ""  # the last file id copied and checked
    copied: int = 0
    skipped: int = 0  # already in the bucket at its size: checked only
    bytes: int = 0
    problems: list[dict[str, Any]] = field(default_factory=list)
    complete: bool = False


def load(path: str) -> Migration:
    try:
        with open(path, encoding="utf-8") as handle:
            return Migration(**json.load(handle))
    except (FileNotFoundError, ValueError, TypeError):
        return Migration()


def save(path: str, progress: Migration) -> None:
    with open(path + ".tmp", "w", encoding="utf-8") as handle:
        json.dump(asdict(progress), handle)
    os.replace(path + ".tmp", path)


def migrate(db: Database, source: FileStore, target: S3Store, state: str, restart: bool = False,
            on_file: Callable[[dict[str, Any]], object] = lambda row: None) -> Migration:
    """Copy every file instance after the saved position to `target` and check it there; returns the progress."""
    progress = Migration() if restart else load(state)
    progress.problems = [p for p in progress.problems if p["problem"] != "stopped"]
    for batch in batches(db, progress.after):
        for row in batch:
            problem = _copy(source, target, row, progress)
            if problem is not None:
                progress.problems.append({"file_id": row["id"], "uri": row["uri"], **problem})
            progress.after = row["id"]
            save(state, progress)
            on_file(row)
    progress.complete = True
    save(state, progress)
    return progress


def _copy(source: FileStore, target: S3Store, row: dict[str, Any], progress: Migration) -> dict[str, Any] | None:
    try:
        there = target.size(row["uri"])
    except FileNotFoundError:
        there = None
    if there == row["size"]:
        progress.skipped += 1
    else:
        path = source.path(row["uri"])
        if not os.path.isfile(path):
            return {"problem": "missing", "expected": row["size"], "actual": None}
        target.put_file(path, row["uri"])
        progress.copied += 1
        progress.bytes += row["size"]
    md5, sha256, size = hashlib.md5(usedforsecurity=False), hashlib.sha256(), 0
    for chunk in target.read(row["uri"]):
        md5.update(chunk)
        sha256.update(chunk)
        size += len(chunk)
    if size != row["size"]:
        return {"problem": "size", "expected": row["size"], "actual": size}
    if "md5:" + md5.hexdigest() != row["checksum"]:
        return {"problem": "md5", "expected": row["checksum"], "actual": "md5:" + md5.hexdigest()}
    if row["sha256"] is not None and sha256.hexdigest() != row["sha256"]:
        return {"problem": "sha256", "expected": row["sha256"], "actual": sha256.hexdigest()}
    return None
