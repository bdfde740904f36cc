"""The resumable multipart protocol (repository.files.multipart) on an S3 store: the parts go to the bucket and
everything the protocol keeps between requests lives in the database, so that any node sharing the database and the
bucket takes the next request of an upload another node started (docs/operators/object-storage.md#multipart-uploads).

Two ways, chosen at initiate by the part size. Parts of S3's least part size (5 MiB) or more, or an upload of one
part, map onto an S3 multipart upload: CreateMultipartUpload at initiate (under the object key of the file id the
upload becomes), UploadPart per part (part n is S3's part n + 1), CompleteMultipartUpload at complete,
AbortMultipartUpload at abort and expiry. S3 refuses parts under 5 MiB but the last, so smaller parts are staged as
objects of their own (`.multipart/<upload id>/<n>`) and complete copies them, in order, into the file's object.

A part arrives whole and verified (its size, any Content-MD5/Content-Digest) before any byte of it reaches the
store: it is spooled, in memory up to SPOOL_MEMORY and in a temporary file under FILES_ROOT beyond, then sent, and
recorded with its ETag. A request cut short leaves a part sent before as it was. The store replaces a part sent
again whole and at once, and sends of one part on two nodes cannot be ordered by a lock file: complete gives the
store the ETags recorded and checks them against the store's (ListParts, or If-Match on a staged object), asking
the client again for any part the store no longer holds, so the digests recorded are always those of the bytes
stored.

The hash frontier (repository.files.resumable) is the upload row's `hash_state`: a part that starts where it stands
is hashed (MD5, SHA-256) as it arrives, and the frontier moves past it in the transaction that records the part if
nobody moved or reset it meanwhile. S3 does not let anyone read a part before its upload completes, so parts sent
out of order are hashed at complete, reading the assembled object back from the frontier; staged parts are hashed
as complete copies them."""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator

from sqlalchemy import delete, insert, select, update

from repository.accounts.tokens import Identity
from repository.errors import ApiError, BadRequest, Conflict
from repository.files import digests, resumable
from repository.files.s3store import STAGED, S3Store
from repository.files.store import CHUNK, TMP_DIR, StoredFile, copy_stream, file_uri, store_error
from repository.files.upload_rows import load, not_completed, part_range, unlocked
from repository.storage import Database
from repository.storage.tables.multipart import multipart_parts, multipart_uploads
from repository.timeutil import utcnow

S3_MIN_PART = 5 * 1024 * 1024  # S3's least part size, but for the last part
S3_MAX_PART = 5 * 1024**3  # S3's largest part
SPOOL_MEMORY = 8 * 1024 * 1024  # a part up to this size waits in memory for its last byte; a larger one on disk

log = logging.getLogger("repository.files.objectparts")


def begin(store: S3Store, size: int, part_size: int) -> tuple[str, str | None]:
    """(the file id the upload becomes, the S3 upload id; None when its parts are staged); 400 for parts larger
    than S3 takes."""
    if min(part_size, size) > S3_MAX_PART:
        raise BadRequest(f"`partSize` is at most {S3_MAX_PART} bytes (5 GiB) with this server's file store.",
                         errors=[{"field": "partSize", "message": "Too large."}])
    file_id = str(uuid.uuid4())
    if part_size < S3_MIN_PART and part_size < size:
        return file_id, None
    return file_id, store.start_upload(file_uri(file_id))


def staged_prefix(upload_id: str) -> str:
    return f"{STAGED}{upload_id}/"


def staged_key(upload_id: str, number: int) -> str:
    return f"{staged_prefix(upload_id)}{number}"


def _frontier_at(state: bytes | None) -> int:
    loaded = resumable.load(state or b"")
    return 0 if loaded is None else loaded[0]


