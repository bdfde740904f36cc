"""Multipart uploads to a bucket, in the shape of the reference's files REST API (invenio-files-rest, whose
`?uploads` link every bucket file object carries): initiate with the total size and the part size, send the parts
(numbered from 0, in any order, in parallel, each retried safely), list them to resume, complete, or abort.

This module keeps the protocol's rules and rows; the bytes are the store's (`upload_parts(store)`, the same steps on
either store): on the local directory (repository.files.localparts), one file per upload, `FILES_ROOT/.tmp/multipart/<upload id>/data`, preallocated to the total size at
initiate (a full disk answers 507 then, not at the last part), and only while READY_MIN_FREE_BYTES stay free beside
it; one user's open uploads reserve at most MULTIPART_USER_RESERVED_BYTES in all. Each part is written at its
offset. Complete renames the file into place as a PUT does: no second copy of the bytes on any file system, where
concatenating part files would copy them all again unless the file system clones extents (copy_file_range shares
them only on Btrfs/XFS).

The whole file's MD5 and SHA-256 are not left to complete (re-reading gigabytes there took seconds a GiB): a hash
frontier, `hash.state` beside the data (bytes hashed from the start, both hash states: repository.files.resumable),
advances over the parts recorded contiguously after it, right after each part is recorded, while its bytes are
in the page cache. One process at a time moves it (an flock); a part re-sent after being hashed resets it; a lost
or torn state file means hashing again from the start. Complete only hashes past the frontier.

A part's row (multipart_parts) exists only while its bytes are complete and verified. Sending a part withdraws
its row first, writes, fsyncs, checks the size and any Content-MD5/Content-Digest, then records it: a part is never
listed with partial bytes, and a part whose connection dropped is simply missing (a client re-sends the parts
missing from the listing). Two sends of the same part queue on a lock file of that part (flock, which holds
between threads as between processes), so their bytes never interleave; the last one wins.

The rules of a PUT apply to every step (repository.files.buckets): the bucket's row is held (`hold_bucket`) by
each write, so a part or a complete racing a publish either lands before it or gets the 403 of a locked bucket;
publish itself is refused while an upload is open (`publish_errors`). An upload reserves its size against the
quotas from initiate until it completes (repository.files.quotas). Complete marks the upload `completed` (parts are refused from then on) before it hashes, renames the file into
place and records the object in one transaction; if that fails, the file goes back and the mark is cleared.

On an S3 store (repository.files.objectparts) the parts go to the bucket (an S3 multipart upload, or staged objects
for parts under S3's 5 MiB) and what the steps keep between requests is in the database, so that any node takes
the next request. The rules above on rows, locks of the bucket's row, quotas and publish are the same;
no disk room is reserved."""

from __future__ import annotations

import os
import shutil
import time
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, Protocol

from sqlalchemy import Connection, delete, func, insert, or_, select, update
from sqlalchemy.exc import OperationalError

from repository import urls
from repository.accounts.tokens import Identity
from repository.errors import BadRequest, Forbidden, PayloadTooLarge
from repository.files import buckets, digests, localparts, objectparts, owners, quotas, upload_rows
from repository.files.keys import upload_key
from repository.files.store import (
    MULTIPART_DIR,
    TMP_DIR,
    FileStore,
    Readable,
    StoredFile,
    store_error,
)
from repository.storage import Database
from repository.storage.engine import after_commit
from repository.storage.tables.multipart import multipart_parts, multipart_uploads
from repository.timeutil import isoformat, utcnow

MAX_PARTS = 10_000


class UploadParts(Protocol):
    """The multipart protocol's steps that touch bytes (`upload_parts`): `begin` makes an upload's room and
    gives the columns of its row the store needs, `put_part` receives, stores and records a part, `assemble` makes
    the file of the parts (and gives what undoes it), `cleanup` follows a recorded complete, `discard` drops an
    upload's bytes (aborted, expired, never recorded), `sweep` removes the store's leftovers of uploads no row knows
    last written before `cutoff`."""

    def begin(self, upload_id: str, size: int, part_size: int, keep_free: int) -> dict[str, str | None]: ...

    def put_part(self, db: Database, bucket_id: str, key: str, row: dict, number: int, stream: Readable,
                 expected: dict, who: Identity) -> tuple[dict, dict]: ...

    def assemble(self, db: Database, row: dict, who: Identity) -> tuple[StoredFile, Callable[[], None]]: ...

    def cleanup(self, row: dict) -> None: ...

    def discard(self, row: dict) -> None: ...

    def sweep(self, db: Database, cutoff: float) -> int: ...


