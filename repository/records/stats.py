"""Usage counts: views gathered in memory and written in batches, so reading a record costs no database write;
downloads (and their volume) written as each one is served."""

from __future__ import annotations

import threading
from collections import Counter

from sqlalchemy import update

from repository.storage import Database
from repository.storage.tables.deposits import records


class ViewCounter:
    """Counts record views per process; `flush()` adds them to the database (the outbox worker calls it)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._counts: Counter[int] = Counter()
        self._lock = threading.Lock()

    def view(self, recid: int) -> None:
        with self._lock:
            self._counts[recid] += 1

    def flush(self) -> int:
        """Write the pending counts; returns how many records were updated."""
        with self._lock:
            counts, self._counts = self._counts, Counter()
        if not counts:
            return 0
        try:
            with self.db.write() as conn:
                for recid, n in counts.items():
                    conn.execute(update(records).where(records.c.id == recid).values(views=records.c.views + n))
        except Exception:
            with self._lock:  # keep them for the next flush rather than losing them
                self._counts.update(counts)
            raise
        return len(counts)


def count_download(db: Database, recid: int, nbytes: int) -> None:
    """Add one download of `nbytes` bytes to record `recid`'s counts."""
    with db.write() as conn:
        conn.execute(
            update(records)
            .where(records.c.id == recid)
            .values(downloads=records.c.downloads + 1, volume=records.c.volume + nbytes)
        )