def put_part(db: Database, store: S3Store, bucket_id: str, key: str, row: dict, number: int, stream: digests.Readable,
             expected: dict, who: Identity) -> tuple[dict, dict]:
    """Receive part `number` whole and verified, send it to the store, record it; returns (upload, part row)."""
    upload_id = row["id"]
    offset, size = part_range(row, number)
    crc = digests.Crc32()
    reader = digests.HashingReader(stream, list(expected), known=())
    # The frontier carried over the part as it arrives, when it stands at the part's start (S3 parts only: staged
    # parts are hashed as complete copies them).
    inline = None
    if row["store_upload_id"] and resumable.available() and _frontier_at(row["hash_state"]) == offset:
        loaded = resumable.load(row["hash_state"] or b"")
        md5, sha256 = (loaded[1], loaded[2]) if loaded else (resumable.Hash("md5"), resumable.Hash("sha256"))
        inline = (row["hash_state"], md5, sha256)
    with tempfile.SpooledTemporaryFile(SPOOL_MEMORY, dir=os.path.join(store.root, TMP_DIR)) as spool:
        try:
            received = copy_stream(reader, spool, (crc, *(inline[1:] if inline else ())), size)
        except OSError as exc:
            error = store_error(exc)
            if error is None:
                raise
            raise error from exc
        if received != size:
            raise BadRequest(f"Part {number} is incomplete: {received} of {size} bytes arrived. It is not stored; "
                             "send it again.")
        digests.verify(expected, {}, reader)
        spool.seek(0)
        try:  # the store replaces a part sent before at once, whole (the ETags recorded tell complete which)
            if row["store_upload_id"]:
                etag = store.upload_part(file_uri(row["file_id"]), row["store_upload_id"], number + 1, spool, size)
            else:
                etag = store.put_staged(staged_key(upload_id, number), spool, size)
        except FileNotFoundError:  # aborted (404), or its S3 upload assembled by a complete whose recording failed
            with db.read() as conn:
                load(conn, bucket_id, key, upload_id, who)
            raise _gone() from None
    try:
        with db.write() as conn:
            unlocked(conn, bucket_id)
            row = load(conn, bucket_id, key, upload_id, who, lock=True)
            not_completed(row)
            where = (multipart_parts.c.upload_id == upload_id, multipart_parts.c.part_number == number)
            previous = conn.execute(select(multipart_parts.c.etag).where(*where)).first()
            state = row["hash_state"]
            if previous is not None:  # recorded by another send meanwhile: the store kept one of the two
                conn.execute(delete(multipart_parts).where(*where))
                if previous.etag != etag and _frontier_at(state) > offset:
                    state = None
            part = {"upload_id": upload_id, "part_number": number, "size": size,
                    "checksum": "crc32:" + crc.hexdigest(), "created": utcnow(), "etag": etag}
            conn.execute(insert(multipart_parts).values(**part))
            if inline is not None and state == inline[0]:  # nobody moved or reset the frontier meanwhile
                state = resumable.dump(offset + size, inline[1], inline[2])
            if state != row["hash_state"]:
                conn.execute(update(multipart_uploads).where(multipart_uploads.c.id == upload_id)
                             .values(hash_state=state))
                row["hash_state"] = state
    except ApiError:
        if not row["store_upload_id"]:  # aborted meanwhile: the staged copy just written goes too
            store.discard(staged_key(upload_id, number))
        raise
    return row, part


def _gone() -> Conflict:
    return Conflict("The multipart upload takes no more parts: its parts were assembled by a complete that could "
                    "not record the file. Complete it again, or abort it.")


def _withdraw(db: Database, bucket_id: str, key: str, upload_id: str, who: Identity, numbers: list[int]) -> None:
    """Unlist parts `numbers` (to be sent again), by the complete that found them changed in the store; a frontier
    past the first of them starts again from zero."""
    with db.write() as conn:
        unlocked(conn, bucket_id)
        row = load(conn, bucket_id, key, upload_id, who, lock=True)
        conn.execute(delete(multipart_parts).where(multipart_parts.c.upload_id == upload_id,
                                                   multipart_parts.c.part_number.in_(numbers)))
        if _frontier_at(row["hash_state"]) > part_range(row, min(numbers))[0]:
            conn.execute(update(multipart_uploads).where(multipart_uploads.c.id == upload_id).values(hash_state=None))


