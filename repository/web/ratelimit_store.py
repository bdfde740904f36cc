"""Rate-limit counters shared by every server process on the machine, without a server: a `limits` storage
(`file:///path`, the embedded shape's default under INSTANCE_PATH) over a memory-mapped file.

The file is a hash table of fixed-size slots `(key digest, count, expires)` after a small header, probed linearly
from the digest. Every operation holds an exclusive `flock` on the file (processes) and a thread lock (threads of
one process, which share the descriptor), so concurrent hits are never lost. An expired slot is reused; when a
key's neighbourhood is full the table is rebuilt from its live counters, twice as large when more than half of it
is live. Measured against a SQLite file (WAL, synchronous=OFF) doing the same work, it costs about a third as
much per request, and a sixth when three processes collide, where SQLite's busy handler sleeps
(docs/architecture/decisions.md#rate-limit-counters-in-a-shared-file).
Supports the fixed-window strategy (ours); Redis stays the choice when several machines share the limits.

Every block of the file is allocated (posix_fallocate) when it is made or grown: a write through the map into a hole
the disk cannot fill would kill the process with SIGBUS. A table that cannot be made or grown for lack of space is
an OSError instead, which the limiter answers by counting in memory for a while (repository/web/ratelimit.py); a
file that cannot be made at start-up is made at the first use that finds room.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import hashlib
import logging
import mmap
import os
import struct
import threading
import time
import weakref
from urllib.parse import unquote, urlsplit

from limits.errors import ConfigurationError
from limits.storage import Storage

MAGIC = b"RLCOUNT1"
HEADER = struct.Struct("<8sQ")  # magic, number of slots
HEADER_SIZE = 64
SLOT = struct.Struct("<16sqd")  # blake2b-128 digest of the key, count, expiry (unix time)
EMPTY = bytes(16)
INITIAL_SLOTS = 16_384  # 512 KiB
MAX_SLOTS = 1 << 22  # 128 MiB: beyond, a full neighbourhood evicts a counter instead of growing
PROBE = 32  # a key lives within PROBE slots of its home slot
DIGESTS = 50_000
NO_ROOM = (errno.ENOSPC, errno.EDQUOT)
log = logging.getLogger("repository.web.ratelimit")


def path_of(uri: str) -> str:
    """The file named by `file:///absolute/path`."""
    parts = urlsplit(uri)
    path = unquote(parts.netloc + parts.path)
    if not path or path.endswith("/"):
        raise ValueError("expected file:///path/to/ratelimit.counters")
    return path


# The lock is taken by flock(2) called with the GIL held (ctypes.PyDLL): fcntl.flock releases the GIL around the
# call, and getting it back after taking the lock can wait for another thread's whole switch interval (5 ms) while
# every other process waits on the file lock. Measured under load, that convoy took the ceiling endpoint with
# limits on from about 0.85 of the ceiling with limits off down to 0.63. Unlocking may release the GIL: the lock
# is free by then.
_flock = ctypes.PyDLL(None).flock


def _lock(fd: int) -> None:
    """Take the exclusive lock without blocking the process: retry, letting other threads run, while it is held."""
    tries = 0
    while _flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB) != 0:
        try:  # the same call through fcntl, for a proper OSError when the failure is not "held by another"
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        tries += 1
        time.sleep(0 if tries < 50 else 0.0002)


def _unlock(fd: int) -> None:
    fcntl.flock(fd, fcntl.LOCK_UN)


_digests: dict[str, bytes] = {}  # the same clients come back: their keys' digests, up to DIGESTS of them


def _digest(key: str) -> bytes:
    found = _digests.get(key)
    if found is None:
        if len(_digests) >= DIGESTS:
            _digests.clear()
        found = _digests[key] = hashlib.blake2b(key.encode(), digest_size=16).digest()
    return found


def _allocate(fd: int, size: int, new_size: int) -> None:
    """Make the file of `size` bytes `new_size` long with every block allocated; on failure (OSError, ENOSPC on a
    full disk) it is left at `size`."""
    try:
        os.posix_fallocate(fd, 0, new_size)
    except OSError:
        os.ftruncate(fd, size)
        raise


class FileStorage(Storage):
    """Fixed-window counters in a memory-mapped file shared by the processes of one machine."""

    STORAGE_SCHEME = ["file"]
    _fd = -1  # until the file is open (close() may run on a half-built instance)
    _map: mmap.mmap | None = None

    def __init__(self, uri: str, wrap_exceptions: bool = False, **options: float | str | bool) -> None:
        super().__init__(uri, wrap_exceptions=wrap_exceptions, **options)
        self.path = path_of(uri)
        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        self._lock = threading.Lock()
        self._slots = 0
        self._open_if_room()
        # A forked child must not share the parent's descriptor (an flock would then exclude nobody).
        ref = weakref.ref(self)

        def reopen() -> None:
            if (storage := ref()) is not None:
                storage._reopen_after_fork()

        os.register_at_fork(after_in_child=reopen)

    @property
    def base_exceptions(self) -> tuple[type[Exception], ...]:
        return (OSError, ValueError, struct.error)

    def close(self) -> None:
        """Unmap and close the file (also when the storage is garbage-collected, e.g. an app built by a test)."""
        if self._map is not None:
            self._map.close()
            self._map = None
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __del__(self) -> None:
        self.close()

    # -- the file ---------------------------------------------------------------------------------------------
    def _open_if_room(self) -> None:
        """Open the file; on a full disk, leave it to the first use (which raises OSError until there is room)."""
        try:
            self._open()
        except OSError as exc:
            if exc.errno not in NO_ROOM:
                raise
            log.warning("rate-limit counters: no room for %s (%s); trying again at each use", self.path, exc)

    def _open(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # two processes starting together: one creates the table
            if os.fstat(fd).st_size == 0:
                _allocate(fd, 0, HEADER_SIZE + INITIAL_SLOTS * SLOT.size)
                os.pwrite(fd, HEADER.pack(MAGIC, INITIAL_SLOTS), 0)
            head = os.pread(fd, HEADER.size, 0)
            magic, slots = HEADER.unpack(head) if len(head) == HEADER.size else (b"", 0)
            size = HEADER_SIZE + slots * SLOT.size
            if magic != MAGIC or os.fstat(fd).st_size != size:
                raise ConfigurationError(f"{self.path} is not a rate-limit counter file: remove it or name another")
            _allocate(fd, size, size)  # a file an older version left sparse gets its blocks too
            self._fd = fd
            self._remap(slots)
            fcntl.flock(fd, fcntl.LOCK_UN)
        except BaseException:
            os.close(fd)  # also releases the flock
            raise

    def _reopen_after_fork(self) -> None:
        self._lock = threading.Lock()
        self.close()
        self._open()

    def _remap(self, slots: int) -> mmap.mmap:
        """Map the file at its size for `slots` counters; the new map."""
        if self._map is not None:
            self._map.close()
        self._map = mmap.mmap(self._fd, HEADER_SIZE + slots * SLOT.size)
        self._slots = slots
        return self._map

    def _acquire(self) -> mmap.mmap:
        self._lock.acquire()
        try:
            if self._fd < 0:  # not made yet (a full disk at start-up): OSError while there is still no room
                self._open()
            _lock(self._fd)
        except BaseException:
            self._lock.release()
            raise
        assert self._map is not None
        slots = HEADER.unpack_from(self._map, 0)[1]
        if slots != self._slots:  # another process grew the table
            self._remap(slots)
        return self._map

    def _release(self) -> None:
        _unlock(self._fd)
        self._lock.release()

    # -- the table (callers hold the locks) -------------------------------------------------------------------
    def _find(self, table: mmap.mmap, digest: bytes, now: float) -> tuple[int, int, float, int]:
        """(slot of the key or -1, its count, its expiry, the first free or expired slot of the neighbourhood or -1)."""
        home = int.from_bytes(digest[:8], "little") % self._slots
        free = -1
        for step in range(PROBE):
            index = (home + step) % self._slots
            found, count, expires = SLOT.unpack_from(table, HEADER_SIZE + index * SLOT.size)
            if found == digest:
                return index, count, expires, free
            if found == EMPTY:
                return -1, 0, 0.0, free if free >= 0 else index
            if expires <= now and free < 0:
                free = index
        return -1, 0, 0.0, free

    def _live(self, table: mmap.mmap, key: str, now: float) -> tuple[int, float]:
        index, count, expires, _ = self._find(table, _digest(key), now)
        return (count, expires) if index >= 0 and expires > now else (0, now)

    def _rebuild(self, table: mmap.mmap, now: float) -> mmap.mmap:
        """Keep the live counters only, in a table twice as large when more than half of it would be live."""
        live = []
        for index in range(self._slots):
            entry = SLOT.unpack_from(table, HEADER_SIZE + index * SLOT.size)
            if entry[0] != EMPTY and entry[2] > now:
                live.append(entry)
        slots = self._slots
        while len(live) * 2 > slots and slots < MAX_SLOTS:
            slots *= 2
        if slots != self._slots:  # OSError, the table unchanged, when the disk has no room for the larger one
            _allocate(self._fd, HEADER_SIZE + self._slots * SLOT.size, HEADER_SIZE + slots * SLOT.size)
            table = self._remap(slots)
            table[:HEADER.size] = HEADER.pack(MAGIC, slots)
        table[HEADER_SIZE:] = bytes(slots * SLOT.size)
        for digest, count, expires in live:
            _, _, _, free = self._find(table, digest, now)
            if free >= 0:  # at MAX_SLOTS a crowded neighbourhood drops a counter: that client starts afresh
                SLOT.pack_into(table, HEADER_SIZE + free * SLOT.size, digest, count, expires)
        return table

    # -- the limits Storage interface -------------------------------------------------------------------------
    def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        """Add `amount` to the counter (a new window of `expiry` seconds when it has expired); its new value."""
        return self.incr_window(key, expiry, amount)[0]

    def incr_window(self, key: str, expiry: int, amount: int = 1) -> tuple[int, float]:
        """`incr`, also giving the end of the counter's window (what `get_expiry` would say), in one locked step."""
        return self.incr_windows([(key, expiry)], amount)[0]

    def incr_windows(self, keys: list[tuple[str, int]], amount: int = 1) -> list[tuple[int, float]]:
        """`incr_window` of several (key, expiry) counters (a request's limits) in one locked step."""
        digests = [(_digest(key), expiry) for key, expiry in keys]
        self._acquire()
        try:
            now = time.time()
            return [self._incr(digest, expiry, amount, now) for digest, expiry in digests]
        finally:
            self._release()

    def _incr(self, digest: bytes, expiry: int, amount: int, now: float) -> tuple[int, float]:
        """Count one hit (the caller holds the locks)."""
        table = self._map
        assert table is not None
        index, count, expires, free = self._find(table, digest, now)
        if index < 0 or expires <= now:
            count, expires = 0, now + expiry
            if index < 0:
                if free < 0:
                    table = self._rebuild(table, now)  # may remap: later counters of the step use self._map
                    free = self._find(table, digest, now)[3]
                    if free < 0:  # the table is at its largest and this neighbourhood is full
                        free = int.from_bytes(digest[:8], "little") % self._slots
                index = free
        count += amount
        SLOT.pack_into(table, HEADER_SIZE + index * SLOT.size, digest, count, expires)
        return count, expires

    def get(self, key: str) -> int:
        table = self._acquire()
        try:
            return self._live(table, key, time.time())[0]
        finally:
            self._release()

    def get_expiry(self, key: str) -> float:
        table = self._acquire()
        try:
            return self._live(table, key, time.time())[1]
        finally:
            self._release()

    def check(self) -> bool:
        try:
            self._acquire()
        except OSError:
            return False
        self._release()
        return True

    def reset(self) -> int | None:
        table = self._acquire()
        try:
            cleared = sum(1 for index in range(self._slots)
                          if SLOT.unpack_from(table, HEADER_SIZE + index * SLOT.size)[0] != EMPTY)
            table[HEADER_SIZE:] = bytes(self._slots * SLOT.size)
            return cleared
        finally:
            self._release()

    def clear(self, key: str) -> None:
        digest = _digest(key)
        table = self._acquire()
        try:
            index = self._find(table, digest, time.time())[0]
            if index >= 0:  # expired, not emptied: the probe chains through it stay intact
                SLOT.pack_into(table, HEADER_SIZE + index * SLOT.size, digest, 0, 0.0)
        finally:
            self._release()
