"""The sweep of the file store: files no row points at (crashed or abandoned uploads) removed once old enough, one
process at a time across every process sharing the store."""

from __future__ import annotations

import fcntl
import logging
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from sqlalchemy import Connection, select

from repository.files.store import CACHE_DIR, MULTIPART_DIR, TMP_DIR, FileStore, file_uri
from repository.storage import Database
from repository.storage.tables.files import file_instances
from repository.storage.tables.multipart import multipart_uploads

ORPHAN_AGE_SECONDS = 3600
SWEEP_BATCH = 500  # files looked up per query by the sweep
# In the store's root, shared by every process that sweeps it: its modification time is when the last complete sweep
# started, and the process sweeping holds an flock on it (the kernel releases it if that process dies).
SWEEP_STAMP = ".swept"

log = logging.getLogger("repository.files.sweeper")


def sweep(store: FileStore, conn: Connection, min_age: float = ORPHAN_AGE_SECONDS) -> int:
    """Remove the files older than `min_age` seconds that no row points at; returns a count. They are the
    temporary files of uploads that crashed or were abandoned, and files written just before a commit that
    never happened. An upload in progress writes its temporary file at every chunk, and a file is recorded
    moments after it is renamed into place, so neither is ever that old. Memory stays flat: rows are looked
    up by file id in batches, each in a short transaction."""
    cutoff = time.time() - min_age
    removed = 0
    batch: list[tuple[str, str]] = []
    for directory, dirs, names in os.walk(store.root):
        temporary = os.path.relpath(directory, store.root) == TMP_DIR
        if temporary and MULTIPART_DIR in dirs:
            dirs.remove(MULTIPART_DIR)  # multipart uploads live as long as their rows say (multipart.sweep)
        if temporary and CACHE_DIR in dirs:
            dirs.remove(CACHE_DIR)  # an object store's local copies: pruned by the store (no orphans of their own)
        if directory == store.root and SWEEP_STAMP in names:
            names.remove(SWEEP_STAMP)  # the sweepers' own stamp (sweep_turn), not a stored file
        for name in names:
            path = os.path.join(directory, name)
            if not _older_than(path, cutoff):
                continue
            if temporary or store.kind != "local":  # never recorded: a row is written only after the rename into place
                removed += _swept(path)
                continue
            batch.append((os.path.relpath(path, store.root), path))
            if len(batch) >= SWEEP_BATCH:
                removed += _sweep_batch(conn, batch, cutoff)
                batch = []
    removed += _sweep_batch(conn, batch, cutoff) if batch else 0
    if store.kind == "local":
        return removed
    # An object store (repository.files.s3store): the walk above saw its staging area and cached copies (all of
    # them temporary); the stored files are the bucket's objects, listed page by page.
    return removed + _sweep_objects(store, conn, cutoff)


def _sweep_objects(store: FileStore, conn: Connection, cutoff: float) -> int:
    """Remove the objects older than `cutoff` that no row points at, and abort the store's multipart uploads
    started before it (a PUT whose process died: nothing of it is visible, but its parts take room)."""
    store.prune_cache(cutoff)
    # The multipart protocol's own S3 uploads live as long as their rows say (repository.files.objectparts).
    keep = frozenset(conn.execute(select(multipart_uploads.c.store_upload_id)
                                  .where(multipart_uploads.c.store_upload_id.is_not(None))).scalars())
    conn.rollback()
    removed = store.abort_stale_uploads(cutoff, keep)
    batch: list[str] = []
    for uri, modified in store.stored():
        if modified > cutoff:
            continue
        batch.append(uri)
        if len(batch) >= SWEEP_BATCH:
            removed += _sweep_object_batch(store, conn, batch)
            batch = []
    return removed + (_sweep_object_batch(store, conn, batch) if batch else 0)


