"""What the sitemaps list (repository.pages.sitemap): every published version that is not taken down, in files of
consecutive record ids, and the communities.

A file holds the records whose ids fall in one range of `per_file` ids, so file `n` is one indexed range scan and
the sitemap index one grouped scan: no file needs the records before it, and none is ever read whole into memory.
Ids of drafts and deleted records leave gaps, so a file may hold fewer than `per_file` records, never more.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select

from repository.storage import Database
from repository.storage.tables.communities import communities
from repository.storage.tables.records import records

# Record ids are 32-bit integers on PostgreSQL, where a bound past them is an error rather than no match.
LAST_ID = 2**31 - 1


@dataclass(frozen=True)
class Entry:
    """One URL's key (a record id, a community identifier) and when it last changed."""

    key: int | str
    updated: datetime


def record_files(db: Database, per_file: int) -> list[Entry]:
    """The numbers of the record files that list at least one record, each with its newest change."""
    number = (records.c.id // per_file).label("number")
    query = (select(number, func.max(records.c.updated)).where(records.c.deleted.is_(None), records.c.review.is_(None))
             .group_by(number).order_by(number))
    with db.read() as conn:
        return [Entry(int(row[0]), row[1]) for row in conn.execute(query)]


def record_file(db: Database, number: int, per_file: int) -> list[Entry]:
    """The records of file `number` (ids from `number * per_file`, `per_file` of them), by id."""
    first = number * per_file
    if first > LAST_ID:
        return []
    last = min(first + per_file - 1, LAST_ID)
    query = (select(records.c.id, records.c.updated)
             .where(records.c.deleted.is_(None), records.c.review.is_(None), records.c.id >= first, records.c.id <= last)
             .order_by(records.c.id))
    with db.read() as conn:
        return [Entry(row.id, row.updated) for row in conn.execute(query)]


def community_count(db: Database) -> tuple[int, datetime | None]:
    """How many communities there are, and the newest change among them."""
    with db.read() as conn:
        count, newest = conn.execute(select(func.count(), func.max(communities.c.updated))).one()
    return count, newest


def community_range(db: Database, offset: int, limit: int) -> list[Entry]:
    """`limit` communities from the `offset`-th, by identifier (their files are few: an offset is cheap here)."""
    query = (select(communities.c.identifier, communities.c.updated).order_by(communities.c.identifier)
             .limit(limit).offset(offset))
    with db.read() as conn:
        return [Entry(row.identifier, row.updated) for row in conn.execute(query)]
