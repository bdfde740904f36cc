"""Background validation jobs of `POST /api/datadesc/validate` (issue 14.8): a large document and its tables are
kept on disk and validated whole (no CPU bound) by a thread of the server process, or by the worker's pass when
that process died; the submitter polls `GET /api/datadesc/validate/<id>` for the report.

One directory per job under `INSTANCE_PATH/validation-jobs`, shared by every process of the instance:

    <id>/meta.json     {user_id, kind, created, has_files}: written before the directory gets its name
    <id>/document      the document's bytes       } removed once the report is written
    <id>/files/...     its tables and codebook    }
    <id>/attempts      how many validations of it started (one that kills its process is not retried forever)
    <id>/lock          flock()ed by the process validating it: released by the kernel when that process dies
    <id>/report.json   the report, written atomically (temporary file, then rename)

A job directory appears whole (staged under `.incoming-<random>`, then renamed) and is removed, bytes and report,
once it is older than the retention; so are staging directories a crashed request left behind.

Decisions: only token holders get jobs (a job is bound to the token's user; anyone else gets 404), so guests stay
on the small synchronous bound. Polling answers 200 with `status: pending` while the job waits or runs, as the
reports of deposit files do (the job resource exists; its state is in the body), then the report.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import logging
import os
import re
import secrets
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from repository.ondemand import OnDemandThread

from . import directory_files, pending, validate_document
from .report import Kind

log = logging.getLogger("repository.datadesc.jobs")

JOBS_DIR = "validation-jobs"
STAGING_PREFIX = ".incoming-"
JOB_ID = re.compile(r"[A-Za-z0-9_-]{32}")  # secrets.token_urlsafe(24)
MAX_ATTEMPTS = 3
SWEEP_EVERY = 60.0  # seconds between two sweeps by the same process

META, DOCUMENT, FILES, ATTEMPTS, LOCK, REPORT = "meta.json", "document", "files", "attempts", "lock", "report.json"


def _write_atomically(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    with open(tmp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


@contextmanager
def _locked(job: Path) -> Iterator[bool]:
    """Hold the job's lock if nobody else does (True), without waiting; False when it is taken or gone."""
    try:
        fd = os.open(job / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    except FileNotFoundError:  # swept meanwhile
        yield False
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # releases the lock


class Jobs(OnDemandThread):
    """The validation jobs of one instance directory, and the thread of this process that runs them."""

    thread_name = "datadesc-jobs"

    def __init__(self, instance_path: str | Path, retention: float) -> None:
        super().__init__()
        self.root = Path(instance_path) / JOBS_DIR
        self.retention = retention
        self._last_sweep = -float("inf")

    # -- submitting and reading -------------------------------------------------------------------------------------

    @contextmanager
    def staging(self) -> Iterator[Path]:
        """A fresh directory for a request's uploads (its tables go to `<dir>/files`); removed when the block ends
        unless `submit` made a job of it. One a crashed request leaves is swept after the retention."""
        self.root.mkdir(parents=True, exist_ok=True)
        folder = self.root / f"{STAGING_PREFIX}{secrets.token_hex(12)}"
        (folder / FILES).mkdir(parents=True)
        try:
            yield folder
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def submit(self, staged: Path, user_id: int, kind: str, document: bytes, has_files: bool) -> dict[str, Any]:
        """Make a job of a staging directory (its `files` already saved); returns the job as `read` gives it."""
        _write_atomically(staged / DOCUMENT, document)
        meta = {"user_id": user_id, "kind": kind, "created": time.time(), "has_files": has_files}
        _write_atomically(staged / META, json.dumps(meta).encode())
        job_id = secrets.token_urlsafe(24)
        os.rename(staged, self.root / job_id)  # the job appears whole, to every process
        return self._shown(job_id, meta, None)

    def read(self, job_id: str, user_id: int) -> dict[str, Any] | None:
        """`{id, kind, created, expires, report}` (report None while pending) of the user's job; None for an
        unknown or expired job, or another user's."""
        if not JOB_ID.fullmatch(job_id):
            return None
        job = self.root / job_id
        meta = self._meta(job)
        if meta is None or meta["user_id"] != user_id or self._expired(meta):
            return None
        try:
            report = json.loads((job / REPORT).read_bytes())
        except FileNotFoundError:
            report = None
        return self._shown(job_id, meta, report)

    def _shown(self, job_id: str, meta: dict[str, Any], report: dict[str, Any] | None) -> dict[str, Any]:
        return {"id": job_id, "kind": meta["kind"], "created": _iso(meta["created"]),
                "expires": _iso(meta["created"] + self.retention), "report": report}  # fmt: skip

    def unfinished(self, user_id: int) -> int:
        """How many of the user's jobs have no report yet."""
        return sum(1 for job in self.waiting() if (meta := self._meta(job)) is not None and meta["user_id"] == user_id)

    @staticmethod
    def body(job: dict[str, Any], url: str) -> dict[str, Any]:
        """The job as the API shows it: the report (pending until done) with the job's id, dates and link."""
        report = job["report"] if job["report"] is not None else pending(job["kind"])
        return {**report, "id": job["id"], "created": job["created"], "expires": job["expires"],
                "links": {"self": url}}  # fmt: skip

    # -- running ------------------------------------------------------------------------------------------------------

    def _meta(self, job: Path) -> dict[str, Any] | None:
        try:
            return json.loads((job / META).read_bytes())
        except (FileNotFoundError, NotADirectoryError, ValueError):
            return None

    def _expired(self, meta: dict[str, Any], now: float | None = None) -> bool:
        return (now if now is not None else time.time()) >= meta["created"] + self.retention

    def _jobs(self) -> list[tuple[Path, dict[str, Any]]]:
        """(directory, meta) of every job, oldest first."""
        try:
            names = os.listdir(self.root)
        except FileNotFoundError:
            return []
        found = []
        for name in names:
            if JOB_ID.fullmatch(name) and (meta := self._meta(self.root / name)) is not None:
                found.append((self.root / name, meta))
        return sorted(found, key=lambda item: item[1]["created"])

    def waiting(self) -> list[Path]:
        """The jobs without a report, oldest first (some may be under way in another process)."""
        return [job for job, meta in self._jobs() if not (job / REPORT).exists() and not self._expired(meta)]

    def run(self, job: Path) -> bool:
        """Validate one job unless another process is at it or it is done; True when this call wrote its report."""
        with _locked(job) as mine:
            if not mine or (job / REPORT).exists() or (meta := self._meta(job)) is None:
                return False
            attempts = self._attempt(job)
            if attempts > MAX_ATTEMPTS:
                report = _failure(meta["kind"], f"Validation stopped {MAX_ATTEMPTS} times without finishing (an "
                                                "error of the service): submit the document again or deposit it.")
            else:
                report = self._validate(job, meta)
            _write_atomically(job / REPORT, json.dumps(report).encode())
            (job / DOCUMENT).unlink(missing_ok=True)  # the bytes are no longer needed: only the report is kept
            shutil.rmtree(job / FILES, ignore_errors=True)
            return True

    @staticmethod
    def _attempt(job: Path) -> int:
        try:
            count = int((job / ATTEMPTS).read_text() or 0) + 1
        except (FileNotFoundError, ValueError):
            count = 1
        _write_atomically(job / ATTEMPTS, str(count).encode())
        return count

    @staticmethod
    def _validate(job: Path, meta: dict[str, Any]) -> dict[str, Any]:
        data = (job / DOCUMENT).read_bytes()
        files = directory_files(job / FILES) if meta["has_files"] else None
        try:
            # Whole: no CPU bound here, as for the documents of deposits.
            return validate_document(meta["kind"], data, files).to_dict()
        except Exception:  # noqa: BLE001 - the same bytes would fail again: say so rather than stay pending
            log.exception("validation job %s failed", job.name)
            return _failure(meta["kind"], "The document could not be validated (an error of the service, logged).")

    def process_pending(self) -> int:
        """Run every waiting job nobody else runs; returns how many this call finished."""
        with self._busy:
            done = 0
            for job in self.waiting():
                try:
                    done += self.run(job)
                except OSError:  # left as it is: the next pass retries it (MAX_ATTEMPTS at most)
                    log.exception("validation job %s could not be run", job.name)
            return done

    def sweep(self, now: float | None = None) -> int:
        """Remove expired jobs (bytes and report) and staging directories older than the retention."""
        now = now if now is not None else time.time()
        removed = 0
        try:
            names = os.listdir(self.root)
        except FileNotFoundError:
            return 0
        for name in names:
            path = self.root / name
            if name.startswith(STAGING_PREFIX):
                try:
                    old = now - path.stat().st_mtime >= max(self.retention, 3600)  # an upload may take a while
                except FileNotFoundError:
                    continue
                if old:
                    shutil.rmtree(path, ignore_errors=True)
                    removed += 1
                continue
            meta = self._meta(path)
            if not JOB_ID.fullmatch(name) or meta is None or not self._expired(meta, now):
                continue
            with _locked(path) as mine:
                if mine:  # not under way somewhere
                    shutil.rmtree(path, ignore_errors=True)
                    removed += 1
        return removed

    def on_pass(self) -> None:
        """The worker's periodic call: sweep (every SWEEP_EVERY seconds), and start the jobs a dead process left."""
        if time.monotonic() - self._last_sweep >= SWEEP_EVERY:
            self._last_sweep = time.monotonic()
            self.sweep()
        if self.waiting():
            self.kick()


def _failure(kind: Kind, message: str) -> dict[str, Any]:
    return {**pending(kind), "status": "invalid", "errors": [{"field": "", "message": message, "code": "error"}],
            "summary": {"errors": 1}}  # fmt: skip


def _iso(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
