"""The embedded engine's write lock as a lease: one process at a time writes (tantivy allows one IndexWriter per
index), and it keeps its writers open for a moment after its last commit.

A commit can start a merge of segments, and an IndexWriter dropped during a merge abandons it (the work is lost and
redone at the next commit), so a writer must stay open until its merges end. Waiting for them right after the
commit put a merge (up to seconds on a large index) on the request path. Instead the lease lingers: writes of this
process during the next `linger` seconds reuse the open writers, and a finisher thread ends the lease when the
writers have been idle that long, or at once when another process asks for the lock (it touches `writer.wanted`
while it waits); only then does it wait for the merges still running, off any request.
"""

from __future__ import annotations

import atexit
import fcntl
import logging
import os
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import tantivy

from repository.errors import ServiceUnavailable

LOCK, WANTED = "writer.lock", "writer.wanted"
POLL_SECONDS = 0.005

log = logging.getLogger("repository.search")


class WriterLease:
    """The cross-process write lock of an index root and the IndexWriters opened under it."""

    def __init__(self, root: Path, lock_timeout: float = 30.0, linger: float = 1.0) -> None:
        self.root, self.lock_timeout, self.linger = root, lock_timeout, linger
        self._mutex = threading.RLock()  # one writing thread per process; the finisher takes it to end the lease
        self._handle: IO[bytes] | None = None
        self._since = 0  # wall-clock ns when the lock was taken: a later touch of WANTED is a request for it
        self._depth = 0  # nesting of `held` in the writing thread
        self._last = 0.0  # monotonic time the last write ended
        self._writers: dict[str, tantivy.IndexWriter] = {}
        self._finisher: threading.Thread | None = None
        _LEASES.add(self)

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold the lock (waiting for it, 503 after `lock_timeout`) for one write; reentrant within a thread."""
        with self._mutex:
            if self._handle is None:
                self._handle = self._acquire()
                self._since = time.time_ns()
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                self._last = time.monotonic()
                if self._depth == 0:
                    if self._writers:
                        self._linger()
                    else:
                        self._release()

    def writer(self, name: str, index: tantivy.Index, heap_size: int) -> tantivy.IndexWriter:
        """The open writer of index `name` (inside `held`), created on first use."""
        writer = self._writers.get(name)
        if writer is None:
            writer = self._writers[name] = index.writer(heap_size=heap_size, num_threads=1)
        return writer

    def discard(self, name: str) -> None:
        """Roll back and drop the writer of `name` after a failed write (inside `held`)."""
        writer = self._writers.pop(name, None)
        if writer is not None:
            try:
                writer.rollback()
            finally:
                writer.wait_merging_threads()

    def close(self, name: str) -> None:
        """Finish the writer of `name` (its merges end first), before its directory goes (inside `held`)."""
        writer = self._writers.pop(name, None)
        if writer is not None:
            writer.wait_merging_threads()

    def end(self) -> None:
        """Give the lock up now (once the open writers' merges have ended), unless this thread is writing."""
        with self._mutex:
            if self._handle is not None and not self._depth:
                self._release()

    # --- the lock ----------------------------------------------------------------------------------
    def _acquire(self) -> IO[bytes]:
        handle = open(self.root / LOCK, "a+b")  # noqa: SIM115 - kept open for the lease, closed in _release
        deadline = time.monotonic() + self.lock_timeout
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return handle
            except BlockingIOError:
                if time.monotonic() > deadline:
                    handle.close()
                    raise ServiceUnavailable("The search index is busy; try again.") from None
                (self.root / WANTED).touch()  # the holder's finisher ends its lease when it sees this
                time.sleep(POLL_SECONDS)

    def _wanted(self) -> bool:
        try:
            return (self.root / WANTED).stat().st_mtime_ns > self._since
        except FileNotFoundError:
            return False

    def _linger(self) -> None:
        if self._finisher is None:
            self._finisher = threading.Thread(target=self._finish, name="index-writer-lease", daemon=True)
            self._finisher.start()

    def _finish(self) -> None:
        while True:
            time.sleep(POLL_SECONDS)
            with self._mutex:  # a write in progress holds it: the finisher waits for the write to end
                if self._handle is not None and time.monotonic() - self._last < self.linger and not self._wanted():
                    continue
                self._finisher = None
                if self._handle is not None:
                    self._release()
                return

    def _release(self) -> None:
        """Wait for the merges of the open writers (so none is abandoned), close them, unlock."""
        writers, self._writers = self._writers, {}
        for name, writer in writers.items():
            try:
                writer.wait_merging_threads()
            except Exception:  # noqa: BLE001 - a failed merge leaves the committed index as it was
                log.exception("merging segments of %s failed", name)
        handle, self._handle = self._handle, None
        if handle is not None:
            fcntl.flock(handle, fcntl.LOCK_UN)
            handle.close()


_LEASES: weakref.WeakSet[WriterLease] = weakref.WeakSet()


def _end_all() -> None:
    for lease in list(_LEASES):
        lease.end()


# A child forked without exec (multiprocessing) inherits this process's open lock files, tantivy's included, and would
# hold the locks on after this process lets go of them: no lease lives across a fork. At exit, merges still running
# finish rather than being abandoned.
os.register_at_fork(before=_end_all)
atexit.register(_end_all)
