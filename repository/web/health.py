"""Readiness: whether this process can serve requests now. Each check is timed and never raises: a failure is
its answer (`ok` false and an `error` saying what failed, the details in the log)."""

from __future__ import annotations

import logging
import os
import tempfile
import time
from collections.abc import Callable
from typing import Any

from repository.files.store import TMP_DIR
from repository.services import Services
from repository.storage import status

log = logging.getLogger(__name__)


class NotReady(Exception):
    """A check's failure, with the message /readyz shows (no paths, hosts or library texts)."""


def _database(services: Services) -> dict[str, Any]:
    try:
        status.check_database(services.db)
    except Exception as exc:  # noqa: BLE001 - whatever the driver raises, the database does not answer
        log.warning("readiness: the database does not answer: %s", exc)
        raise NotReady("The database does not answer.") from None
    return {}


def _search(services: Services) -> dict[str, Any]:
    if not services.search.ping():
        raise NotReady("The search engine does not answer.")
    return {}


def _files(services: Services) -> dict[str, Any]:
    """A file can be written where uploads are written, then removed."""
    try:
        with tempfile.NamedTemporaryFile(dir=os.path.join(services.files.root, TMP_DIR), prefix="readyz-") as probe:
            probe.write(b"ready")
            probe.flush()
    except OSError as exc:
        log.warning("readiness: FILES_ROOT is not writable: %s", exc)
        raise NotReady("The files directory is not writable.") from None
    if not services.files.reachable():
        raise NotReady("The object store holding the files does not answer.")
    return {}


def _disk(services: Services) -> dict[str, Any]:
    """The free bytes of the fullest disk among those of FILES_ROOT and of a SQLite database."""
    free = status.disk_free_bytes(services.db, services.files.root)
    if free is None:
        raise NotReady("The disk could not be measured: the files directory is gone.")
    minimum = services.settings.READY_MIN_FREE_BYTES
    details = {"free_bytes": free, "min_free_bytes": minimum}
    if free < minimum:
        raise NotReady("Fewer bytes are free on disk than READY_MIN_FREE_BYTES.", details)
    return details


def _outbox(services: Services) -> dict[str, Any]:
    try:
        with services.db.read() as conn:
            queue = status.index_outbox(conn)
    except Exception as exc:  # noqa: BLE001 - as in _database
        log.warning("readiness: the outbox could not be read: %s", exc)
        raise NotReady("The outbox could not be read.") from None
    limit = services.settings.READY_MAX_OUTBOX_AGE_SECONDS
    details = {"pending": queue.pending, "oldest_seconds": round(queue.oldest_seconds), "max_seconds": limit}
    if limit and queue.oldest_seconds > limit:
        raise NotReady(f"The oldest outbox entry has waited {round(queue.oldest_seconds)} s, longer than "
                       f"READY_MAX_OUTBOX_AGE_SECONDS ({limit} s): is the worker running?", details)
    return details


CHECKS: dict[str, Callable[[Services], dict[str, Any]]] = {
    "database": _database, "search": _search, "files": _files, "disk": _disk, "outbox": _outbox,
}


# Details only the operator sees: the free bytes tell someone filling the disk how far they have got.
PRIVATE_DETAILS = {"disk": ("free_bytes", "min_free_bytes")}


def public_view(checks: dict[str, Any]) -> dict[str, Any]:
    """`checks` (as `readiness` gives them) without the details only the operator may see."""
    return {name: {k: v for k, v in check.items() if k not in PRIVATE_DETAILS.get(name, ())}
            for name, check in checks.items()}


def readiness(services: Services) -> tuple[bool, dict[str, Any]]:
    """Run every check: whether all passed, and each one's `ok`, `ms` and details (`error` when it failed)."""
    results: dict[str, Any] = {}
    for name, check in CHECKS.items():
        started = time.perf_counter()
        try:
            result = {"ok": True, **check(services)}
        except NotReady as exc:
            result = {"ok": False, "error": str(exc.args[0]), **(exc.args[1] if len(exc.args) > 1 else {})}
        except Exception:  # noqa: BLE001 - a check that breaks is a failed check, never a 500
            log.exception("readiness check %s failed", name)
            result = {"ok": False, "error": "The check failed; the log has the details."}
        result["ms"] = round((time.perf_counter() - started) * 1000, 1)
        results[name] = result
    return all(result["ok"] for result in results.values()), results
