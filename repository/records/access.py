"""Who may see a record's files: everyone for open records and for embargoed ones from the embargo date on
(nobody has to act: the date is compared at each request), the owner, and whoever holds a live grant from an
accepted access request (`access_requests`; read only when a connection is given) otherwise."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import Connection

from repository.accounts.tokens import Identity
from repository.records import access_requests
from repository.storage import Database


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


def can_read_files(record: dict, who: Identity | None, conn: Connection | None = None) -> bool:
    """Files of `record` (a records row) are readable by `who`: with `conn`, a grant counts too (for a restricted
    record); without, only what the access right and ownership allow."""
    if who is not None and who.user_id == record["owner_id"]:
        return True
    if record["deleted"] is not None:
        return False
    if files_open(record["metadata"]):
        return True
    return (conn is not None and who is not None and record["metadata"].get("access_right") == "restricted"
            and access_requests.has_grant(conn, record["id"], who.user_id))


def reader_may_read(db: Database, record: dict, who: Identity | None) -> bool:
    """`can_read_files` with grants, reading the database only when a grant could make the difference."""
    if who is None or can_read_files(record, who) or record["metadata"].get("access_right") != "restricted":
        return can_read_files(record, who)
    with db.read() as conn:
        return can_read_files(record, who, conn)
