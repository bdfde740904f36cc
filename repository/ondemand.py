"""A background thread started on demand: the shape shared by the validation runner and the validation jobs."""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager

log = logging.getLogger("repository.ondemand")
_ALL: weakref.WeakSet[OnDemandThread] = weakref.WeakSet()  # every one of this process, for wait_all_idle


class OnDemandThread:
    """Calls `process_pending()` in a thread of this process started by `kick()` (one at most), until a pass finds
    nothing; a kick during a pass makes the thread go round once more. Subclasses hold `self._busy` for a whole
    pass, which `paused()` waits for."""

    thread_name = "on-demand"

    def __init__(self) -> None:
        self._state = threading.Lock()
        self._busy = threading.Lock()
        self._dirty = False
        self._thread: threading.Thread | None = None
        _ALL.add(self)

    def process_pending(self) -> int:
        """One pass; how much it did (0: nothing was waiting)."""
        raise NotImplementedError

    def kick(self) -> None:
        """Process what is waiting, soon, in the background (call after the commit that made it wait)."""
        with self._state:
            self._dirty = True
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self.thread_name, daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            with self._state:
                if not self._dirty:
                    self._thread = None
                    return
                self._dirty = False
            try:
                while self.process_pending():
                    pass
            except Exception:  # noqa: BLE001 - the work stays waiting; the worker's pass retries it
                log.exception("%s pass failed", self.thread_name)

    def wait_idle(self, timeout: float = 60.0) -> None:
        """Block until this process's thread has nothing left (tests, shutdown)."""
        deadline = time.monotonic() + timeout
        while True:
            with self._state:
                thread = self._thread
            if thread is None or time.monotonic() > deadline:
                return
            thread.join(timeout=0.05)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Hold this process's thread back while the block runs (a pass under way finishes first)."""
        with self._busy:
            yield


def wait_all_idle(timeout: float = 60.0) -> None:
    """Block until every on-demand thread of this process has nothing left: before its database pools are closed
    (tests, which dispose of an app's pool at their end; a thread still in a transaction would leave its connection
    behind)."""
    for each in list(_ALL):
        each.wait_idle(timeout)
