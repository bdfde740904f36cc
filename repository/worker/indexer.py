"""The indexer: applies the outbox's rows right after the commit that enqueued them (wired on the Database): index
rows in the request, before it returns (`outbox.APPLY`), DOI rows (register or hide) in a thread of the process
(`outbox.REGISTER`), so no request waits for the DOI agency; and runs the background worker's pass, which retries
what failed (a thread in the embedded shape, `scripts/worker.py` at scale)."""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections.abc import Callable, Sequence

from sqlalchemy import RowMapping, select, update

from repository import outbox
from repository.config import Settings
from repository.ondemand import OnDemandThread
from repository.outbox import DOI_KINDS, GRACE_SECONDS, INDEX_KINDS
from repository.records import stored
from repository.records.build import build_records, get_record_rows
from repository.registrar import Registrar
from repository.search.backend import SearchBackend
from repository.storage import Database
from repository.storage.tables.records import concepts, records
from repository.timeutil import utcnow
from repository.worker import failing

log = logging.getLogger("repository.worker.indexer")
STOP_TIMEOUT = 120.0  # seconds stop() waits for a pass in progress (a sweep or a reindex batch on a loaded machine)


class Indexer:
    """Applies pending outbox rows: `index` (search engine) and `register_doi` (the DOI registrar)."""

    def __init__(
        self,
        db: Database,
        settings: Settings,
        search: SearchBackend,
        registrar: Registrar,
        lookups_factory: Callable,
        render_context: Callable,
    ) -> None:
        self.db = db
        self.settings = settings
        self.search = search
        self.registrar = registrar
        self.lookups_factory = lookups_factory
        self.render_context = render_context
        # One applier per process and kind of work (rows are idempotent across processes); apart, so that a slow
        # DOI agency never holds up the next publish's indexing.
        self._index_lock = threading.Lock()
        self._doi_lock = threading.Lock()
        self.registrations = _Registrations(self)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # Other periodic work of the worker (view counts, document validations): callables run after each pass.
        self.on_pass: list[Callable[[], object]] = []
        # Every commit that enqueued a row applies the outbox at once (docs/architecture/outbox.md#applying-right-after-the-commit: searchable when the request returns;
        # the DOI registered in the background, right after).
        db.wire(outbox.APPLY, self.apply_index_rows)
        db.wire(outbox.REGISTER, self.registrations.kick)

    def process_pending(self, limit: int = 500, grace: float = 0.0, now: dt.datetime | None = None) -> int:
        """Apply up to `limit` due rows of each kind of work, oldest first, leaving new rows younger than `grace`
        seconds (not yet tried) to the process that wrote them; returns how many succeeded. `now`: the rows due at
        another time."""
        return self.apply_index_rows(limit, grace, now) + self.apply_doi_rows(limit, grace, now)

    def apply_index_rows(self, limit: int = 500, grace: float = 0.0, now: dt.datetime | None = None) -> int:
        """Apply the due `index` rows (see process_pending)."""
        with self._index_lock:
            with self.db.read() as conn:
                rows = outbox.due(conn, limit, grace, now, INDEX_KINDS)
            return self._apply_index(rows) if rows else 0

    def apply_doi_rows(self, limit: int = 500, grace: float = 0.0, now: dt.datetime | None = None,
                       recid: int | None = None) -> int:
        """Apply the due `register_doi` and `hide_doi` rows (see process_pending), only record `recid`'s if given."""
        with self._doi_lock:
            with self.db.read() as conn:
                rows = outbox.due(conn, limit, grace, now, DOI_KINDS, recid)
            return sum(self._apply_one(row, self._register if row["kind"] == "register_doi" else self._hide)
                       for row in rows)

    def settle(self, recid: int) -> None:
        """Register record `recid`'s DOI now if that is due and not done yet: an edit right after a publish finds the
        record integrated, as when registration ran in the publish request (it answers 409 only while the agency
        fails). A registration running in this process's thread is waited for, not repeated."""
        self.apply_doi_rows(recid=recid)

    def lift_embargoes(self) -> int:
        """Queue the records whose embargo ends today for reindexing (their files become public by date alone;
        the index copy must follow). Returns how many."""
        today = utcnow().date().isoformat()
        with self.db.write() as conn:
            due = list(conn.execute(select(records.c.id).where(records.c.embargo_until <= today)).scalars())
            for recid in due:
                outbox.enqueue(conn, "index", recid)
            if due:
                conn.execute(update(records).where(records.c.id.in_(due)).values(embargo_until=None))
        return len(due)

    def _apply_index(self, rows: Sequence[RowMapping]) -> int:
        recids = sorted({r["recid"] for r in rows})
        try:
            with self.db.read() as conn:
                found = get_record_rows(conn, recids)
                # A record in review is out of the index as a deleted one is (docs/operators/moderation.md).
                live = [r for r in found if r["deleted"] is None and r["review"] is None]
                derived = stored.derive(conn, self.settings, self.lookups_factory(conn), self.render_context(),
                                               live)
            indexed = {x["id"] for x in live}
            gone = [r for r in recids if r not in indexed]
            # The revision each removed record had: a removal must win over that revision wherever it was read.
            removed = {r["id"]: r["revision"] for r in found if r["deleted"] is not None or r["review"] is not None}
            # The stored copies first: a crash before the index write leaves them newer than the index, and the
            # retry of these outbox rows (still pending) brings the index up to them.
            with self.db.write() as conn:
                entries = stored.save(conn, self.settings, self.search, derived)
                stored.remove(conn, gone)
            if entries:  # the engine-ready documents the stored copies were made of: not made twice
                self.search.index_documents(entries)
            if gone:
                self.search.delete(gone, removed)
        except Exception as exc:  # noqa: BLE001 - any failure leaves the rows pending for a retry
            self._failed(rows, exc)
            return 0
        self._done([r["id"] for r in rows])
        return len(rows)

    def _apply_one(self, row: RowMapping, action: Callable[[int], object]) -> int:
        try:
            action(row["recid"])
        except Exception as exc:  # noqa: BLE001
            self._failed([row], exc)
            return 0
        self._done([row["id"]])
        return 1

    def _register(self, recid: int) -> None:
        """Register (or update) the record's DOI and its concept DOI, then mark the record integrated."""
        from serializers import REGISTRY

        with self.db.read() as conn:
            rows = get_record_rows(conn, [recid])
            if not rows or rows[0]["doi_external"]:
                return
            record = build_records(conn, self.settings, self.lookups_factory(conn), rows)[0]
            conceptdoi = conn.execute(
                select(concepts.c.conceptdoi).where(concepts.c.id == rows[0]["conceptrecid"])
            ).scalar()
        ctx = self.render_context()
        xml = REGISTRY["datacite"].render(record, ctx)
        self.registrar.register(record["doi"], record["links"]["html"], xml, recid)
        if conceptdoi and record["metadata"]["relations"]["version"][0]["is_last"]:
            concept = {**record, "doi": conceptdoi, "metadata": {**record["metadata"], "doi": conceptdoi}}
            self.registrar.register(
                conceptdoi, record["links"]["latest_html"], REGISTRY["datacite"].render(concept, ctx), recid
            )
        with self.db.write() as conn:
            conn.execute(update(records).where(records.c.id == recid).values(integrated=True))

    def _hide(self, recid: int) -> None:
        """A deleted record's DOI stops resolving to it at the agency (DataCite: event hide)."""
        with self.db.read() as conn:
            row = conn.execute(select(records.c.doi, records.c.doi_external).where(records.c.id == recid)).first()
        if row is not None and not row.doi_external:
            self.registrar.hide(row.doi)

    def _done(self, ids: list[int]) -> None:
        with self.db.write() as conn:
            outbox.mark_done(conn, ids)

    def _failed(self, rows: Sequence[RowMapping], exc: Exception) -> None:
        log.warning("outbox rows %s failed: %s", [r["id"] for r in rows], exc)
        with self.db.write() as conn:
            outbox.mark_failed(conn, rows, str(exc), getattr(exc, "retryable", True))
            for row in rows:
                if row["kind"] == "register_doi":
                    failing.registration_failed(conn, self.settings, row, row["attempts"] + 1, str(exc))

    def run_pass(self, grace: float = GRACE_SECONDS) -> int:
        """One pass of the background worker, the same in both shapes: lift embargoes, apply the outbox, then the
        other periodic work (`on_pass`). Each task survives the failure of another (a dead database or index);
        returns how many outbox rows were applied."""
        _survive(self.lift_embargoes)
        done = _survive(lambda: self.process_pending(grace=grace))
        for work in self.on_pass:
            if self._stop.is_set():  # stopping: the rest waits for the next worker (stop() waits for this pass)
                break
            _survive(work)
        return done if isinstance(done, int) else 0

    def start(self, interval: float = 2.0) -> None:
        """Run the worker's passes in a daemon thread (the embedded shape's worker)."""
        if self._thread is not None:
            return

        def loop() -> None:
            while not self._stop.wait(interval):
                self.run_pass()

        self._thread = threading.Thread(target=loop, name="outbox-worker", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the worker thread and wait for its pass to end: a pass left running after its caller has moved on
        would act on a database the caller no longer owns (a test's, emptied for the next test)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=STOP_TIMEOUT)
            if self._thread.is_alive():
                log.error("the background worker's pass did not end within %s s of stop()", STOP_TIMEOUT)
            self._thread = None
        self.registrations.wait_idle(timeout=5)


class _Registrations(OnDemandThread):
    """The thread that applies the DOI rows a commit of this process has just enqueued."""

    thread_name = "doi-registrations"

    def __init__(self, indexer: Indexer) -> None:
        super().__init__()
        self.indexer = indexer

    def process_pending(self) -> int:
        # One pass: what fails waits for its retry time (the worker's pass), so a dead agency is not called in a loop.
        self.indexer.apply_doi_rows()
        return 0


def _survive(task: Callable[[], object]) -> object:
    """Run one task of a worker pass; a failure is logged (and returns None) so the other tasks still run."""
    try:
        return task()
    except Exception:  # noqa: BLE001 - the worker must survive a dead database or index
        log.exception("background worker task %r failed", task)
        return None
