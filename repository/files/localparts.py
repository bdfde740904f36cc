"""The resumable multipart protocol's bytes on the local directory store (repository.files.multipart,
docs/api/deposits.md): one file per upload, `FILES_ROOT/.tmp/multipart/<upload id>/data`, preallocated at initiate,
each part written at its offset under a lock file of its own, the hash frontier beside it (repository.files.frontier),
and complete renaming the file into place. `multipart.upload_parts(store)` gives this; an S3 store gives
repository.files.objectparts's instead, with the same methods."""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import shutil
import uuid
from collections.abc import Callable, Iterator

from sqlalchemy import delete, insert, select

from repository.accounts.tokens import Identity
from repository.errors import BadRequest, InsufficientStorage
from repository.files import digests, frontier, upload_rows
from repository.files.store import (
    MULTIPART_DIR,
    TMP_DIR,
    FileStore,
    Readable,
    StoredFile,
    copy_stream,
    store_error,
)
from repository.storage import Database
from repository.storage.tables.multipart import multipart_parts
from repository.timeutil import utcnow

DATA = frontier.DATA


def upload_dir(store: FileStore, upload_id: str) -> str:
    return os.path.join(store.root, TMP_DIR, MULTIPART_DIR, upload_id)


class LocalParts:
    """The multipart protocol's bytes under the store's root; what multipart.py asks of a store's uploads."""

    def __init__(self, store: FileStore) -> None:
        self.store = store

    def begin(self, upload_id: str, size: int, part_size: int, keep_free: int) -> dict[str, str | None]:
        """The upload's room: its file allocated to `size` bytes, only if `keep_free` bytes stay free beside it (507
        otherwise: nobody fills the disk with reservations). Returns the columns of the upload's row it sets (none
        here)."""
        directory = upload_dir(self.store, upload_id)
        os.makedirs(directory, mode=0o700)
        with _reserving(self.store):  # one reservation at a time on this machine: each sees the space the last took
            _check_free(directory, size, keep_free)
            with os.fdopen(os.open(os.path.join(directory, DATA), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
                           "wb") as out:
                os.posix_fallocate(out.fileno(), 0, size)
                os.fsync(out.fileno())
        return {}

    def put_part(self, db: Database, bucket_id: str, key: str, row: dict, number: int, stream: Readable,
                 expected: dict, who: Identity) -> tuple[dict, dict]:
        """Write part `number` at its offset, verified, then record it; returns (the upload, the part's row)."""
        upload_id = row["id"]
        offset, size = upload_rows.part_range(row, number)
        with _PartLock(self.store, upload_id, number):
            with db.read() as conn:
                recorded = conn.execute(select(multipart_parts.c.part_number).where(
                    multipart_parts.c.upload_id == upload_id, multipart_parts.c.part_number == number)).first()
            directory = upload_dir(self.store, upload_id)
            # A part already recorded is replaced only once its new bytes have all arrived and been verified: they are
            # written beside it first. A request cut short, or one that reaches the app late (after the client sent the
            # part again on another connection and it was recorded), then leaves the recorded part as it was.
            beside = os.path.join(directory, f"{number}.{uuid.uuid4().hex}.part") if recorded else None
            crc = digests.Crc32()  # the part's own checksum; an MD5 only when the client sent one (digests)
            reader = digests.HashingReader(stream, list(expected), known=())
            try:
                inline = None if beside else frontier.Inline.at(directory, offset)
                try:
                    with open(beside or os.path.join(directory, DATA), "xb" if beside else "r+b") as out:
                        out.seek(0 if beside else offset)
                        received = copy_stream(reader, out, (crc, *(inline.hashes if inline else ())), size)
                        out.flush()
                        os.fdatasync(out.fileno())
                    if received != size:
                        raise BadRequest(f"Part {number} is incomplete: {received} of {size} bytes arrived. It is not "
                                         "stored; send it again.")
                    digests.verify(expected, {}, reader)
                    if beside:
                        _replace_recorded(db, directory, bucket_id, key, upload_id, who, number, offset, beside)
                finally:
                    if beside:
                        with contextlib.suppress(FileNotFoundError):
                            os.remove(beside)
            except FileNotFoundError:
                raise upload_rows.not_found() from None
            except OSError as exc:
                error = store_error(exc)
                if error is None:
                    raise
                raise error from exc
            with db.write() as conn:
                upload_rows.unlocked(conn, bucket_id)
                row = upload_rows.load(conn, bucket_id, key, upload_id, who, lock=True)
                upload_rows.not_completed(row)
                part = {"upload_id": upload_id, "part_number": number, "size": size,
                        "checksum": "crc32:" + crc.hexdigest(), "created": utcnow()}
                conn.execute(insert(multipart_parts).values(**part))
            if inline is not None:  # recorded, and still ours (the part's lock): the frontier may move past it
                inline.keep(offset + size)
        frontier.advance(db, upload_dir(self.store, upload_id), row)
        return row, part

    def assemble(self, db: Database, row: dict, who: Identity) -> tuple[StoredFile, Callable[[], None]]:
        """The upload's file with its MD5 and SHA-256 (hashed past the frontier), renamed into place; and what puts
        it back when the file cannot be recorded (so that complete can be retried)."""
        directory = upload_dir(self.store, row["id"])
        md5, sha256 = frontier.finish(directory, row)
        file_id = str(uuid.uuid4())
        data = os.path.join(directory, DATA)
        uri = self.store.adopt(data, file_id)  # a rename in a directory
        return (StoredFile(file_id, uri, row["size"], "md5:" + md5, sha256),
                functools.partial(self.store.unadopt, uri, data))

    def cleanup(self, row: dict) -> None:
        """After the completed upload is recorded: its part lock files go."""
        shutil.rmtree(upload_dir(self.store, row["id"]), ignore_errors=True)

    def discard(self, row: dict) -> None:
        """An aborted, expired or never recorded upload's bytes."""
        shutil.rmtree(upload_dir(self.store, row["id"]), ignore_errors=True)

    def sweep(self, db: Database, cutoff: float) -> int:
        """The store's own leftovers of uploads no row knows; here none beyond the directories, which
        multipart.sweep removes for every store."""
        return 0


@contextlib.contextmanager
def _reserving(store: FileStore) -> Iterator[None]:
    """An exclusive flock on the uploads' directory, held while one upload checks the free space and allocates its
    room (the directory itself: a lock file there would be taken for an upload by the listing and the sweep)."""
    fd = os.open(os.path.join(store.root, TMP_DIR, MULTIPART_DIR), os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _check_free(directory: str, size: int, keep_free: int) -> None:
    """507 unless the file system of `directory` has `size` bytes free and `keep_free` more."""
    stat = os.statvfs(directory)
    free = stat.f_bavail * stat.f_frsize
    if size + keep_free > free:
        raise InsufficientStorage(
            f"The server cannot reserve {size} bytes for this upload now: it keeps {keep_free} bytes of its disk "
            "free for everyone's work. Nothing was reserved; upload a smaller file, or retry later.",
            errors=[{"field": "size", "message": "More than the server's free disk space allows now."}])


class _PartLock:
    """An exclusive flock on the part's lock file in the upload's directory; NotFound once the upload is gone."""

    def __init__(self, store: FileStore, upload_id: str, number: int) -> None:
        try:
            self.fd = os.open(os.path.join(upload_dir(store, upload_id), f"{number}.lock"), os.O_RDWR | os.O_CREAT,
                              0o600)
        except FileNotFoundError:
            raise upload_rows.not_found() from None

    def __enter__(self) -> _PartLock:
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)  # releases the lock


def _replace_recorded(db: Database, directory: str, bucket_id: str, key: str, upload_id: str, who: Identity,
                      number: int, offset: int, beside: str) -> None:
    """Put the new bytes of recorded part `number` (complete and verified, in file `beside`) in its place: the part
    is withdrawn first, so it is never listed while its bytes change, and a frontier past its start forgets them."""
    with db.write() as conn:
        upload_rows.unlocked(conn, bucket_id)
        upload_rows.not_completed(upload_rows.load(conn, bucket_id, key, upload_id, who, lock=True))
        conn.execute(delete(multipart_parts).where(multipart_parts.c.upload_id == upload_id,
                                                   multipart_parts.c.part_number == number))
    frontier.forget_from(directory, offset)
    with open(beside, "rb") as source, open(os.path.join(directory, DATA), "r+b") as out:
        out.seek(offset)
        shutil.copyfileobj(source, out, 1 << 20)
        out.flush()
        os.fdatasync(out.fileno())
