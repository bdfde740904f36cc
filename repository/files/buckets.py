"""Files: contents on disk written by streaming (MD5 and SHA-256 on the way, fsynced, renamed into place), and buckets of
object versions that point at file instances, so a snapshot shares bytes instead of copying them."""

from __future__ import annotations

import errno
import fcntl
import functools
import hashlib
import logging
import mimetypes
import os
import time
import unicodedata
import uuid
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from datetime import datetime
from typing import Any, BinaryIO, Protocol, TypedDict, cast

from sqlalchemy import Connection, delete, func, insert, select, update

from repository.errors import (
    ApiError,
    BadRequest,
    Forbidden,
    NotFound,
    PayloadTooLarge,
    ServiceUnavailable,
    disk_full,
)
from repository.files import quotas
from repository.storage import Database
from repository.storage.engine import after_commit
from repository.storage.tables.deposits import buckets, file_instances, objects
from repository.timeutil import utcnow

CHUNK = 1024 * 1024  # 1 MiB reads: 64 KiB chunks were measured 2.3x slower for large uploads
MAX_NAME_BYTES = 255  # NAME_MAX of common file systems: a bucket PUT stores one name (the key column holds 1000)
# Bidirectional embeddings, overrides and isolates: `gpj.exe` shown reversed as `exe.jpg`.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
TMP_DIR = ".tmp"
MULTIPART_DIR = "multipart"  # under TMP_DIR: one directory per multipart upload (repository.files.multipart)
ORPHAN_AGE_SECONDS = 3600
SWEEP_BATCH = 500  # files looked up per query by the sweep
# In the store's root, shared by every process that sweeps it: its modification time is when the last complete sweep
# started, and the process sweeping holds an flock on it (the kernel releases it if that process dies).
SWEEP_STAMP = ".swept"

log = logging.getLogger("repository.files.buckets")


class Readable(Protocol):
    """What `FileStore.write` reads from: a request body, a subprocess pipe, a download (`read(n)` only)."""

    def read(self, size: int = -1, /) -> bytes: ...


class BucketRow(TypedDict):
    """A `buckets` row as a dict (`get_bucket`, `hold_bucket`)."""

    id: str
    locked: bool
    created: datetime
    updated: datetime


class ObjectRow(TypedDict):
    """An `objects` row with its file instance's size, checksum and uri: what `list_objects`, `get_object` and
    `objects_of_buckets` give, and what the deposit, record and file representations read."""

    version_id: str
    bucket_id: str
    key: str
    file_id: str
    mimetype: str
    position: int
    created: datetime
    updated: datetime
    size: int
    checksum: str
    sha256: str | None  # hex; None for files stored before SHA-256s were kept
    uri: str


@dataclass(frozen=True)
class StoredFile:
    """Bytes written to disk but not yet recorded in the database."""

    id: str
    uri: str
    size: int
    checksum: str  # md5:<hex>
    sha256: str | None = None  # hex


