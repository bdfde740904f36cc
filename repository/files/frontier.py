"""The hash frontier of a multipart upload (repository.files.multipart): the MD5 and SHA-256 of the whole file,
advanced over the parts recorded contiguously from the start as they arrive, so that complete only hashes what is
left instead of re-reading the whole file (seconds a GiB).

Saved in the upload's directory as `hash.state` (the bytes hashed from the start and both hash states, through
repository.files.resumable), replaced whole after each part hashed: a restart goes on from it, and a lost or torn
state only means hashing again from the start. One process at a time moves it, holding `hash.lock` (flock, which
holds between threads as between processes); one that finds it taken leaves, and the holder looks again after
letting go, so a part recorded meanwhile is not missed. A part re-sent after it was hashed resets it. Where
libcrypto's contexts are not usable (`resumable.available()`), complete hashes the whole file as before."""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError

from repository.files import resumable
from repository.storage import Database
from repository.storage.tables.multipart import multipart_parts

HASH_CHUNK = 4 * 1024 * 1024
DATA = "data"  # the upload's bytes, in its directory
HASH_STATE = "hash.state"
HASH_LOCK = "hash.lock"

log = logging.getLogger("repository.files.frontier")


class _Hasher(Protocol):
    def update(self, data: bytes, /) -> None: ...

    def hexdigest(self) -> str: ...


