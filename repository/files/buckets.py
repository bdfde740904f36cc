"""Buckets of object versions that point at file instances, so a snapshot shares bytes instead of copying them;
the contents themselves live in the store (`repository.files.store`)."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Iterable
from datetime import datetime
from typing import TypedDict, cast

from sqlalchemy import Connection, delete, func, insert, select, update

from repository.errors import (
    BadRequest,
    Forbidden,
    NotFound,
)
from repository.files import quotas
from repository.files.keys import check_key, guess_mimetype, normalise_key
from repository.files.store import FileStore, StoredFile
from repository.storage.engine import after_commit
from repository.storage.tables.files import buckets, file_instances, objects
from repository.timeutil import utcnow


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


def file_checksums(obj: ObjectRow | dict) -> dict[str, str]:
    """Beside the specification's `checksum` (md5:<hex>): each digest in hex, the SHA-256 for files stored since it
    is computed on the way in (migration 0015)."""
    found = {"md5": obj["checksum"].removeprefix("md5:")}
    if obj.get("sha256"):
        found["sha256"] = obj["sha256"]
    return found


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


def snapshot(conn: Connection, source_bucket: str, locked: bool, listed: list[ObjectRow] | None = None) -> str:
    """A new bucket holding the same file instances as `source_bucket` (no bytes copied); `listed`: its objects,
    when the caller holds the bucket and has listed them already."""
    target = create_bucket(conn)
    now = utcnow()
    for obj in list_objects(conn, source_bucket) if listed is None else listed:
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


def resync(conn: Connection, source_bucket: str, target: str, listed: list[ObjectRow]) -> list[str]:
    """Make `target` hold the objects `listed` of `source_bucket` (its lock kept as it is): a version's files fixed
    in its deposit's bucket become the record's (docs/researchers/corrections.md#fixing-files). Returns the file ids
    `target` pointed at before, for `release_files`."""
    hold_bucket(conn, target)
    before = [o["file_id"] for o in list_objects(conn, target)]
    conn.execute(delete(objects).where(objects.c.bucket_id == target))
    now = utcnow()
    for obj in listed:
        conn.execute(insert(objects).values(version_id=str(uuid.uuid4()), bucket_id=target, key=obj["key"],
                                            file_id=obj["file_id"], mimetype=obj["mimetype"],
                                            position=obj["position"], created=now, updated=now))  # fmt: skip
    conn.execute(update(buckets).where(buckets.c.id == target).values(updated=now))
    return before


def unlock(conn: Connection, bucket_id: str) -> None:
    conn.execute(update(buckets).where(buckets.c.id == bucket_id).values(locked=False, updated=utcnow()))


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
        after_commit(conn, functools.partial(store.discard, row.uri))
