"""File contents on disk, addressed by file-instance id (never by user-chosen names): written by streaming (MD5 and
SHA-256 on the way, fsynced, renamed into place), and the store errors mapped to answers (507 on a full disk)."""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, Protocol

from repository.errors import (
    ApiError,
    PayloadTooLarge,
    ServiceUnavailable,
    disk_full,
)

CHUNK = 1024 * 1024  # 1 MiB reads: 64 KiB chunks were measured 2.3x slower for large uploads


TMP_DIR = ".tmp"


MULTIPART_DIR = "multipart"  # under TMP_DIR: one directory per multipart upload (repository.files.multipart)


CACHE_DIR = "cache"  # under TMP_DIR: an object store's local copies of stored files (repository.files.s3store)


log = logging.getLogger("repository.files.store")


class Readable(Protocol):
    """What `FileStore.write` reads from: a request body, a subprocess pipe, a download (`read(n)` only)."""

    def read(self, size: int = -1, /) -> bytes: ...


@dataclass(frozen=True)
class StoredFile:
    """Bytes written to disk but not yet recorded in the database."""

    id: str
    uri: str
    size: int
    checksum: str  # md5:<hex>
    sha256: str | None = None  # hex


class FileStore:
    """File contents under `root`, addressed by file-instance id; never by user-chosen names.

    Every reader and writer of stored bytes goes through these methods, so that an object store can stand in for
    the directory (repository.files.s3store, docs/operators/object-storage.md): `write` and `adopt` store, `size`
    and `read` stream, `path` gives a local file for the readers that need one (previews, data descriptions,
    thumbnails), `remove` deletes, `stored` lists for the orphan sweep. `root` stays a local directory in both:
    the staging area (.tmp) of uploads and the sweep's stamp."""

    kind = "local"

    def __init__(self, root: str) -> None:
        self.root = os.path.abspath(root)
        # Owner-only (files of restricted records are not everyone's), whatever the umask
        os.makedirs(self.root, mode=0o700, exist_ok=True)
        os.makedirs(os.path.join(self.root, TMP_DIR), mode=0o700, exist_ok=True)

    def path(self, uri: str) -> str:
        return os.path.join(self.root, uri)

    def write(self, stream: Readable, limit: int | None = None, durable: bool = True) -> StoredFile:
        """Copy `stream` to a new file (flat memory whatever the size); PayloadTooLarge past `limit` bytes.

        `durable=False` skips the two fsyncs per file: for bulk loads, which call `sync()` once per batch before
        committing the rows that point at the files (thousands of small fsyncs were most of a load's time)."""
        file_id = str(uuid.uuid4())
        uri = file_uri(file_id)
        tmp = os.path.join(self.root, TMP_DIR, file_id)
        final = self.path(uri)
        digest = hashlib.md5(usedforsecurity=False)
        sha256 = hashlib.sha256()
        try:
            with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as out:
                size = copy_stream(stream, out, (digest, sha256), limit)
                out.flush()
                if durable:
                    os.fsync(out.fileno())
            os.makedirs(os.path.dirname(final), mode=0o700, exist_ok=True)
            os.replace(tmp, final)
            if durable:
                fsync_dir(os.path.dirname(final))
        except BaseException as exc:
            for path in (tmp, final):  # nothing is left behind, whichever step failed
                discard(path)
            error = store_error(exc)
            if error is None:
                raise
            log.error("cannot write to the file store %s: %s", self.root, exc)
            raise error from exc
        return StoredFile(file_id, uri, size, "md5:" + digest.hexdigest(), sha256.hexdigest())

    def sync(self) -> None:
        """Flush every file written with `durable=False` (and their directories) to disk: one `sync` instead of
        an fsync per file and directory (Python 3.11 has no `syncfs`; the store's disk is usually the machine's)."""
        os.sync()

    def remove(self, uri: str) -> None:
        unlink_quietly(self.path(uri))

    def discard(self, uri: str) -> None:
        """Remove the file if it can be (after a commit that dropped its row, or cleaning up after a failure)."""
        discard(self.path(uri))

    def size(self, uri: str) -> int:
        """The stored file's length; FileNotFoundError when it is not there."""
        return os.path.getsize(self.path(uri))

    def read(self, uri: str, start: int = 0, length: int | None = None,
             digest: Callable[[bytes], None] | None = None) -> Iterator[bytes]:
        """`length` bytes (all, when None) from `start`, in chunks; opened at the first one (a stream never read
        opens nothing); `digest` sees each chunk. The kernel is told the file is read in order
        (`POSIX_FADV_SEQUENTIAL`: a larger read-ahead, so a cold disk is read while the chunk before is sent).
        Measured (bench/archive_bench.py, files evicted from the page cache, idle 2-core VM): 1.06-1.08 GB/s with
        a WILLNEED advice every 4 MiB, 1.26-1.36 with no advice, 1.32-1.40 with this one."""
        with open(self.path(uri), "rb") as handle:
            if hasattr(os, "posix_fadvise"):  # not on macOS
                os.posix_fadvise(handle.fileno(), start, length or 0, os.POSIX_FADV_SEQUENTIAL)
            handle.seek(start)
            left = -1 if length is None else length
            while left != 0 and (chunk := handle.read(CHUNK if left < 0 else min(CHUNK, left))):
                if left > 0:
                    left -= len(chunk)
                if digest is not None:
                    digest(chunk)
                yield chunk

    def place(self, source: str, uri: str) -> None:
        """Store the local file `source` (checked already: a restored backup's) as `uri`; `source` is consumed."""
        final = self.path(uri)
        os.makedirs(os.path.dirname(final), mode=0o700, exist_ok=True)
        os.replace(source, final)

    def is_empty(self) -> bool:
        """Whether the store holds no file (a restore goes into an empty one); the directory is looked at by the
        restore itself (repository.backup), an object store here."""
        return True

    def adopt(self, source: str, file_id: str) -> str:
        """Store the local file `source` (a completed multipart upload's bytes) as `file_id`; returns its uri.
        Here a rename: no second copy of the bytes."""
        uri = file_uri(file_id)
        final = self.path(uri)
        with open(source, "rb") as handle:
            os.fsync(handle.fileno())
        os.makedirs(os.path.dirname(final), mode=0o700, exist_ok=True)
        os.replace(source, final)
        try:
            fsync_dir(os.path.dirname(final))
        except BaseException:
            os.replace(final, source)
            raise
        return uri

    def unadopt(self, uri: str, source: str) -> None:
        """Undo `adopt` (its rows could not be recorded): the bytes back at `source`, so that it can be retried."""
        try:
            os.replace(self.path(uri), source)
        except OSError:
            self.discard(uri)

    def presigned_url(self, uri: str, name: str, mimetype: str, as_attachment: bool) -> str | None:
        """A short-lived URL that serves the file from the store itself; None where the store has none."""
        return None

    def check(self) -> None:
        """At start-up: nothing to check for a local directory (made by the constructor)."""

    def reachable(self) -> bool:
        """For /readyz: whether the stored files can be reached (a directory's writability is checked there)."""
        return True

    def stored(self) -> Iterator[tuple[str, float]]:
        """The stored files' uris and modification times, for an orphan sweep of an object store; nothing here:
        the sweep walks the directory itself (repository.files.sweeper)."""
        return iter(())

    def prune_cache(self, cutoff: float) -> None:
        """Remove the local copies of stored files made before `cutoff` (an object store's; a directory has none)."""
        directory = os.path.join(self.root, TMP_DIR, CACHE_DIR)
        for name in os.listdir(directory) if os.path.isdir(directory) else ():
            path = os.path.join(directory, name)
            try:
                if os.path.getmtime(path) <= cutoff:
                    os.unlink(path)
            except FileNotFoundError:
                pass

    def abort_stale_uploads(self, cutoff: float, keep: frozenset[str] = frozenset()) -> int:
        """Abort the store's own incomplete uploads started before `cutoff` but those in `keep`; a directory has
        none."""
        return 0



