"""Background validation: a small thread of the server process validates pending rows right after the commit
that made them pending, and the worker's pass (`indexer.on_pass`) takes whatever a crash or restart left."""

from __future__ import annotations

import datetime as dt
import logging
from pathlib import Path

from repository.datadesc import detect_kind, pending, validate_document
from repository.datadesc.checks import rows
from repository.datadesc.report import MAX_DOCUMENT_BYTES
from repository.files import buckets
from repository.files.store import FileStore
from repository.ondemand import OnDemandThread
from repository.storage import Database
from repository.storage.tables.validations import datadesc_validations
from repository.timeutil import utcnow

log = logging.getLogger("repository.datadesc.checks")

# A claim older than this is taken over: its validator died (the biggest tables take far less).
STALE_AFTER = dt.timedelta(minutes=15)
BATCH = 50
# The after-commit work that starts validating (`after_commit(conn, WAKE)`, or with a bucket whose rows to create
# first): wired on the Database by the process's runner.
WAKE = "datadesc.validate"


def validate_row(db: Database, store: FileStore, row: dict) -> bool:
    """Validate one claimed row against its bucket's current files; False if the row changed meanwhile."""
    with db.read() as conn:
        objs = {o["key"]: o for o in buckets.list_objects(conn, row["bucket_id"])}
        current = conn.execute(
            datadesc_validations.select()
            .where(datadesc_validations.c.bucket_id == row["bucket_id"], datadesc_validations.c.key == row["key"])
        ).mappings().first()
    obj = objs.get(row["key"])
    if current is None or current["generation"] != row["generation"]:
        return False  # made pending again since the claim: the next pass takes it
    if obj is None or obj["file_id"] != current["file_id"]:
        # Changed by a path that does not keep the rows in step (a rename): bring them in step now.
        with db.write() as conn:
            rows.ensure_rows(conn, store, row["bucket_id"])
        return False
    with open(store.path(obj["uri"]), "rb") as handle:
        data = handle.read(MAX_DOCUMENT_BYTES + 1)
    kind = current["kind"]
    if obj["size"] > rows.SNIFF_BYTES and kind == "software_corpus" and len(data) <= MAX_DOCUMENT_BYTES:
        kind = detect_kind(obj["key"], data)  # it was only sniffed: now read whole
    deps: dict[str, str | None] = {}

    def lookup(name: str) -> Path | None:
        # Every name the descriptor makes us look up is remembered, found or not: a later change to it re-runs this.
        key = rows.sibling_key(obj["key"], name)
        found = objs.get(key)
        deps[key] = found["file_id"] if found else None
        return Path(store.path(found["uri"])) if found else None

    try:
        report = validate_document(kind, data, lookup).to_dict() if kind is not None else None
    except OSError:
        raise  # a file that could not be read: left claimed, retried once the claim is stale
    except Exception:  # noqa: BLE001 - the same bytes would fail again: say so rather than stay pending forever
        log.exception("validating %s in bucket %s failed", row["key"], row["bucket_id"])
        message = "The document could not be validated (an error of the service, logged): replace it to retry."
        report = {**pending(kind), "status": "invalid", "errors": [{"field": "", "message": message, "code": "error"}],
                  "summary": {"errors": 1}}  # fmt: skip
    with db.write() as conn:
        return rows.store_result(conn, row, report, deps)


class Runner(OnDemandThread):
    """Validates pending rows in a thread started on demand (`kick()`), one thread per process at most."""

    thread_name = "datadesc-validations"

    def __init__(self, db: Database, store: FileStore) -> None:
        super().__init__()
        self.db = db
        self.store = store
        db.wire(WAKE, self.wake)

    def wake(self, bucket_id: str | None = None) -> None:
        """After a transaction that made documents pending: create the rows `bucket_id` lacks (a failed publish's
        were rolled back with it), then validate in the background."""
        if bucket_id is not None:
            with self.db.write() as conn:
                rows.ensure_rows(conn, self.store, bucket_id)
        self.kick()

    def process_pending(self, limit: int = BATCH) -> int:
        """Validate up to `limit` pending rows nobody else works on; returns how many were stored."""
        with self._busy:
            stale_before = utcnow() - STALE_AFTER
            with self.db.read() as conn:
                due = rows.claimable(conn, stale_before, limit)
            done = 0
            for row in due:
                with self.db.write() as conn:
                    if not rows.claim(conn, row, stale_before):
                        continue
                try:
                    done += validate_row(self.db, self.store, row)
                except Exception:  # noqa: BLE001 - left claimed: retried once the claim is stale
                    log.exception("validating %s in bucket %s failed", row["key"], row["bucket_id"])
            return done

    def on_pass(self) -> None:
        """The worker's periodic call: rows left pending by a crash or a restart."""
        self.process_pending()
