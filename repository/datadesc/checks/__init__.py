"""Data-description documents in deposits (issue 10): validation rows kept in step with the files of each bucket,
validated in the background, reported per file, copied to the record at publish, optionally blocking it.

The calls made from elsewhere, each inside the caller's write transaction:
- `file_changed(conn, store, bucket_id, key)` after a file of a bucket is written, replaced or deleted;
- `publish_errors(conn, settings, bucket_id, listed)` in publish, before its errors are raised;
- `copy_to_snapshot(conn, bucket_id, target)` in publish once the record's snapshot bucket exists, and when a new
  version's draft bucket is made from a record's.
Validation starts right after the caller's commit, in a thread of the process (`Runner`, wired on the Database).
"""

from __future__ import annotations

from sqlalchemy import Connection

from repository.config import Settings
from repository.datadesc.checks import rows
from repository.datadesc.checks.runner import WAKE, Runner
from repository.files.buckets import ObjectRow
from repository.files.s3store import store_for
from repository.files.store import FileStore
from repository.storage.engine import after_commit

__all__ = ["Runner", "copy_to_snapshot", "file_changed", "publish_errors"]


def file_changed(conn: Connection, store: FileStore, bucket_id: str, key: str | None = None) -> None:
    """Keep the bucket's validation rows in step after `key` was written or removed (None: look at the rows only)."""
    if rows.sync_bucket(conn, store, bucket_id, [key] if key is not None else ()):
        after_commit(conn, WAKE)


def publish_errors(conn: Connection, settings: Settings, bucket_id: str, listed: list[ObjectRow]) -> list[dict]:
    """With DATADESC_BLOCK_PUBLISH, one 400 entry per invalid or pending document of the deposit's bucket (held,
    its objects `listed`); else none."""
    errors, waiting = rows.publish_errors(conn, store_for(settings), bucket_id, listed)
    if waiting:
        # Rows created here are lost if the publish fails: they are created again after the rollback.
        after_commit(conn, WAKE, bucket_id, after_rollback=True)
    return errors if settings.DATADESC_BLOCK_PUBLISH else []


def copy_to_snapshot(conn: Connection, bucket_id: str, target: str) -> None:
    """A snapshot of a bucket gets copies of its reports: a published record's of its deposit's (pending ones are
    validated there too), a new-version draft's of the record it copies."""
    if rows.copy_reports(conn, bucket_id, target):
        after_commit(conn, WAKE)


def replace_snapshot_reports(conn: Connection, bucket_id: str, target: str) -> None:
    """A snapshot whose files were set again from its bucket (a version's fixed files): its reports are the
    bucket's again."""
    rows.drop_reports(conn, target)
    copy_to_snapshot(conn, bucket_id, target)
