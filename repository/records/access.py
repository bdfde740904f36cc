"""Who may see a record's files: everyone for open records and for embargoed ones from the embargo date on
(nobody has to act: the date is compared at each request), the owner, and whoever holds a live grant from an
accepted access request (`access_requests`; read only when a connection is given) otherwise."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection, select

from repository.accounts.tokens import Identity
from repository.errors import NotFound
from repository.records import access_requests
from repository.storage import Database
from repository.storage.tables.deposits import deposits
from repository.storage.tables.records import records
from repository.timeutil import utcnow


def files_open(metadata: dict, today: dt.date | None = None) -> bool:
    """Whether a record's files are public today."""
    right = metadata.get("access_right", "open")
    if right == "open":
        return True
    if right == "embargoed":
        embargo = metadata.get("embargo_date")
        today = today or dt.datetime.now(dt.UTC).date()
        return embargo is None or dt.date.fromisoformat(embargo) <= today
    return False


def access_columns(metadata: dict) -> dict[str, str | None]:
    """The columns of a records row that say who may see its files (migration 0018), from its metadata: the access
    right, and the date an embargo lifts while it is still ahead (the worker reindexes the record then, and clears
    it: see `row_files_open`)."""
    right = metadata.get("access_right", "open")
    embargo = metadata.get("embargo_date")
    ahead = right == "embargoed" and embargo and embargo > utcnow().date().isoformat()
    return {"access_right": right, "embargo_until": embargo if ahead else None}


def access_right(row: Mapping[str, Any]) -> str:
    """A records row's access right: its column, else (a row of the previous release) its metadata's."""
    right = row.get("access_right")
    return right if right is not None else row["metadata"].get("access_right", "open")


def row_files_open(row: Mapping[str, Any], today: dt.date | None = None) -> bool:
    """`files_open` of a records row, from its columns: an embargoed record's files are open once no lift date is
    ahead (`embargo_until`: NULL when the date has passed, or had passed at publication, or is none), which is
    `files_open`'s embargo date compared with today. The metadata is unpacked only for a row of the previous
    release (no access_right)."""
    if row.get("access_right") is None:
        return files_open(row["metadata"], today)
    return files_open({"access_right": row["access_right"], "embargo_date": row["embargo_until"]}, today)


def can_read_files(record: Mapping[str, Any], who: Identity | None, conn: Connection | None = None) -> bool:
    """Files of `record` (a records row) are readable by `who`: with `conn`, a grant counts too (for a restricted
    record); without, only what the access right and ownership allow. A record taken down has no readable files,
    not even for its owner."""
    if record["deleted"] is not None:
        return False
    if who is not None and who.user_id == record["owner_id"]:
        return True
    if row_files_open(record):
        return True
    return (conn is not None and who is not None and access_right(record) == "restricted"
            and access_requests.has_grant(conn, record["id"], who.user_id))


def reader_may_read(db: Database, record: Mapping[str, Any], who: Identity | None) -> bool:
    """`can_read_files` with grants, reading the database only when a grant could make the difference."""
    if who is None or can_read_files(record, who) or access_right(record) != "restricted":
        return can_read_files(record, who)
    with db.read() as conn:
        return can_read_files(record, who, conn)


def readable_record(conn: Connection, bucket_id: str, who: Identity | None) -> dict | None:
    """For the bucket interface: the records row owning `bucket_id` when `who` may read its files, None for a
    bucket of their own deposit; NotFound otherwise (a hidden file's existence never shows)."""
    rec = conn.execute(select(records).where(records.c.bucket_id == bucket_id)).mappings().first()
    if rec is not None:
        if can_read_files(dict(rec), who, conn):
            return dict(rec)
        raise NotFound("The file does not exist.")
    dep = conn.execute(select(deposits.c.id, deposits.c.owner_id).where(deposits.c.bucket_id == bucket_id)).first()
    if dep is None or who is None or dep.owner_id != who.user_id:
        raise NotFound("The file does not exist.")
    # The deposit of a record taken down: its files are gone for its owner too (as through the record's bucket).
    if conn.execute(select(records.c.deleted).where(records.c.id == dep.id)).scalar() is not None:
        raise NotFound("The file does not exist.")
    return None