def _changed(db: Database, row: dict, who: Identity, numbers: list[int]) -> BadRequest:
    _withdraw(db, row["bucket_id"], row["key"], row["id"], who, numbers)
    shown = ", ".join(map(str, numbers[:20])) + (", ..." if len(numbers) > 20 else "")
    return BadRequest(f"Part(s) {shown} changed in the store while being sent again (two sends of one part at "
                      "once): send them again, then complete again.",
                      errors=[{"field": "partNumber", "message": f"Send part {n} again."} for n in numbers[:100]])


def assemble(db: Database, store: S3Store, row: dict, who: Identity) -> tuple[StoredFile, Callable[[], None]]:
    """The upload's parts made one object, with the MD5 and SHA-256 of all its bytes; and what undoes it when the
    file cannot be recorded. The object is nobody's file until the caller records it."""
    with db.read() as conn:
        etags = {n: etag for n, etag in conn.execute(
            select(multipart_parts.c.part_number, multipart_parts.c.etag)
            .where(multipart_parts.c.upload_id == row["id"]))}
    if not row["store_upload_id"]:
        return _copy_staged(db, store, row, who, etags)
    uri = file_uri(row["file_id"])
    try:
        held = store.uploaded_parts(uri, row["store_upload_id"])
    except FileNotFoundError:
        held = None  # assembled by an earlier complete whose recording failed: its object is there
    if held is not None:
        changed = sorted(n for n, etag in etags.items() if etag not in held.get(n + 1, ()))
        if changed:
            raise _changed(db, row, who, changed)
        store.complete_upload(uri, row["store_upload_id"], [(n + 1, etags[n]) for n in sorted(etags)])
    else:
        try:
            there = store.size(uri)
        except FileNotFoundError:
            there = -1
        if there != row["size"]:
            raise Conflict("The multipart upload's parts are gone from the store: abort it and start again.")
    md5, sha256 = _hash_from_frontier(store, uri, row)
    # Kept when the recording fails: the S3 upload is spent, and a complete sent again records this object.
    return StoredFile(row["file_id"], uri, row["size"], "md5:" + md5, sha256), lambda: None


def _hash_from_frontier(store: S3Store, uri: str, row: dict) -> tuple[str, str]:
    loaded = resumable.load(row["hash_state"] or b"") if resumable.available() else None
    offset, md5, sha256 = loaded or (0, hashlib.md5(usedforsecurity=False), hashlib.sha256())
    if offset < row["size"]:
        copy_stream(_Chunks(store.read(uri, offset)), _Nowhere(), (md5, sha256), None)
    return md5.hexdigest(), sha256.hexdigest()


def _copy_staged(db: Database, store: S3Store, row: dict, who: Identity,
                 etags: dict[int, str]) -> tuple[StoredFile, Callable[[], None]]:
    """Staged parts copied in order into a new object (hashed on the way); a part replaced meanwhile is sent back."""
    reader = _Chunks(chunk for n in sorted(etags) for chunk in _staged(store, row["id"], n, etags[n]))
    try:
        stored = store.write(reader)
    except _Replaced as exc:
        raise _changed(db, row, who, [exc.number]) from None
    if stored.size != row["size"]:
        store.discard(stored.uri)
        raise _changed(db, row, who, sorted(etags))
    return stored, lambda: store.discard(stored.uri)


class _Replaced(Exception):
    def __init__(self, number: int) -> None:
        self.number = number


def _staged(store: S3Store, upload_id: str, number: int, etag: str) -> Iterator[bytes]:
    try:
        yield from store.read_staged(staged_key(upload_id, number), etag)
    except FileNotFoundError:
        raise _Replaced(number) from None


