"""Quotas: how many bytes one deposit's bucket may hold (BUCKET_QUOTA_BYTES, the reference's 50 GB per record) and
how many one user may keep in all (USER_QUOTA_BYTES; 0: no limit).

What counts: a bucket uses the sizes of its files plus the sizes reserved by its multipart uploads that have not
expired (an upload reserves its whole size at initiate, so two uploads cannot both start into the same room). A
user uses every distinct file instance in the buckets of their deposits and records — a new version shares its
unchanged files with the old one, so they count once — plus their own unexpired multipart uploads. A replaced
file counts as the difference: its old bytes are credited when the new ones come.

When: before any byte is written when the size is known (multipart initiate, a PUT's Content-Length), while
streaming otherwise (the write stops at the room left), and last in the transaction that records the file, under
the locks that make it exact: the bucket's row (every write to a bucket holds it already), then the owner's
`users` row. The user row is what serialises two uploads of one user to two different buckets, which hold
different bucket locks: without it both could see the other's bytes uncommitted and both pass. It is taken only
when a user limit is set, in the short recording transaction (not while the bytes stream), and always after the
bucket's row, so no two writers wait on each other in opposite orders. On SQLite a write transaction holds the
whole database, which serialises the same writers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, func, select, union

from repository.errors import PayloadTooLarge
from repository.storage.tables.accounts import users
from repository.storage.tables.deposits import deposits
from repository.storage.tables.files import file_instances, objects
from repository.storage.tables.multipart import multipart_uploads
from repository.storage.tables.records import records
from repository.timeutil import utcnow


@dataclass(frozen=True)
class Quota:
    """The two limits in bytes; 0 means no limit."""

    bucket_bytes: int
    user_bytes: int

    @classmethod
    def of(cls, settings: Any) -> Quota:
        return cls(settings.BUCKET_QUOTA_BYTES, settings.USER_QUOTA_BYTES)


@dataclass(frozen=True)
class Use:
    """What one limit sees: bytes in stored files and bytes reserved by open multipart uploads."""

    scope: str  # bucket | user
    limit: int
    stored: int
    reserved: int

    @property
    def used(self) -> int:
        return self.stored + self.reserved

    @property
    def room(self) -> int:
        return max(self.limit - self.used, 0)


def _human(size: int) -> str:
    for unit, factor in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if size >= factor:
            return f"{size / factor:.2f} {unit}"
    return f"{size} bytes"


def exceeded(use: Use, adding: int | None, field: str) -> PayloadTooLarge:
    """The 413 naming the limit, the use and what the request would have added (None: a body of unknown length
    that went past the room left)."""
    whose = "this deposit's files" if use.scope == "bucket" else "all your files"
    reserved = f" (of which {use.reserved} reserved by open multipart uploads)" if use.reserved else ""
    needs = "the upload went past them" if adding is None else f"this upload needs {adding}"
    message = (f"Quota exceeded: the limit for {whose} is {use.limit} bytes ({_human(use.limit)}); {use.used} bytes "
               f"are in use{reserved}, so {use.room} bytes are left and {needs}. Nothing was stored. Remove files "
               "or abort open multipart uploads, or ask the operator for more room.")
    item: dict[str, Any] = {
        "field": field, "message": f"The {use.scope} quota of {use.limit} bytes would be exceeded.",
        "quota": use.scope, "limit": use.limit, "used": use.used, "stored": use.stored, "reserved": use.reserved}
    if adding is not None:
        item["requested"] = adding
    return PayloadTooLarge(message, errors=[item])


def owner_of(conn: Connection, bucket_id: str) -> int | None:
    """The user whose deposit writes to `bucket_id` (None for another kind of bucket)."""
    return conn.execute(select(deposits.c.owner_id).where(deposits.c.bucket_id == bucket_id)).scalar()


def _open_uploads(*where: Any) -> Any:
    return (select(func.coalesce(func.sum(multipart_uploads.c.size), 0))
            .where(multipart_uploads.c.expires > utcnow(), *where))


def bucket_use(conn: Connection, bucket_id: str, limit: int) -> Use:
    stored = conn.execute(
        select(func.coalesce(func.sum(file_instances.c.size), 0))
        .select_from(objects.join(file_instances, file_instances.c.id == objects.c.file_id))
        .where(objects.c.bucket_id == bucket_id)
    ).scalar_one()
    reserved = conn.execute(_open_uploads(multipart_uploads.c.bucket_id == bucket_id)).scalar_one()
    return Use("bucket", limit, int(stored), int(reserved))


def user_use(conn: Connection, user_id: int, limit: int) -> Use:
    owned = union(select(deposits.c.bucket_id).where(deposits.c.owner_id == user_id),
                  select(records.c.bucket_id).where(records.c.owner_id == user_id)).subquery()
    instances = select(objects.c.file_id).where(objects.c.bucket_id.in_(select(owned.c.bucket_id))).distinct()
    stored = conn.execute(
        select(func.coalesce(func.sum(file_instances.c.size), 0)).where(file_instances.c.id.in_(instances))
    ).scalar_one()
    reserved = conn.execute(_open_uploads(multipart_uploads.c.owner_id == user_id)).scalar_one()
    return Use("user", limit, int(stored), int(reserved))


def hold_user(conn: Connection, user_id: int) -> None:
    """Lock the owner's row until the transaction ends (see the module's note on the order of locks)."""
    conn.execute(select(users.c.id).where(users.c.id == user_id).with_for_update())


def uses(conn: Connection, quota: Quota, bucket_id: str, hold: bool = False) -> list[Use]:
    """The limits that apply to `bucket_id`, with their current use; `hold` takes the owner's row lock first (the
    caller holds the bucket's row already)."""
    found = []
    if quota.bucket_bytes:
        found.append(bucket_use(conn, bucket_id, quota.bucket_bytes))
    owner = owner_of(conn, bucket_id) if quota.user_bytes else None
    if owner is not None:
        if hold:
            hold_user(conn, owner)
        found.append(user_use(conn, owner, quota.user_bytes))
    return found


