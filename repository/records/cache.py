"""Built record dicts kept for a short while per process: reading a record then costs one query (its row, with its
concept's counts) instead of seven. Keyed by id, revision and last change, so an edit, a community decision or a
new version of the same concept (which gives every other version a new revision) is never served stale; the
counts (views, downloads) are not taken from here but from the row read with the request."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Any

TTL_SECONDS = 30.0
MAX_ENTRIES = 4096


class RecordCache:
    """A small thread-safe LRU with a time to live."""

    def __init__(self, ttl: float = TTL_SECONDS, size: int = MAX_ENTRIES) -> None:
        self.ttl, self.size = ttl, size
        self._items: OrderedDict[tuple, tuple[float, Any]] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(row: dict, with_files: bool) -> tuple:
        return (row["id"], row["revision"], row["updated"], with_files)

    def get(self, key: tuple) -> Any | None:
        with self._lock:
            hit = self._items.get(key)
            if hit is None or hit[0] < time.monotonic():
                return None
            self._items.move_to_end(key)
            return hit[1]

    def put(self, key: tuple, value: Any) -> None:
        with self._lock:
            self._items[key] = (time.monotonic() + self.ttl, value)
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
