"""The background worker's export: a full public export every EXPORT_INTERVAL seconds, one of the periodic tasks of
its pass in both shapes (the thread of each server process, and scripts/worker.py). Whether one is due is read from
the exports folder (the newest export's time), shared by every process; the folder's lock makes it one export for
all of them (docs/operators/export.md#the-periodic-export)."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable

from repository.config import Settings
from repository.exports import folder
from repository.exports.writer import ExportError, export_records
from repository.search.backend import IndexBuilder
from repository.storage import Database

log = logging.getLogger("repository.exports.periodic")
RECHECK_SECONDS = 60.0  # how often a process looks at the folder again when no export is due


class Exporter:
    """Call once per worker pass: writes an export when the newest is EXPORT_INTERVAL old or there is none."""

    def __init__(self, db: Database, settings: Settings, search: IndexBuilder,
                 clock: Callable[[], dt.datetime]) -> None:
        self.db, self.settings, self.search, self.clock = db, settings, search, clock
        self._next_look: dt.datetime | None = None

    def due(self) -> bool:
        """Whether an export is due now (by the clock), from the folder."""
        interval = self.settings.EXPORT_INTERVAL
        if not interval:
            return False
        newest = folder.names(self.settings.EXPORTS_ROOT)
        return not newest or (self.clock() - folder.taken_at(newest[0])).total_seconds() >= interval

    def __call__(self) -> int:
        """Export if due; returns the number of records exported (0: none due or another process exporting)."""
        now = self.clock()
        if not self.settings.EXPORT_INTERVAL or self._next_look is not None and now < self._next_look:
            return 0
        self._next_look = now + dt.timedelta(seconds=RECHECK_SECONDS)
        if not self.due():
            return 0
        try:
            manifest = export_records(self.db, self.settings, self.search, self.settings.EXPORTS_ROOT, now)
        except ExportError:
            return 0
        log.info("full public export %s: %d records", manifest["id"], manifest["records"])
        return int(manifest["records"])