def file_uri(file_id: str) -> str:
    """Where a file instance is kept: two levels of its id's first characters (no directory grows too large)."""
    return os.path.join(file_id[:2], file_id[2:4], file_id)


def check_limit(size: int, limit: int | None) -> None:
    if limit is not None and size > limit:
        raise PayloadTooLarge(f"The file is larger than the limit of {limit} bytes.")


class Writable(Protocol):
    """What `copy_stream` writes to: a file, or an upload to an object store (repository.files.s3store)."""

    def write(self, data: bytes, /) -> object: ...


def copy_stream(stream: Readable, out: Writable, hashes: tuple[Any, ...], limit: int | None,
                chunk_size: int = CHUNK) -> int:
    """Copy `stream` to `out`, `chunk_size` bytes a read, updating each of `hashes`; returns the size. The request's
    thread reads, writes and feeds the first hash; the others (the SHA-256) run in a second thread, one chunk at a
    time, which only hashes (hashlib lets go of the GIL over a chunk): a 1 GiB upload over TLS 307-316 -> 387-393
    MiB/s (bench/bench.py --parts upload, idle machine). A second thread that also wrote and took the MD5 made each
    recv() wait for the GIL (a 1 GiB upload through gunicorn: 51 MiB/s with it, 117 MiB/s without)."""
    first, others = hashes[0], hashes[1:]
    size = 0
    with ThreadPoolExecutor(1) if others else nullcontext() as side:
        pending: Future[None] | None = None
        while chunk := stream.read(chunk_size):
            size += len(chunk)
            check_limit(size, limit)
            if pending is not None:
                pending.result()
            if side is not None:
                pending = side.submit(_update, others, chunk)
            first.update(chunk)
            out.write(chunk)
        if pending is not None:
            pending.result()
    return size


def _update(hashes: tuple[Any, ...], chunk: bytes) -> None:
    for digest in hashes:
        digest.update(chunk)


def unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def discard(path: str) -> None:
    """Remove `path` if it can be (cleaning up after a failure that must stay the error reported)."""
    try:
        os.unlink(path)
    except OSError:
        pass


# Errors of a store that cannot be written at all (read-only, permissions, I/O error, a volume gone): 503.
_STORE_DOWN_ERRNOS = frozenset(
    {errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO, errno.ENOENT, errno.ENOTDIR, errno.ESTALE}
)


def store_error(exc: BaseException) -> ApiError | None:
    """The answer for an OSError of the store: 507 when full, 503 when it cannot be written; None otherwise (a
    client's connection errors keep their own handling)."""
    full = disk_full(exc)
    if full is not None or not isinstance(exc, OSError) or exc.errno not in _STORE_DOWN_ERRNOS:
        return full
    return ServiceUnavailable("The file storage is not available: nothing was stored. Retry later.")


def fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
