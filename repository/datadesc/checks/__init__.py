"""Data-description documents in deposits (issue 10): validation rows kept in step with the files of each bucket,
validated in the background, reported per file, copied to the record at publish, optionally blocking it.

The calls made from elsewhere, each inside the caller's write transaction:
- `file_changed(conn, store, bucket_id, key)` after a file of a bucket is written, replaced or deleted;
- `publish_errors(conn, settings, dep)` in publish, before its errors are raised;
- `copy_to_record(conn, bucket_id, recid)` in publish, once the record's snapshot bucket exists.
Validation starts right after the request's commit, in a thread of the server process (`Runner`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from flask import after_this_request, current_app, g, has_request_context
from sqlalchemy import Connection

from repository.config import Settings
from repository.datadesc.checks import rows
from repository.datadesc.checks.runner import Runner
from repository.files.buckets import FileStore

__all__ = ["Runner", "copy_to_record", "copy_to_snapshot", "file_changed", "install", "publish_errors"]

log = logging.getLogger("repository.datadesc.checks")


def install(services) -> Callable[[], None]:  # type: ignore[no-untyped-def]
    """Create the process's runner (in `services.extras["validations"]`); returns the worker's periodic call."""
    runner = Runner(services.db, services.extras["files"])
    services.extras["validations"] = runner
    return runner.on_pass


def file_changed(conn: Connection, store: FileStore, bucket_id: str, key: str | None = None) -> None:
    """Keep the bucket's validation rows in step after `key` was written or removed (None: look at the rows only)."""
    if rows.sync_bucket(conn, store, bucket_id, [key] if key is not None else ()):
        _after_commit()


def publish_errors(conn: Connection, settings: Settings, dep: dict) -> list[dict]:
    """With DATADESC_BLOCK_PUBLISH, one 400 entry per invalid or pending document of the deposit; else none."""
    errors, waiting = rows.publish_errors(conn, FileStore(settings.FILES_ROOT), dep["bucket_id"])
    if waiting:
        # Rows created here are lost if the publish fails: they are created again after the rollback.
        _after_commit(ensure=dep["bucket_id"])
    return errors if settings.DATADESC_BLOCK_PUBLISH else []


def copy_to_record(conn: Connection, bucket_id: str, recid: int) -> None:
    """Give the record's snapshot bucket copies of the deposit's reports (pending ones are validated there too)."""
    if rows.copy_to_record(conn, bucket_id, recid):
        _after_commit()


def copy_to_snapshot(conn: Connection, bucket_id: str, target: str) -> None:
    """A new-version draft's bucket starts with the reports of the record it copies."""
    if rows.copy_reports(conn, bucket_id, target):
        _after_commit()


def _after_commit(ensure: str | None = None) -> None:
    """Start validating once the request's transaction is over (outside a request, the worker's pass does it)."""
    if not has_request_context():
        return
    if "datadesc_ensure" not in g:
        g.datadesc_ensure = set()
        after_this_request(_start)
    if ensure is not None:
        g.datadesc_ensure.add(ensure)


def _start(response):  # type: ignore[no-untyped-def]
    # Runs after the view, so after its commit (or its rollback: then there is simply nothing to validate).
    services = current_app.extensions["repository"]
    runner: Runner | None = services.extras.get("validations")
    if runner is None:
        return response
    try:
        for bucket_id in sorted(g.datadesc_ensure):
            with services.db.write() as conn:
                rows.ensure_rows(conn, runner.store, bucket_id)
        runner.kick()
    except Exception:  # noqa: BLE001 - the answer stands; the worker's pass validates what is pending
        log.exception("could not start the validation of data-description documents")
    return response