def _sweep_object_batch(store: FileStore, conn: Connection, batch: list[str]) -> int:
    ids = [os.path.basename(uri) for uri in batch]
    known = set(conn.execute(select(file_instances.c.uri).where(file_instances.c.id.in_(ids))).scalars())
    # An object a multipart complete assembled but could not record yet: a complete sent again records it.
    known.update(file_uri(file_id) for file_id in conn.execute(
        select(multipart_uploads.c.file_id).where(multipart_uploads.c.file_id.in_(ids),
                                                  multipart_uploads.c.completed.is_(None))).scalars())
    conn.rollback()
    gone = [uri for uri in batch if uri not in known]
    for uri in gone:
        store.remove(uri)
    return len(gone)


@contextmanager
def sweep_turn(store: FileStore, interval: float) -> Iterator[float | None]:
    """Whether this process is to sweep now, across every process sharing the store: yields None when it is
    (the caller sweeps inside the block; the stamp records it when the block ends without an error), else the
    seconds until a sweep may be due. Not due while another process sweeps (it holds the stamp's flock) or
    less than `interval` seconds after the start of the last complete sweep. A sweep that failed or was
    killed leaves the stamp as it was, so the next caller sweeps; a store where flock fails sweeps as before."""
    path = os.path.join(store.root, SWEEP_STAMP)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield float(interval)  # another process is sweeping now
            return
        except OSError as exc:  # no locks on this file system: every process sweeps, as without the stamp
            log.warning("no lock on %s (%s): sweeping without coordination", path, exc)
        stamp = os.fstat(fd)
        started = time.time()
        since = started - stamp.st_mtime
        # The stamp holds a byte once a sweep completed (a stamp just created has a fresh time, nothing else).
        if stamp.st_size and 0 <= since < interval:
            yield interval - since
            return
        yield None
        if not stamp.st_size:
            os.write(fd, b"1")
        os.utime(fd, (started, started))
    finally:
        os.close(fd)  # also releases the flock


class Sweeper:
    """The background worker's sweep of the store, at most every `interval` seconds (the first call sweeps):
    one of its periodic tasks in both shapes (the thread of each server process, and scripts/worker.py)."""

    def __init__(self, db: Database, store: FileStore, interval: float, min_age: float,
                 also: Callable[[Database, FileStore, float], int] | None = None) -> None:
        """`also(db, store, min_age)` runs in the same pass (the expired multipart uploads); it returns a count."""
        self.db, self.store, self.interval, self.min_age, self.also = db, store, interval, min_age, also
        self._due = 0.0

    def __call__(self) -> int:
        now = time.monotonic()
        if now < self._due:
            return 0
        self._due = now + self.interval
        # Every server process runs this worker: the stamp makes it one sweep per interval for all of them, not
        # one per process at each start (a walk of every stored file: a quarter of the CPU of a starting server).
        with sweep_turn(self.store, self.interval) as wait:
            if wait is not None:
                self._due = now + wait
                return 0
            with self.db.read() as conn:
                removed = sweep(self.store, conn, self.min_age)
            if self.also is not None:
                removed += self.also(self.db, self.store, self.min_age)
        if removed:
            log.info("swept %d orphan file(s) older than %d s from %s", removed, self.min_age, self.store.root)
        return removed


def _older_than(path: str, cutoff: float) -> bool:
    try:
        return os.path.getmtime(path) <= cutoff
    except FileNotFoundError:  # renamed into place or removed meanwhile
        return False


def _swept(path: str) -> int:
    try:
        os.unlink(path)
    except FileNotFoundError:
        return 0
    return 1


def _sweep_batch(conn: Connection, batch: list[tuple[str, str]], cutoff: float) -> int:
    """Remove the files of `batch` ((uri, path) pairs) that no row points at; a file's name is its id."""
    ids = [os.path.basename(uri) for uri, _path in batch]
    query = select(file_instances.c.uri).where(file_instances.c.id.in_(ids))
    known = set(conn.execute(query).scalars())
    conn.rollback()  # no transaction held open while the disk is walked
    return sum(_swept(path) for uri, path in batch if uri not in known and _older_than(path, cutoff))