class FileStore:
    """File contents under `root`, addressed by file-instance id; never by user-chosen names."""

    def __init__(self, root: str) -> None:
        self.root = os.path.abspath(root)
        os.makedirs(os.path.join(self.root, TMP_DIR), exist_ok=True)

    def path(self, uri: str) -> str:
        return os.path.join(self.root, uri)

    def write(self, stream: Readable, limit: int | None = None, durable: bool = True) -> StoredFile:
        """Copy `stream` to a new file (flat memory whatever the size); PayloadTooLarge past `limit` bytes.

        `durable=False` skips the two fsyncs per file: for bulk loads, which call `sync()` once per batch before
        committing the rows that point at the files (thousands of small fsyncs were most of a load's time)."""
        file_id = str(uuid.uuid4())
        uri = os.path.join(file_id[:2], file_id[2:4], file_id)
        tmp = os.path.join(self.root, TMP_DIR, file_id)
        final = self.path(uri)
        digest = hashlib.md5(usedforsecurity=False)
        sha256 = hashlib.sha256()
        try:
            with open(tmp, "wb") as out:
                size = _copy(stream, out, (digest, sha256), limit)
                out.flush()
                if durable:
                    os.fsync(out.fileno())
            os.makedirs(os.path.dirname(final), exist_ok=True)
            os.replace(tmp, final)
            if durable:
                _fsync_dir(os.path.dirname(final))
        except BaseException as exc:
            for path in (tmp, final):  # nothing is left behind, whichever step failed
                _discard(path)
            error = _store_error(exc)
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
        _unlink(self.path(uri))

    def sweep(self, conn: Connection, min_age: float = ORPHAN_AGE_SECONDS) -> int:
        """Remove the files older than `min_age` seconds that no row points at; returns a count. They are the
        temporary files of uploads that crashed or were abandoned, and files written just before a commit that
        never happened. An upload in progress writes its temporary file at every chunk, and a file is recorded
        moments after it is renamed into place, so neither is ever that old. Memory stays flat: rows are looked
        up by file id in batches, each in a short transaction."""
        cutoff = time.time() - min_age
        removed = 0
        batch: list[tuple[str, str]] = []
        for directory, dirs, names in os.walk(self.root):
            temporary = os.path.relpath(directory, self.root) == TMP_DIR
            if temporary and MULTIPART_DIR in dirs:
                dirs.remove(MULTIPART_DIR)  # multipart uploads live as long as their rows say (multipart.sweep)
            if directory == self.root and SWEEP_STAMP in names:
                names.remove(SWEEP_STAMP)  # the sweepers' own stamp (sweep_turn), not a stored file
            for name in names:
                path = os.path.join(directory, name)
                if not _older_than(path, cutoff):
                    continue
                if temporary:  # never recorded: a row is written only after the rename into place
                    removed += _swept(path)
                    continue
                batch.append((os.path.relpath(path, self.root), path))
                if len(batch) >= SWEEP_BATCH:
                    removed += _sweep_batch(conn, batch, cutoff)
                    batch = []
        return removed + (_sweep_batch(conn, batch, cutoff) if batch else 0)

    @contextmanager
    def sweep_turn(self, interval: float) -> Iterator[float | None]:
        """Whether this process is to sweep now, across every process sharing the store: yields None when it is
        (the caller sweeps inside the block; the stamp records it when the block ends without an error), else the
        seconds until a sweep may be due. Not due while another process sweeps (it holds the stamp's flock) or
        less than `interval` seconds after the start of the last complete sweep. A sweep that failed or was
        killed leaves the stamp as it was, so the next caller sweeps; a store where flock fails sweeps as before."""
        path = os.path.join(self.root, SWEEP_STAMP)
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
        with self.store.sweep_turn(self.interval) as wait:
            if wait is not None:
                self._due = now + wait
                return 0
            with self.db.read() as conn:
                removed = self.store.sweep(conn, self.min_age)
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


def _check_limit(size: int, limit: int | None) -> None:
    if limit is not None and size > limit:
        raise PayloadTooLarge(f"The file is larger than the limit of {limit} bytes.")


def _copy(stream: Readable, out: BinaryIO, hashes: tuple[Any, ...], limit: int | None) -> int:
    """Copy `stream` to `out` updating each of `hashes`; returns the size. The request's thread reads, writes and
    feeds the first hash; the others (the SHA-256) run in a second thread, one chunk at a time, which only hashes
    (hashlib lets go of the GIL over a chunk): a 1 GiB upload over TLS 307-316 -> 387-393 MiB/s
    (bench/bench.py --parts upload, idle machine). A second thread that also wrote and took the MD5 made each
    recv() wait for the GIL (a 1 GiB upload through gunicorn: 51 MiB/s with it, 117 MiB/s without)."""
    first, others = hashes[0], hashes[1:]
    size = 0
    with ThreadPoolExecutor(1) if others else nullcontext() as side:
        pending: Future[None] | None = None
        while chunk := stream.read(CHUNK):
            size += len(chunk)
            _check_limit(size, limit)
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


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _discard(path: str) -> None:
    """Remove `path` if it can be (cleaning up after a failure that must stay the error reported)."""
    try:
        os.unlink(path)
    except OSError:
        pass