def _hash_range(path: str, start: int, end: int, md5: _Hasher, sha256: _Hasher,
                at_part: Callable[[int], None] | None = None, part_size: int = 0) -> None:
    """Feed bytes `start`..`end` of the file to both hashes, the SHA-256 in a second thread (hashlib and libcrypto
    through ctypes release the GIL: the time of the slower of the two, not their sum); `at_part(offset)` is called
    at each part boundary reached."""
    with open(path, "rb", buffering=0) as source, ThreadPoolExecutor(1) as pool:
        source.seek(start)
        offset = start
        while offset < end:
            boundary = min(end, (offset // part_size + 1) * part_size) if part_size else end
            chunk = source.read(min(HASH_CHUNK, boundary - offset))
            if not chunk:
                raise OSError(f"{path} is shorter than {end} bytes")
            pending = pool.submit(sha256.update, chunk)
            md5.update(chunk)
            pending.result()
            offset += len(chunk)
            if at_part is not None and offset == boundary:
                at_part(offset)


def _hash_file(path: str) -> tuple[str, str]:
    """(MD5 hex, SHA-256 hex) of the whole file (where the frontier cannot be kept: see repository.files.resumable)."""
    md5, sha256 = hashlib.md5(usedforsecurity=False), hashlib.sha256()
    _hash_range(path, 0, os.path.getsize(path), md5, sha256)
    return md5.hexdigest(), sha256.hexdigest()


class _HashLock:
    """The flock that one hasher of the upload's frontier holds (between threads as between processes)."""

    def __init__(self, directory: str) -> None:
        self.fd = os.open(os.path.join(directory, HASH_LOCK), os.O_RDWR | os.O_CREAT, 0o600)

    def acquire(self, blocking: bool) -> bool:
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(self.fd)
            return False
        return True

    def release(self) -> None:
        os.close(self.fd)


def _frontier(directory: str, saved: bytes | None = None) -> tuple[int, resumable.Hash, resumable.Hash]:
    """The saved frontier (bytes hashed from the start, and both hash states), or a fresh one; from `saved`, the
    state file's bytes, when the caller has read them already."""
    return resumable.load(_saved(directory) if saved is None else saved) or (
        0, resumable.Hash("md5"), resumable.Hash("sha256"))


def _save_frontier(directory: str, offset: int, md5: resumable.Hash, sha256: resumable.Hash) -> None:
    """Written whole then renamed: a crash leaves the old frontier or the new one (not fsynced: a frontier lost
    with the page cache only means hashing again from an earlier point)."""
    tmp = os.path.join(directory, HASH_STATE + ".tmp")
    with open(tmp, "wb") as out:
        out.write(resumable.dump(offset, md5, sha256))
    os.replace(tmp, os.path.join(directory, HASH_STATE))


def _saver(directory: str, md5: resumable.Hash, sha256: resumable.Hash) -> Callable[[int], None]:
    def save(offset: int) -> None:
        _save_frontier(directory, offset, md5, sha256)
    return save


def _recorded(db: Database, upload_id: str) -> set[int]:
    with db.read() as conn:
        return set(conn.execute(select(multipart_parts.c.part_number)
                                .where(multipart_parts.c.upload_id == upload_id)).scalars())


def _next_part(row: dict, offset: int) -> int | None:
    """The part that starts at `offset` (the frontier only ever stops at a part's start), None at the end."""
    return None if offset >= row["size"] else offset // row["part_size"]


def _part_end(row: dict, number: int) -> int:
    return min((number + 1) * row["part_size"], row["size"])


def advance(db: Database, directory: str, row: dict) -> None:
    """Move the upload's hash frontier over the parts recorded right after it, while their bytes are likely still
    in the page cache, so that complete only hashes what is left. Whoever holds the frontier's lock does the work;
    a caller that finds it taken leaves: the holder looks again after letting go, so a part recorded meanwhile is
    not missed. A failure here only leaves more for complete to hash."""
    if not resumable.available():
        return
    try:
        while True:
            lock = _HashLock(directory)
            if not lock.acquire(blocking=False):
                return
            try:
                offset, md5, sha256 = _frontier(directory)
                have = _recorded(db, row["id"])
                end = offset
                while (number := _next_part(row, end)) is not None and number in have:
                    end = _part_end(row, number)
                if end > offset:
                    _hash_range(os.path.join(directory, DATA), offset, end, md5, sha256,
                                _saver(directory, md5, sha256), row["part_size"])
            finally:
                lock.release()
            offset = _frontier(directory)[0]
            following = _next_part(row, offset)
            if following is None or following not in _recorded(db, row["id"]):
                return
    except (OSError, SQLAlchemyError) as exc:  # aborted meanwhile, a full disk for the state file, a lost database
        log.info("hash frontier of multipart upload %s not advanced: %s", row["id"], exc)


class Inline:
    """The frontier carried over a part as its bytes arrive, for a part that starts right where the frontier
    stands (the first part, and parts sent in order once the ones before are hashed): its bytes are hashed as they
    are written instead of read back from the page cache after they land, and the last part of an upload no
    longer leaves its whole length to hash before the answer (a single core's MD5 after the transfer).

    Taken without the frontier's lock: `keep` saves the result only if the saved frontier is still byte for byte
    the one this started from. Anyone who moved it meanwhile (a hasher that read the part back once it was recorded)
    or reset it (an earlier part re-sent, `forget_from`) wins, and the bytes hashed here are simply dropped, so a
    frontier never holds bytes other than those stored."""

    def __init__(self, directory: str, saved: bytes, md5: resumable.Hash, sha256: resumable.Hash) -> None:
        self.directory, self.saved, self.md5, self.sha256 = directory, saved, md5, sha256

    @classmethod
    def at(cls, directory: str, offset: int) -> Inline | None:
        """An inline frontier for a part starting at `offset`, or None when the frontier stands elsewhere."""
        if not resumable.available():
            return None
        saved = _saved(directory)
        at, md5, sha256 = _frontier(directory, saved)
        return cls(directory, saved, md5, sha256) if at == offset else None

    @property
    def hashes(self) -> tuple[resumable.Hash, resumable.Hash]:
        return self.md5, self.sha256

    def keep(self, end: int) -> None:
        """Save the frontier at `end` (the part's bytes all hashed, the part recorded, its lock still held)."""
        try:
            lock = _HashLock(self.directory)
            if not lock.acquire(blocking=False):
                return  # a hasher at work: it reads the part back, as it would have without this
            try:
                if _saved(self.directory) == self.saved:
                    _save_frontier(self.directory, end, self.md5, self.sha256)
            finally:
                lock.release()
        except OSError as exc:  # aborted meanwhile, a full disk for the state file
            log.info("hash frontier in %s not kept: %s", self.directory, exc)


def _saved(directory: str) -> bytes:
    """The saved frontier's bytes as they are (empty: none yet, or removed by `forget_from`)."""
    try:
        with open(os.path.join(directory, HASH_STATE), "rb") as source:
            return source.read()
    except FileNotFoundError:
        return b""


def forget_from(directory: str, offset: int) -> None:
    """Before a part already recorded is overwritten: a frontier past its start hashed the old bytes, so it starts
    again from zero (rare: clients re-send the parts missing from the listing, which were never hashed)."""
    lock = _HashLock(directory)
    lock.acquire(blocking=True)
    try:
        if _frontier(directory)[0] > offset:
            os.unlink(os.path.join(directory, HASH_STATE))
    finally:
        lock.release()


def finish(directory: str, row: dict) -> tuple[str, str]:
    """(MD5 hex, SHA-256 hex) of the whole upload: the frontier's states fed with the bytes past it."""
    data = os.path.join(directory, DATA)
    if not resumable.available():
        return _hash_file(data)
    lock = _HashLock(directory)
    lock.acquire(blocking=True)  # a hasher still at work finishes its part first
    try:
        offset, md5, sha256 = _frontier(directory)
        _hash_range(data, offset, row["size"], md5, sha256,
                    _saver(directory, md5, sha256), row["part_size"])
        return md5.hexdigest(), sha256.hexdigest()
    finally:
        lock.release()
