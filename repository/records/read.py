"""Reading one published record: the one path from a view (`/api/records/<id>`, the landing page, a record's files
and thumbnails) to the database.

`read_record()` costs one query, the record's row with its concept's counts and the copy stored at its last
indexing (`stored.py`, left packed unless used); the built record comes from this process's cache (`cache.py`),
else from that copy when it is current, else from a build (`build.py`). Whatever the source, the counts are those of the row just read, the files are shown exactly
when this reader may see them (`access.py`), and a reader's read is counted as an investigation (`stats.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from repository import urls
from repository.accounts import admin, users
from repository.accounts.tokens import Identity
from repository.config import Settings
from repository.errors import ApiError, Gone, NotFound
from repository.files import buckets
from repository.records import build, stored
from repository.records.access import reader_may_read
from repository.records.cache import RecordCache
from repository.records.deletion import Deleted, deletion_of
from repository.records.lookups import DatabaseLookups
from repository.records.stats import Usage, Visit
from repository.search.backend import IndexBuilder
from repository.storage import Connection, Database


class Moved(ApiError):
    """A concept id: the answer is a redirect to its latest version."""

    status = 301
    default_message = "Moved Permanently"

    def __init__(self, location: str, recid: int) -> None:
        super().__init__(headers={"Location": location})
        self.location, self.recid = location, recid

    def body(self) -> dict:
        return {**super().body(), "location": self.location}


@dataclass(frozen=True)
class RecordRead:
    """A record as read for one reader: its row (with its concept's counts; its metadata unpacked only if the record
    was built now, see `build.unpack_metadata`), its ETag for the format asked for, and the record, None when the
    reader's copy is current (the ETag matched: nothing was built)."""

    row: dict
    etag: str
    record: dict | None


def record_row(db: Database, settings: Settings, recid: int) -> dict:
    """The records row of `recid` with its concept's counts: Moved (301) for a concept id, Gone (410) for a
    deleted record, NotFound for anything else."""
    with db.read() as conn:
        return _live(conn, settings, recid, build.get_record_row_with_counts(conn, recid))


def _row_and_copy(db: Database, settings: Settings, search: IndexBuilder, recid: int) -> tuple[dict, bytes | None]:
    """`record_row` with the record's stored copy when current (`stored.row_with_copy`), in one query."""
    found = stored.row_with_copy(db, settings, search, recid)
    if found is None:
        with db.read() as conn:
            raise _missing(conn, settings, recid)
    row, copy = found
    if row["deleted"] is not None:
        with db.read() as conn:
            raise _gone(conn, recid)
    if row["access_right"] is None:  # a row of the previous release: who may see its files is in its metadata
        build.unpack_metadata(db.engine.dialect, row)
    return row, copy


def _live(conn: Connection, settings: Settings, recid: int, row: dict | None) -> dict:
    """`row` (that of `recid`, or None) when it is a live record's; else the errors of `record_row`."""
    if row is None:
        raise _missing(conn, settings, recid)
    if row["deleted"] is not None:
        raise _gone(conn, recid)
    return row


def _check_pending(db: Database, row: dict, who: Identity | None) -> None:
    """A record awaiting approval is not public: NotFound for anyone but its owner, administrators and moderators
    (docs/operators/moderation.md)."""
    if row.get("review") != "pending" or (who is not None and who.user_id == row["owner_id"]):
        return
    if who is not None:
        with db.read() as conn:
            if admin.staff_role(users.get_user(conn, who.user_id)):
                return
    raise NotFound("PID does not exist.")


def _gone(conn: Connection, recid: int) -> Gone:
    """The 410 of a deleted record: with its reason and date when its owner deleted it."""
    deletion = deletion_of(conn, recid)
    return Deleted(deletion) if deletion is not None else Gone("PID has been deleted.")