class _Chunks:
    """A `read(n)` stream over an iterator of chunks (as FileStore.read yields them)."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self.chunks, self.buffer = chunks, b""

    def read(self, size: int = -1, /) -> bytes:
        size = CHUNK if size < 0 else size
        while len(self.buffer) < size:
            chunk = next(self.chunks, b"")
            if not chunk:
                break
            self.buffer += chunk
        out, self.buffer = self.buffer[:size], self.buffer[size:]
        return out


class _Nowhere:
    def write(self, data: bytes, /) -> int:
        return len(data)


def cleanup(store: S3Store, row: dict) -> None:
    """After a completed upload is recorded: its staged parts go (an S3 upload has nothing left)."""
    if not row["store_upload_id"]:
        _quietly(store.remove_staged, staged_prefix(row["id"]))


def discard(store: S3Store, row: dict) -> None:
    """An aborted or expired upload's bytes (see `discard_upload`)."""
    discard_upload(store, row["id"], row["file_id"], row["store_upload_id"], row["completed"] is None)


def discard_upload(store: S3Store, upload_id: str, file_id: str | None, store_upload_id: str | None,
                   unrecorded: bool) -> None:
    """An aborted or expired upload's bytes: its S3 upload aborted or its staged parts removed, and, when it was
    never `recorded`, an object a failed complete assembled. Failures are left to the sweeps (the bucket's, and
    `sweep_staged`)."""
    if store_upload_id and file_id:
        _quietly(store.abort_upload, file_uri(file_id), store_upload_id)
    else:
        _quietly(store.remove_staged, staged_prefix(upload_id))
    if unrecorded and file_id:  # nobody's file
        store.discard(file_uri(file_id))


def _quietly(action: Callable[..., None], *args: str) -> None:
    try:
        action(*args)
    except ApiError as exc:
        log.warning("multipart upload bytes not removed from the S3 store (%s): left to the sweep", exc.message)


def sweep_staged(db: Database, store: S3Store, cutoff: float) -> int:
    """Remove the staged parts of uploads no row knows, last written before `cutoff` (an abort whose removal
    failed, a part that landed after its upload was aborted); returns how many uploads went."""
    newest: dict[str, float] = defaultdict(float)
    for key, modified in store.stored(STAGED):
        upload_id = key[len(STAGED):].split("/", 1)[0]
        newest[upload_id] = max(newest[upload_id], modified)
    old = [upload_id for upload_id, modified in newest.items() if modified <= cutoff]
    if not old:
        return 0
    with db.read() as conn:
        known = set(conn.execute(select(multipart_uploads.c.id).where(multipart_uploads.c.id.in_(old))).scalars())
    gone = [upload_id for upload_id in old if upload_id not in known]
    for upload_id in gone:
        _quietly(store.remove_staged, staged_prefix(upload_id))
    return len(gone)


class ObjectParts:
    """This module's steps for one S3 store: what repository.files.multipart asks of a store's uploads (the local
    directory's are repository.files.localparts.LocalParts)."""

    def __init__(self, store: S3Store) -> None:
        self.store = store

    def begin(self, upload_id: str, size: int, part_size: int, keep_free: int) -> dict[str, str | None]:
        """The columns of the upload's row: the file id it becomes and its S3 upload (see `begin`). The bucket's
        room is the store's: only the quotas reserve it (`keep_free` is about a local disk)."""
        file_id, store_upload_id = begin(self.store, size, part_size)
        return {"file_id": file_id, "store_upload_id": store_upload_id}

    def put_part(self, db: Database, bucket_id: str, key: str, row: dict, number: int, stream: digests.Readable,
                 expected: dict, who: Identity) -> tuple[dict, dict]:
        return put_part(db, self.store, bucket_id, key, row, number, stream, expected, who)

    def assemble(self, db: Database, row: dict, who: Identity) -> tuple[StoredFile, Callable[[], None]]:
        return assemble(db, self.store, row, who)

    def cleanup(self, row: dict) -> None:
        cleanup(self.store, row)

    def discard(self, row: dict) -> None:
        if row["file_id"] is not None:  # None: nothing was started in the store (an initiate that failed first)
            discard(self.store, row)

    def sweep(self, db: Database, cutoff: float) -> int:
        return sweep_staged(db, self.store, cutoff)