# Each store's steps, by the store's `kind`. The store cannot hand out its own: these modules use the store's, so a
# method of the store importing them would close an import cycle (tests/test_layering.py).
_PARTS: dict[str, Callable[[Any], UploadParts]] = {"local": localparts.LocalParts, "s3": objectparts.ObjectParts}


def upload_parts(store: FileStore) -> UploadParts:
    """How `store` keeps the protocol's bytes: a file per upload under its root (repository.files.localparts), or
    the parts in the bucket and the state in the database (repository.files.objectparts)."""
    return _PARTS[store.kind](store)


# A complete that started this long ago and never finished (its process died) no longer protects its upload.
STALE_COMPLETE = timedelta(days=1)


def initiate(db: Database, store: FileStore, bucket_id: str, key: str, size: int, part_size: int,
             who: Identity, expiry_days: int, quota: quotas.Quota | None = None, user_reserved: int = 0,
             keep_free: int = 0) -> dict:
    """Start an upload of `size` bytes in parts of `part_size`; returns its row. Its size is reserved against the
    quotas and against `user_reserved`, the most the caller's open uploads may reserve in all (413 when it does not
    fit, checked before the room is allocated and again, exactly, under the locks); it is allocated on disk only if
    `keep_free` bytes stay free beside it (507 otherwise: nobody fills the disk with reservations)."""
    key = upload_key(key)
    if size < 1:
        raise BadRequest("`size` must be a positive number of bytes.", errors=[{"field": "size", "message": "Invalid."}])
    if part_size < 1:
        raise BadRequest("`partSize` must be a positive number of bytes.",
                         errors=[{"field": "partSize", "message": "Invalid."}])
    if -(-size // part_size) > MAX_PARTS:
        raise BadRequest(f"Too many parts: at most {MAX_PARTS}; choose a partSize of at least "
                         f"{-(-size // MAX_PARTS)} bytes.", errors=[{"field": "partSize", "message": "Too small."}])
    with db.read() as conn:
        owners.writable_deposit(conn, bucket_id, who)
        if buckets.get_bucket(conn, bucket_id)["locked"]:
            raise Forbidden("Bucket is locked for modifications.")
        if quota is not None:
            quotas.check(conn, quota, bucket_id, size, "size", quotas.replaced_size(conn, bucket_id, key))
        _check_reserved(conn, who, size, user_reserved)
    upload_id = str(uuid.uuid4())
    parts = upload_parts(store)
    held: dict[str, str | None] = {}  # what the store keeps of the upload in its row (S3: repository.files.objectparts)
    try:  # the bytes' room first, then the row (a crash in between leaves what the sweeps remove)
        held = parts.begin(upload_id, size, part_size, keep_free)
        now = utcnow()
        with db.write() as conn:
            upload_rows.unlocked(conn, bucket_id)
            if quota is not None:  # exact now: the bucket's row (and the owner's) held until the row is in
                quotas.check(conn, quota, bucket_id, size, "size", quotas.replaced_size(conn, bucket_id, key),
                             hold=True)
            if user_reserved:
                quotas.hold_user(conn, who.user_id)
                _check_reserved(conn, who, size, user_reserved)
            conn.execute(insert(multipart_uploads).values(
                id=upload_id, bucket_id=bucket_id, key=key, size=size, part_size=part_size, owner_id=who.user_id,
                created=now, expires=now + timedelta(days=expiry_days), completed=None, **held))
            return dict(conn.execute(select(multipart_uploads).where(multipart_uploads.c.id == upload_id))
                        .mappings().one())
    except BaseException as exc:
        parts.discard({"id": upload_id, "completed": None, "file_id": None, "store_upload_id": None, **held})
        error = store_error(exc)
        if error is None:
            raise
        raise error from exc


def _check_reserved(conn: Connection, who: Identity, size: int, limit: int) -> None:
    """413 when `size` more bytes would take the caller's open uploads past `limit` (0: no limit)."""
    if not limit:
        return
    reserved = int(conn.execute(select(func.coalesce(func.sum(multipart_uploads.c.size), 0)).where(
        multipart_uploads.c.owner_id == who.user_id, multipart_uploads.c.completed.is_(None),
        multipart_uploads.c.expires > utcnow())).scalar_one())
    if reserved + size > limit:
        raise PayloadTooLarge(
            f"Your open multipart uploads reserve {reserved} bytes; together they may reserve at most {limit}, and "
            f"this one needs {size}. Complete or abort an open upload first (GET the bucket's ?uploads lists them).",
            errors=[{"field": "size", "message": f"At most {max(limit - reserved, 0)} bytes can be reserved now.",
                     "limit": limit, "reserved": reserved, "requested": size}])


def parts(db: Database, bucket_id: str, key: str, upload_id: str, who: Identity) -> tuple[dict, list[dict]]:
    """The upload and its parts received whole, by number."""
    with db.read() as conn:
        owners.writable_deposit(conn, bucket_id, who)
        row = upload_rows.load(conn, bucket_id, key, upload_id, who)
        query = (select(multipart_parts).where(multipart_parts.c.upload_id == upload_id)
                 .order_by(multipart_parts.c.part_number))
        return row, [dict(p) for p in conn.execute(query).mappings()]


def put_part(db: Database, store: FileStore, bucket_id: str, key: str, upload_id: str, number_text: str,
             stream: Readable, content_length: int | None, headers: digests.Headers,
             who: Identity) -> tuple[dict, dict]:
    """Write part `number_text` of the upload from `stream`; returns (the upload, the part's row)."""
    expected = digests.expected_digests(headers)
    with db.read() as conn:
        owners.writable_deposit(conn, bucket_id, who)
        row = upload_rows.load(conn, bucket_id, key, upload_id, who)
        if buckets.get_bucket(conn, bucket_id)["locked"]:
            raise Forbidden("Bucket is locked for modifications.")
    upload_rows.not_completed(row)
    count = upload_rows.part_count(row)
    if not (number_text.isascii() and number_text.isdigit()) or int(number_text) >= count:
        raise BadRequest(f"`partNumber` must be a whole number from 0 to {count - 1} (parts are numbered from 0).",
                         errors=[{"field": "partNumber", "message": "Out of range."}])
    number = int(number_text)
    offset, size = upload_rows.part_range(row, number)
    if content_length != size:
        which = "the last part" if number == count - 1 else f"every part but the last is partSize ({row['part_size']})"
        raise BadRequest(f"Part {number} is {size} bytes ({which}); the request's Content-Length is "
                         f"{'missing' if content_length is None else content_length}. Nothing was stored.",
                         errors=[{"field": "Content-Length", "message": f"Expected {size}."}])
    return upload_parts(store).put_part(db, bucket_id, key, row, number, stream, expected, who)


def complete(db: Database, store: FileStore, bucket_id: str, key: str, upload_id: str, who: Identity,
             on_change: Callable[[Connection, buckets.ObjectRow], Any],
             quota: quotas.Quota | None = None) -> buckets.ObjectRow:
    """Make the upload the bucket's file `key` (replacing one of that name); `on_change(conn, obj)` runs in the
    transaction that records it. Returns the object. Its reservation ends as the file is recorded (its `expires`
    becomes the completion time, which also lets the sweep drop the row a day later); the quotas are checked then
    as for a PUT (413, the upload left as it was: abort it or make room and complete again)."""
    with db.write() as conn:
        owners.writable_deposit(conn, bucket_id, who)
        upload_rows.unlocked(conn, bucket_id)  # the bucket's row, then the upload's, in every transaction (no deadlock)
        row = upload_rows.load(conn, bucket_id, key, upload_id, who, lock=True)
        upload_rows.not_completed(row)
        have = set(conn.execute(select(multipart_parts.c.part_number)
                                .where(multipart_parts.c.upload_id == upload_id)).scalars())
        missing = [n for n in range(upload_rows.part_count(row)) if n not in have]
        if missing:
            shown = ", ".join(map(str, missing[:20])) + (", ..." if len(missing) > 20 else "")
            raise BadRequest(f"{len(missing)} part(s) missing: {shown}. Send them, then complete again.",
                             errors=[{"field": "partNumber", "message": f"Missing part {n}."} for n in missing[:100]])
        conn.execute(update(multipart_uploads).where(multipart_uploads.c.id == upload_id).values(completed=utcnow()))
    parts = upload_parts(store)
    undo: Callable[[], None] | None = None
    try:
        stored, undo = parts.assemble(db, row, who)
        with db.write() as conn:
            conn.execute(update(multipart_uploads).where(multipart_uploads.c.id == upload_id)
                         .values(expires=utcnow()))
            obj, replaced = buckets.put_object(conn, bucket_id, row["key"], stored, quota=quota, field="size")
            if replaced:
                buckets.release_files(conn, store, [replaced])
            on_change(conn, obj)
    except BaseException as exc:
        if undo is not None:
            undo()
        with db.write() as conn:
            conn.execute(update(multipart_uploads).where(multipart_uploads.c.id == upload_id).values(completed=None))
        error = store_error(exc)
        if error is None:
            raise
        raise error from exc
    parts.cleanup(row)
    return obj


def abort(db: Database, store: FileStore, bucket_id: str, key: str, upload_id: str, who: Identity) -> None:
    """Drop the upload and its bytes (parts in flight then end with a 404). On a disk too full for the database to
    write, the bytes go first, which makes the room the write needs."""
    try:
        _drop(db, store, bucket_id, key, upload_id, who)
    except OperationalError as exc:
        orig = exc.orig  # SQLite's SQLITE_FULL or PostgreSQL's disk_full (53100); anything else as it is
        if getattr(orig, "sqlite_errorcode", None) != 13 and getattr(orig, "sqlstate", None) != "53100":
            raise
        with db.read() as conn:  # still the caller's own upload, not completed: its bytes may go
            owners.writable_deposit(conn, bucket_id, who)
            upload_rows.not_completed(upload_rows.load(conn, bucket_id, key, upload_id, who))
        shutil.rmtree(localparts.upload_dir(store, upload_id), ignore_errors=True)
        _drop(db, store, bucket_id, key, upload_id, who)


def _drop(db: Database, store: FileStore, bucket_id: str, key: str, upload_id: str, who: Identity) -> None:
    with db.write() as conn:
        owners.writable_deposit(conn, bucket_id, who)  # a deposit's bucket, even locked since: abort cleans up
        row = upload_rows.load(conn, bucket_id, key, upload_id, who, lock=True)
        upload_rows.not_completed(row)
        conn.execute(delete(multipart_parts).where(multipart_parts.c.upload_id == upload_id))
        conn.execute(delete(multipart_uploads).where(multipart_uploads.c.id == upload_id))
        after_commit(conn, _discard, store, upload_id, row["file_id"], row["store_upload_id"])


def _discard(store: FileStore, upload_id: str, file_id: str | None, store_upload_id: str | None) -> None:
    """An upload's bytes, once the transaction that dropped its rows committed (never recorded as a file)."""
    upload_parts(store).discard({"id": upload_id, "completed": None, "file_id": file_id,
                                  "store_upload_id": store_upload_id})


def in_progress(db: Database, bucket_id: str, who: Identity) -> list[dict]:
    """The caller's uploads not completed in the bucket, oldest first."""
    with db.read() as conn:
        owners.writable_deposit(conn, bucket_id, who)
        query = (select(multipart_uploads)
                 .where(multipart_uploads.c.bucket_id == bucket_id, multipart_uploads.c.owner_id == who.user_id,
                        multipart_uploads.c.completed.is_(None), multipart_uploads.c.expires > utcnow())
                 .order_by(multipart_uploads.c.created))
        return [dict(r) for r in conn.execute(query).mappings()]


def publish_errors(conn: Connection, bucket_id: str) -> list[dict]:
    """What stops a publish of the deposit owning `bucket_id`: each multipart upload still open on it (or being
    completed), as the reference refuses to publish with a pending upload. Publishing would lock the bucket and
    leave the upload to fail; the depositor completes or aborts it first."""
    query = (select(multipart_uploads.c.id, multipart_uploads.c.key)
             .where(multipart_uploads.c.bucket_id == bucket_id, multipart_uploads.c.expires > utcnow())
             .order_by(multipart_uploads.c.created))
    return [{"field": "files", "message": f"A multipart upload of {row.key!r} (uploadId {row.id}) is still open: "
             "complete it (POST ?uploadId=) or abort it (DELETE ?uploadId=) before publishing."}
            for row in conn.execute(query)]


def sweep(db: Database, store: FileStore, min_age: float, now: datetime | None = None) -> int:
    """The worker pass's share: remove the expired uploads (rows and bytes), and the directories of uploads no
    row knows that are older than `min_age` seconds (a crash between the directory and its row, an abort whose
    removal failed, a bucket deleted with its uploads); returns how many uploads went. `now` is when expiry is
    judged (the services' clock)."""
    now = now or utcnow()
    removed = 0
    query = select(multipart_uploads).where(
        multipart_uploads.c.expires <= now,
        or_(multipart_uploads.c.completed.is_(None), multipart_uploads.c.completed <= now - STALE_COMPLETE),
    )
    with db.read() as conn:  # most passes find none: no write transaction for them
        rows = [dict(r) for r in conn.execute(query).mappings()]
    expired = [r["id"] for r in rows]
    if expired:
        with db.write() as conn:
            conn.execute(delete(multipart_parts).where(multipart_parts.c.upload_id.in_(expired)))
            conn.execute(delete(multipart_uploads).where(multipart_uploads.c.id.in_(expired)))
    parts = upload_parts(store)
    for row in rows:
        parts.discard(row)
        removed += 1
    removed += parts.sweep(db, time.time() - min_age)
    parent = os.path.join(store.root, TMP_DIR, MULTIPART_DIR)
    try:
        names = os.listdir(parent)
    except FileNotFoundError:
        return removed
    cutoff = time.time() - min_age
    old = [n for n in names if _mtime(os.path.join(parent, n)) <= cutoff]
    if old:
        with db.read() as conn:
            known = set(conn.execute(select(multipart_uploads.c.id).where(multipart_uploads.c.id.in_(old))).scalars())
        for name in old:
            if name not in known:
                shutil.rmtree(os.path.join(parent, name), ignore_errors=True)
                removed += 1
    return removed


def _mtime(path: str) -> float:
    try:
        return os.path.getmtime(path)
    except FileNotFoundError:
        return float("inf")


def upload_json(base: str, row: dict) -> dict:
    """An upload as the API shows it (invenio-files-rest's multipart object, with its expiry)."""
    url = urls.bucket_object(base, row["bucket_id"], row["key"])
    count = upload_rows.part_count(row)
    return {
        "id": row["id"],
        "upload_id": row["id"],
        "bucket": row["bucket_id"],
        "key": row["key"],
        "size": row["size"],
        "part_size": row["part_size"],
        "last_part_number": count - 1,
        "last_part_size": upload_rows.part_range(row, count - 1)[1],
        "completed": row["completed"] is not None,
        "created": _iso(row["created"]),
        "expires": _iso(row["expires"]),
        "links": {"self": f"{url}?uploadId={row['id']}", "object": url,
                  "bucket": urls.bucket(base, row["bucket_id"])},
    }


def part_json(row: dict, part: dict) -> dict:
    offset, size = upload_rows.part_range(row, part["part_number"])
    return {"part_number": part["part_number"], "start_byte": offset, "end_byte": offset + size,
            "size": part["size"], "checksum": part["checksum"], "created": _iso(part["created"])}


def _iso(value: datetime) -> str | None:
    return isoformat(value)