# Errors of a store that cannot be written at all (read-only, permissions, I/O error, a volume gone): 503.
_STORE_DOWN_ERRNOS = frozenset(
    {errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO, errno.ENOENT, errno.ENOTDIR, errno.ESTALE}
)


def _store_error(exc: BaseException) -> ApiError | None:
    """The answer for an OSError of the store: 507 when full, 503 when it cannot be written; None otherwise (a
    client's connection errors keep their own handling)."""
    full = disk_full(exc)
    if full is not None or not isinstance(exc, OSError) or exc.errno not in _STORE_DOWN_ERRNOS:
        return full
    return ServiceUnavailable("The file storage is not available: nothing was stored. Retry later.")


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def normalise_key(key: str) -> str:
    """The key in Unicode NFC, so that two names that look the same (a precomposed `é` and `e` plus a combining
    accent, as macOS sends them) are one file."""
    return unicodedata.normalize("NFC", key)


def check_key(key: str) -> str:
    """A stored file name, normalised to NFC; BadRequest unless it is one path segment of 1 to 255 bytes in
    UTF-8 (what file systems allow, so a downloader can save it), not `.` or `..`, without `/` or `\\` (a path
    separator for Windows downloaders) and without control characters, bidirectional overrides (names that
    show reversed) or U+FFFD (left by invalid UTF-8 in the URL). Keys never become paths on our disk."""
    key = normalise_key(key)
    field = [{"field": "key", "message": "Invalid file name."}]
    if not key:
        raise BadRequest("Invalid file name: it is empty.", errors=field)
    if key in (".", ".."):
        raise BadRequest(f"Invalid file name: {key!r} is not a file name.", errors=field)
    if len(key.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        raise BadRequest(f"Invalid file name: it is longer than {MAX_NAME_BYTES} bytes in UTF-8.", errors=field)
    bad = next((c for c in key if c in "/\\" or c in _BIDI_CONTROLS or c == "\ufffd"
                or unicodedata.category(c) in ("Cc", "Cs")), None)
    if bad is not None:
        raise BadRequest(f"Invalid file name: it contains the character U+{ord(bad):04X}, which is not allowed.",
                         errors=field)
    return key


def upload_key(path: str) -> str:
    """The file name a bucket PUT to `path` stores: its last path segment (the specification), checked by
    `check_key`; BadRequest when any segment is `.` or `..` or the path ends with a `/`."""
    segments = normalise_key(path).split("/")
    if any(segment in (".", "..") for segment in segments):
        raise BadRequest("Invalid file name: `.` and `..` segments are not allowed.",
                         errors=[{"field": "key", "message": "Invalid file name."}])
    if not segments[-1]:
        raise BadRequest("Invalid file name: the path ends with `/`; name the file after the last `/`.",
                         errors=[{"field": "key", "message": "Invalid file name."}])
    return check_key(segments[-1])


def file_checksums(obj: ObjectRow | dict) -> dict[str, str]:
    """Beside the specification's `checksum` (md5:<hex>): each digest in hex, the SHA-256 for files stored since it
    is computed on the way in (migration 0015)."""
    found = {"md5": obj["checksum"].removeprefix("md5:")}
    if obj.get("sha256"):
        found["sha256"] = obj["sha256"]
    return found


def guess_mimetype(key: str) -> str:
    return mimetypes.guess_type(key, strict=False)[0] or "application/octet-stream"


def create_bucket(conn: Connection) -> str:
    bucket_id = str(uuid.uuid4())
    now = utcnow()
    conn.execute(insert(buckets).values(id=bucket_id, locked=False, created=now, updated=now))
    return bucket_id


def get_bucket(conn: Connection, bucket_id: str) -> BucketRow:
    row = conn.execute(select(buckets).where(buckets.c.id == bucket_id)).mappings().first()
    if row is None:
        raise NotFound("Bucket does not exist.")
    return cast(BucketRow, dict(row))


def list_objects(conn: Connection, bucket_id: str) -> list[ObjectRow]:
    """The bucket's files with their instances, in the order the depositor set (then by name)."""
    query = (
        select(objects, file_instances.c.size, file_instances.c.checksum, file_instances.c.sha256,
               file_instances.c.uri)
        .join(file_instances, file_instances.c.id == objects.c.file_id)
        .where(objects.c.bucket_id == bucket_id)
        .order_by(objects.c.position, objects.c.key)
    )
    return [cast(ObjectRow, dict(row)) for row in conn.execute(query).mappings()]


def objects_of_buckets(conn: Connection, bucket_ids: Iterable[str]) -> dict[str, list[ObjectRow]]:
    """`list_objects` for many buckets in one query."""
    ids = list(set(bucket_ids))
    result: dict[str, list[ObjectRow]] = {bucket_id: [] for bucket_id in ids}
    if not ids:
        return result
    query = (
        select(objects, file_instances.c.size, file_instances.c.checksum, file_instances.c.sha256,
               file_instances.c.uri)
        .join(file_instances, file_instances.c.id == objects.c.file_id)
        .where(objects.c.bucket_id.in_(ids))
        .order_by(objects.c.bucket_id, objects.c.position, objects.c.key)
    )
    for row in conn.execute(query).mappings():
        result[row["bucket_id"]].append(cast(ObjectRow, dict(row)))
    return result


def get_object(conn: Connection, bucket_id: str, key: str) -> ObjectRow:
    """The object stored under `key`, or under the same name in another Unicode normal form (keys are stored in
    NFC; older ones may not be); NotFound otherwise."""
    objs = list_objects(conn, bucket_id)
    for obj in objs:
        if obj["key"] == key:
            return obj
    key = normalise_key(key)
    for obj in objs:
        if normalise_key(obj["key"]) == key:
            return obj
    raise NotFound("The file does not exist.")


def hold_bucket(conn: Connection, bucket_id: str) -> BucketRow:
    """Lock the bucket's row until the transaction ends and return it (NotFound once it is gone).

    Every write to a bucket takes this lock before it looks at the bucket, and so do publish (before its snapshot)
    and a draft's deletion (before dropping the bucket): on PostgreSQL a write then either commits before the
    snapshot and is in it, or waits and finds the bucket locked (403) or gone (404). SQLite's write transactions
    hold the whole database already (`FOR UPDATE` is not rendered there)."""
    row = conn.execute(select(buckets).where(buckets.c.id == bucket_id).with_for_update()).mappings().first()
    if row is None:
        raise NotFound("Bucket does not exist.")
    return cast(BucketRow, dict(row))


def _check_unlocked(conn: Connection, bucket_id: str) -> None:
    if hold_bucket(conn, bucket_id)["locked"]:
        raise Forbidden("Bucket is locked for modifications.")


def put_object(conn: Connection, bucket_id: str, key: str, stored: StoredFile, replace: bool = True,
               quota: quotas.Quota | None = None, field: str = "Content-Length") -> tuple[ObjectRow, str | None]:
    """Record `stored` under `key`; returns (the object, the file id it replaced or None). With `quota`, 413 (the
    transaction then rolls back) when the file passes a limit (`field`: what the error names)."""
    _check_unlocked(conn, bucket_id)
    before = quotas.uses(conn, quota, bucket_id, hold=True) if quota is not None else []
    now = utcnow()
    conn.execute(
        insert(file_instances).values(
            id=stored.id, uri=stored.uri, size=stored.size, checksum=stored.checksum, sha256=stored.sha256,
            created=now,
        )
    )
    existing = conn.execute(
        select(objects.c.version_id, objects.c.file_id, objects.c.position, objects.c.created).where(
            objects.c.bucket_id == bucket_id, objects.c.key == key
        )
    ).first()
    replaced = None
    if existing is not None:
        if not replace:
            raise BadRequest("Filename already exists.")
        replaced = existing.file_id
        conn.execute(delete(objects).where(objects.c.version_id == existing.version_id))
        position = existing.position
    else:
        position = (
            conn.execute(select(func.max(objects.c.position)).where(objects.c.bucket_id == bucket_id)).scalar() or 0
        ) + 1
    conn.execute(
        insert(objects).values(
            version_id=str(uuid.uuid4()),
            bucket_id=bucket_id,
            key=key,
            file_id=stored.id,
            mimetype=guess_mimetype(key),
            position=position,
            created=now,
            updated=now,
        )
    )
    conn.execute(update(buckets).where(buckets.c.id == bucket_id).values(updated=now))
    if quota is not None:
        quotas.enforce(conn, quota, bucket_id, before, stored.size, field)
    return get_object(conn, bucket_id, key), replaced


def delete_object(conn: Connection, bucket_id: str, key: str) -> str:
    """Remove `key` from an unlocked bucket; returns the file id it pointed at."""
    _check_unlocked(conn, bucket_id)
    obj = get_object(conn, bucket_id, key)
    conn.execute(delete(objects).where(objects.c.version_id == obj["version_id"]))
    conn.execute(update(buckets).where(buckets.c.id == bucket_id).values(updated=utcnow()))
    return obj["file_id"]


def rename_object(conn: Connection, bucket_id: str, old_key: str, new_key: str) -> ObjectRow:
    _check_unlocked(conn, bucket_id)
    check_key(new_key)
    obj = get_object(conn, bucket_id, old_key)
    if new_key != old_key and any(o["key"] == new_key for o in list_objects(conn, bucket_id)):
        raise BadRequest("Filename already exists.")
    conn.execute(
        update(objects)
        .where(objects.c.version_id == obj["version_id"])
        .values(key=new_key, mimetype=guess_mimetype(new_key), updated=utcnow())
    )
    return get_object(conn, bucket_id, new_key)


def reorder(conn: Connection, bucket_id: str, file_ids: list[str]) -> None:
    """Set the order of the old files interface: listed files first, in the given order."""
    _check_unlocked(conn, bucket_id)
    current = {o["file_id"]: o for o in list_objects(conn, bucket_id)}
    unknown = [file_id for file_id in file_ids if file_id not in current]
    if unknown:
        raise BadRequest("Wrong file on input: unknown file id(s) " + ", ".join(map(str, unknown)) + ".")
    order = file_ids + [f for f in current if f not in file_ids]
    for position, file_id in enumerate(order, start=1):
        conn.execute(
            update(objects).where(objects.c.version_id == current[file_id]["version_id"]).values(position=position)
        )


def snapshot(conn: Connection, source_bucket: str, locked: bool) -> str:
    """A new bucket holding the same file instances as `source_bucket` (no bytes copied)."""
    target = create_bucket(conn)
    now = utcnow()
    for obj in list_objects(conn, source_bucket):
        conn.execute(
            insert(objects).values(
                version_id=str(uuid.uuid4()),
                bucket_id=target,
                key=obj["key"],
                file_id=obj["file_id"],
                mimetype=obj["mimetype"],
                position=obj["position"],
                created=now,
                updated=now,
            )
        )
    if locked:
        lock(conn, target)
    return target


def lock(conn: Connection, bucket_id: str) -> None:
    conn.execute(update(buckets).where(buckets.c.id == bucket_id).values(locked=True, updated=utcnow()))


def drop_bucket(conn: Connection, bucket_id: str) -> list[str]:
    """Delete a bucket and its objects; returns the file ids they pointed at (maybe now unreferenced)."""
    hold_bucket(conn, bucket_id)  # a write in progress lands first (and is returned) or finds the bucket gone
    file_ids = [o["file_id"] for o in list_objects(conn, bucket_id)]
    conn.execute(delete(objects).where(objects.c.bucket_id == bucket_id))
    conn.execute(delete(buckets).where(buckets.c.id == bucket_id))
    return file_ids


def release_files(conn: Connection, store: FileStore, file_ids: Iterable[str]) -> None:
    """Delete the instances no object points at any more, rows first; call after the change that freed them."""
    for file_id in set(file_ids):
        if conn.execute(select(objects.c.version_id).where(objects.c.file_id == file_id).limit(1)).first():
            continue
        row = conn.execute(select(file_instances.c.uri).where(file_instances.c.id == file_id)).first()
        if row is None:
            continue
        conn.execute(delete(file_instances).where(file_instances.c.id == file_id))
        # The bytes go only once the row's deletion is committed: a rollback must find its file still there (a
        # removal that fails leaves an orphan for the sweep).
        after_commit(conn, functools.partial(_discard, store.path(row.uri)))