def replaced_size(conn: Connection, bucket_id: str, key: str) -> int:
    """The size of the file `key` already in the bucket (0 if none): a replacement only needs the difference."""
    size = conn.execute(
        select(file_instances.c.size)
        .select_from(objects.join(file_instances, file_instances.c.id == objects.c.file_id))
        .where(objects.c.bucket_id == bucket_id, objects.c.key == key)
    ).scalar()
    return int(size or 0)


def check(conn: Connection, quota: Quota, bucket_id: str, adding: int, field: str, credit: int = 0,
          hold: bool = False) -> None:
    """413 unless `adding` more bytes (less `credit`, the file they replace) fit every limit."""
    for use in uses(conn, quota, bucket_id, hold):
        if adding - credit > use.room:
            raise exceeded(use, adding, field)


def room(conn: Connection, quota: Quota, bucket_id: str, credit: int = 0) -> tuple[int, Use] | None:
    """The most bytes a file of unknown size may have (the tightest limit, with the `credit` of the file it
    replaces) and that limit's use; None when no limit applies."""
    found = [(use.room + credit, use) for use in uses(conn, quota, bucket_id)]
    return min(found, key=lambda pair: pair[0]) if found else None


def enforce(conn: Connection, quota: Quota, bucket_id: str, before: list[Use], size: int, field: str) -> None:
    """Last check, in the transaction that has just recorded a file of `size` bytes (the bucket's and the owner's
    rows held since `before` was read with `uses(..., hold=True)`): 413 — rolling the change back — when a total
    grew past its limit. A change that does not grow a total passes, even over a limit lowered since (replacing a
    file by a smaller one; but a replaced file a record still holds frees nothing of the user's total)."""
    for prior, use in zip(before, uses(conn, quota, bucket_id), strict=True):
        if use.used > use.limit and use.used > prior.used:
            raise exceeded(prior, size, field)
