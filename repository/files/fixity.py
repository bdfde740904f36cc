"""Fixity: re-hash every stored file and compare it with what the database says (size, MD5, and SHA-256 where one
was kept), to find bit rot, truncation, a file changed or removed behind the service's back.

One pass walks `file_instances` in id order, in batches (memory flat, no transaction held open while reading
the disk), reading each file in 1 MiB chunks with both hashes side by side. It is:
- rate-limited: at most `rate` bytes a second (FIXITY_BYTES_PER_SECOND), so a check does not starve downloads;
- resumable: a small JSON state file (the last id checked, the counts and the problems so far) is replaced after
  every file, so a pass stopped by a signal, a crash or `max_files` goes on from there when run again;
- careful about change: a file missing from disk is reported only if its row is still there once looked up
  again (a file deleted during the pass is not a problem), and files stored during a pass with an id before the
  position are left to the next pass.
The report lists each problem (`missing`, `size`, `md5`, `sha256`) with the expected and actual values and the
buckets, records and deposits that hold the file."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from sqlalchemy import func, select

from repository.files.store import FileStore
from repository.storage import Database
from repository.storage.tables.deposits import deposits
from repository.storage.tables.files import file_instances, objects
from repository.storage.tables.records import records
from repository.timeutil import isoformat, utcnow

BATCH = 200
STATE_VERSION = 1


@dataclass
class Progress:
    """What the state file holds, and the report's body."""

    version: int = STATE_VERSION
    started: str = ""
    after: str = ""  # the last file id checked ("" before the first)
    checked: int = 0
    bytes: int = 0
    problems: list[dict[str, Any]] = field(default_factory=list)
    complete: bool = False
    resumed: bool = False


class Throttle:
    """Sleeps so that no more than `rate` bytes a second are read over the pass (0: no limit)."""

    def __init__(self, rate: int, sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.rate, self.sleep, self.clock = rate, sleep, clock
        self.start, self.done = clock(), 0

    def took(self, size: int) -> None:
        if not self.rate:
            return
        self.done += size
        ahead = self.done / self.rate - (self.clock() - self.start)
        if ahead > 0:
            self.sleep(ahead)


def load_state(path: str) -> Progress | None:
    """The state of an unfinished pass, None when there is none (or it is unreadable: start afresh)."""
    try:
        with open(path, encoding="utf-8") as source:
            data = json.load(source)
        progress = Progress(**data)
    except (OSError, ValueError, TypeError):
        return None
    return None if progress.version != STATE_VERSION or progress.complete else progress


def save_state(path: str, progress: Progress) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as out:
        json.dump(asdict(progress), out)
    os.replace(tmp, path)  # whole or not at all: a pass killed mid-write resumes from the previous file


def batches(db: Database, after: str) -> Iterator[list[dict[str, Any]]]:
    while True:
        with db.read() as conn:
            rows = [dict(r) for r in conn.execute(
                select(file_instances).where(file_instances.c.id > after).order_by(file_instances.c.id).limit(BATCH)
            ).mappings()]
        if not rows:
            return
        yield rows
        after = rows[-1]["id"]


def remaining_bytes(db: Database, after: str) -> int:
    with db.read() as conn:
        return int(conn.execute(select(func.coalesce(func.sum(file_instances.c.size), 0))
                                .where(file_instances.c.id > after)).scalar_one())


def _holders(db: Database, file_id: str) -> dict[str, Any] | None:
    """Where the file is used (buckets with keys, record and deposit ids); None once its row is gone."""
    with db.read() as conn:
        if conn.execute(select(file_instances.c.id).where(file_instances.c.id == file_id)).first() is None:
            return None
        used = [dict(r) for r in conn.execute(
            select(objects.c.bucket_id, objects.c.key).where(objects.c.file_id == file_id)
            .order_by(objects.c.bucket_id)).mappings()]
        bucket_ids = [u["bucket_id"] for u in used]
        recids = sorted(conn.execute(select(records.c.id).where(records.c.bucket_id.in_(bucket_ids))).scalars())
        depids = sorted(conn.execute(select(deposits.c.id).where(deposits.c.bucket_id.in_(bucket_ids))).scalars())
    return {"objects": [{"bucket": u["bucket_id"], "key": u["key"]} for u in used], "records": recids,
            "deposits": depids}


def _hash(store: FileStore, uri: str, throttle: Throttle, on_bytes: Callable[[int], object]) -> tuple[int, str, str]:
    """Size, MD5 and SHA-256 of the stored bytes as the store streams them (the directory or the object store)."""
    md5, sha256 = hashlib.md5(usedforsecurity=False), hashlib.sha256()
    size = 0
    for chunk in store.read(uri):
        md5.update(chunk)
        sha256.update(chunk)
        size += len(chunk)
        on_bytes(len(chunk))
        throttle.took(len(chunk))
    return size, md5.hexdigest(), sha256.hexdigest()


def check_file(db: Database, store: FileStore, row: dict[str, Any], throttle: Throttle,
               on_bytes: Callable[[int], object]) -> list[dict[str, Any]]:
    """The problems of one stored file (none when its bytes are what its row says)."""
    base = {"file_id": row["id"], "uri": row["uri"]}
    try:
        size, md5, sha256 = _hash(store, row["uri"], throttle, on_bytes)
    except FileNotFoundError:
        holders = _holders(db, row["id"])
        if holders is None:  # deleted since the batch was read: not a problem
            return []
        return [{**base, "problem": "missing", "expected": row["size"], "actual": None, **holders}]
    found = []
    if size != row["size"]:
        found.append({**base, "problem": "size", "expected": row["size"], "actual": size})
    if "md5:" + md5 != row["checksum"]:
        found.append({**base, "problem": "md5", "expected": row["checksum"], "actual": "md5:" + md5})
    if row["sha256"] is not None and sha256 != row["sha256"]:
        found.append({**base, "problem": "sha256", "expected": row["sha256"], "actual": sha256})
    if found:
        holders = _holders(db, row["id"])
        if holders is None:
            return []
        found = [{**problem, **holders} for problem in found]
    return found


def run_pass(db: Database, store: FileStore, state_path: str, rate: int, restart: bool = False,
             max_files: int | None = None, on_bytes: Callable[[int], object] = lambda n: None,
             throttle: Throttle | None = None) -> Progress:
    """Check the files after the saved position (all of them with `restart` or without a state), at most
    `max_files` of them in this run; returns the progress, `complete` once every file was checked (the state file
    is then removed, so the next run starts a new pass)."""
    progress = None if restart else load_state(state_path)
    if progress is None:
        progress = Progress(started=isoformat(utcnow()) or "")
    else:
        progress.resumed = True
    throttle = throttle or Throttle(rate)
    done_now = 0
    for batch in batches(db, progress.after):
        for row in batch:
            if max_files is not None and done_now >= max_files:
                save_state(state_path, progress)
                return progress
            progress.problems.extend(check_file(db, store, row, throttle, on_bytes))
            progress.after = row["id"]
            progress.checked += 1
            progress.bytes += row["size"]
            done_now += 1
            save_state(state_path, progress)
    progress.complete = True
    try:
        os.unlink(state_path)
    except FileNotFoundError:
        pass
    return progress
