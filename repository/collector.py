"""The cyclic garbage collector's thresholds for processes that keep many long-lived objects and allocate thousands
of short-lived ones per unit of work: the server's workers (repository/serving/gunicorn_conf.py) and bulk imports
(repository/imports/oai.py).

With CPython's default thresholds (700, 10, 10) a record read spent ~8% of its instructions in collections walking
the workers' caches again and again (callgrind, 300 reads of distinct records: 3.28-3.31 million instructions a
read; 3.04-3.05 million with these), and an OAI-PMH import about a tenth of its CPU time (docs/performance.md#imports).
Young objects are still collected every GC_THRESHOLDS[0] allocations, so the cycles of a request or a record do not
outlive it for long."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

GC_THRESHOLDS = (20_000, 50, 100)


@contextmanager
def fewer_collections() -> Iterator[None]:
    """GC_THRESHOLDS while the block runs, the thresholds from before it afterwards."""
    before = gc.get_threshold()
    gc.set_threshold(*GC_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)
