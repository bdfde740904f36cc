"""The database side of the list verbs: a page is an indexed range scan over (updated, id) after a cursor.

Rows carry what headers and renditions need (`COLUMNS`), not the metadata: decoding it was a fifth of a page."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ColumnElement, Connection, and_, func, or_, select, true

from repository.oai.args import DateRange
from repository.oai.sets import set_filter, type_columns
from repository.storage.tables.records import records

Cursor = tuple[datetime, int]
COLUMNS = (records.c.id, records.c.conceptrecid, records.c.revision, records.c.updated, records.c.deleted,
           records.c.review, *type_columns())  # fmt: skip
# A record awaiting approval was never public: harvesters do not see it at all (docs/operators/moderation.md#oai-pmh).
NOT_PENDING = or_(records.c.review.is_(None), records.c.review != "pending")


def conditions(set_spec: str | None, dates: DateRange) -> list[ColumnElement] | None:
    """The filter of a list request; None when the set cannot have members."""
    found: list[ColumnElement] = [NOT_PENDING]
    if set_spec:
        member = set_filter(set_spec)
        if member is None:
            return None
        found.append(member)
    if dates.lower is not None:
        found.append(records.c.updated >= dates.lower)
    if dates.upper is not None:
        found.append(records.c.updated < dates.upper)
    return found


def page(conn: Connection, where: list[ColumnElement], after: Cursor | None, limit: int) -> list[dict]:
    """Up to `limit` records rows (tombstones included) after `after`, in (updated, id) order."""
    query = select(*COLUMNS).where(*where)
    if after is not None:
        stamp, recid = after
        # `updated >= stamp` bounds the index range; the OR only filters rows of that one datestamp.
        query = query.where(records.c.updated >= stamp, or_(records.c.updated > stamp, records.c.id > recid))
    query = query.order_by(records.c.updated, records.c.id).limit(limit)
    return [dict(row) for row in conn.execute(query).mappings()]


def count(conn: Connection, where: list[ColumnElement]) -> int:
    """completeListSize: one COUNT over the filtered set, made on a list's first page only."""
    return conn.execute(select(func.count()).select_from(records).where(and_(true(), *where))).scalar_one()


def earliest_datestamp(conn: Connection) -> datetime | None:
    """The oldest datestamp in the repository (the index makes MIN one lookup)."""
    return conn.execute(select(func.min(records.c.updated))).scalar()


def get_header_row(conn: Connection, recid: int) -> dict | None:
    """One records row with the `COLUMNS` a header and a rendition need, tombstones included."""
    row = conn.execute(select(*COLUMNS).where(records.c.id == recid, NOT_PENDING)).mappings().first()
    return dict(row) if row is not None else None
