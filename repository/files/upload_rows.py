"""The rows of a multipart upload as each step of the protocol reads them (repository.files.multipart, and its
S3 side repository.files.objectparts): found only by its owner, for its own file and bucket, until it expires; the
bucket's row held before the upload's in every transaction (no deadlock); parts numbered from 0, each `part_size`
bytes but the last."""

from __future__ import annotations

from sqlalchemy import Connection, select

from repository.accounts.tokens import Identity
from repository.errors import BadRequest, Conflict, Forbidden, NotFound
from repository.files import buckets
from repository.files.keys import upload_key
from repository.storage.tables.multipart import multipart_uploads
from repository.timeutil import utcnow


def part_count(row: dict) -> int:
    return -(-row["size"] // row["part_size"])


def part_range(row: dict, number: int) -> tuple[int, int]:
    """(offset, size) of part `number`: every part is `part_size` bytes but the last, which holds the rest."""
    offset = number * row["part_size"]
    return offset, min(row["part_size"], row["size"] - offset)


def not_found() -> NotFound:
    return NotFound("The multipart upload does not exist (wrong uploadId, another file or bucket, aborted, or "
                    "expired): start a new one with POST ?uploads.")


def load(conn: Connection, bucket_id: str, key: str, upload_id: str, who: Identity, lock: bool = False) -> dict:
    """The upload `upload_id` of `who` for `key` in `bucket_id`; NotFound for anything else, once expired too."""
    query = select(multipart_uploads).where(multipart_uploads.c.id == upload_id)
    row = conn.execute(query.with_for_update() if lock else query).mappings().first()
    if row is None or row["bucket_id"] != bucket_id or row["owner_id"] != who.user_id:
        raise not_found()
    if row["key"] != _upload_key(key):
        raise not_found()
    if row["completed"] is None and row["expires"] <= utcnow():
        raise NotFound("The multipart upload expired and its parts are being removed: start a new one.")
    return dict(row)


def _upload_key(key: str) -> str:
    try:
        return upload_key(key)
    except BadRequest:
        raise not_found() from None


def unlocked(conn: Connection, bucket_id: str) -> None:
    if buckets.hold_bucket(conn, bucket_id)["locked"]:
        raise Forbidden("Bucket is locked for modifications.")


def not_completed(row: dict) -> None:
    if row["completed"] is not None:
        raise Conflict("The multipart upload is completed (or its completion is in progress): it takes no more "
                       "parts, and completes once.")