def _missing(conn: Connection, settings: Settings, recid: int) -> ApiError:
    """The error for `recid` without a records row: Moved to its latest version for a concept id, else NotFound."""
    latest = build.latest_version(conn, recid) if build.is_concept(conn, recid) else None
    if latest is not None:
        return Moved(urls.record_api(settings.BASE_URL, latest), latest)
    return NotFound("PID does not exist.")


def etag(row: dict, with_files: bool, form: str, with_counts: bool) -> str:
    """The ETag of record `row` in format `form`: its revision and whether it shows files; and, for a format that
    shows the counts, those too (a view or download of any version changes the body without a new revision)."""
    counts = ""
    if with_counts:
        counts = "-" + ".".join(str(n) for n in (*row[build.CONCEPT_COUNTS], *row[build.VERSION_COUNTS]))
    return f'"{row["revision"]}-{form}-{int(with_files)}{counts}"'


def _no_variant() -> tuple[str, bool]:
    return "", False


def never(tag: str) -> bool:
    """No ETag matches (no If-None-Match was sent)."""
    return False


def read_record(db: Database, settings: Settings, search: IndexBuilder, cache: RecordCache, usage: Usage,
                recid: int, who: Identity | None, *, visit: Visit | None = None,
                variant: Callable[[], tuple[str, bool]] = _no_variant,
                unchanged: Callable[[str], bool] = never) -> RecordRead:
    """Record `recid` as `who` may see it (errors of `record_row`), counted as an investigation of `visit`
    (a reader's request; None: not a reader's, not counted).

    `variant()` gives the format's name and whether it shows the counts, for the ETag (see `etag`); it is asked
    once the record is known to exist, so that a missing record is a 404 before a format is refused (406).
    `unchanged(etag)` (the ETag without its quotes) tells that the reader's copy is current: then no record is
    built (the read still counts: COUNTER counts a 304 as it does a 200)."""
    row, copy = _row_and_copy(db, settings, search, recid)
    _check_pending(db, row, who)
    form, with_counts = variant()
    with_files = reader_may_read(db, row, who)
    tag = etag(row, with_files, form, with_counts)
    if visit is not None:
        usage.view(row, visit)
    if unchanged(tag.strip('"')):
        return RecordRead(row, tag, None)
    key = cache.key(row, with_files)
    record = cache.get(key)
    if record is None:
        # The copy stored when the record was last indexed, if current; else built now.
        record = stored.stored_record(db.engine.dialect, row, copy, with_files) if copy is not None else None
        if record is None:
            build.unpack_metadata(db.engine.dialect, row)
            with db.read() as conn:
                record = build.build_records(conn, settings, DatabaseLookups(conn), [row], with_files)[0]
        cache.put(key, record)
    else:
        # The counts of this version and of its concept came with the row: as of this moment.
        record = {**record, "stats": build.current_stats(None, row)}
    return RecordRead(row, tag, record)


def readable_files(db: Database, settings: Settings, recid: int, who: Identity | None) -> tuple[dict, list[buckets.ObjectRow]]:
    """Record `recid`'s row and its file objects, in order: NotFound (404) to a reader who may not see them
    (and the errors of `record_row`)."""
    row = record_row(db, settings, recid)
    _check_pending(db, row, who)
    if not reader_may_read(db, row, who):
        raise NotFound("The record's files are not available to you.")
    with db.read() as conn:
        return row, buckets.list_objects(conn, row["bucket_id"])


def newest_version(db: Database, recid: int) -> int:
    """The newest published version of the concept of `recid` (a record, taken down or not, or a concept id):
    NotFound for an unknown id, Gone (410) when every version was taken down."""
    with db.read() as conn:
        concept = build.concept_of(conn, recid)
        newest = build.latest_version(conn, concept) if concept is not None else None
        waiting = newest is None and concept is not None and build.awaiting_approval(conn, concept)
    if concept is None or waiting:
        raise NotFound("PID does not exist.")
    if newest is None:
        raise Gone("Every version of this record has been deleted.")
    return newest
