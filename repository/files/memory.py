"""Giving a large transfer's memory back to the system once it ends (docs/operators/object-storage.md#speed).

A transfer allocates and frees buffers of a chunk (1 MiB) or an S3 part (8 MiB) again and again, in the request's
thread and in the part uploads' threads. glibc's malloc raises its mmap threshold to the size of the largest block
freed (up to 32 MiB), so after the first transfer these buffers come from its arenas, one per thread that
allocated, and the freed ones stay there: the workers' resident memory grew by ~15 MiB per GiB moved up and down.
`malloc_trim(0)` returns the arenas' free pages once a large transfer ends; measured on the S3 bench, the workers'
memory then stays flat round after round, where a fixed mmap threshold (MALLOC_MMAP_THRESHOLD_) kept it flat too but
made every buffer's pages fault in anew (uploads about a third slower). Measured (bench/s3_bench.py's server, 512 MiB
up and down a round, loaded machine): 482 -> 510 -> 526 -> 551 -> 553 MiB without, 457 -> 471 -> 482 -> 479 -> 481
with, the speeds unchanged within the rounds' spread.

What the trim leaves, each thread's arena keeps at its high-water mark, and a worker's threads do not all take part
in its first transfers: its memory then rose in steps for a dozen rounds (another 16 MiB over 30 rounds of 256 MiB
up and down) before it levelled off. With the arenas capped at two per process (`limit_arenas`, the
MALLOC_ARENA_MAX setting long advised for threaded servers on glibc) it levelled off after three rounds, 17 MiB
lower; large buffers come from mmap or the two arenas, small objects from Python's own allocator under the GIL, so
the threads rarely wait for each other's malloc (bench/s3_bench.py's soak rounds, docs/operators/object-storage.md).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from collections.abc import Callable

TRIM_AFTER = 64 * 1024 * 1024  # bytes moved; smaller transfers leave little behind, and trimming costs a few ms
ARENAS = 2  # malloc arenas per process (glibc's default is 8 per core)
_M_ARENA_MAX = -8  # mallopt's parameter number for it (glibc's malloc.h)


def _libc_function(name: str) -> Callable[..., int] | None:
    """A function of glibc's allocator, or None where there is none (musl, macOS)."""
    library = ctypes.util.find_library("c")
    try:
        return getattr(ctypes.CDLL(library), name) if library else None
    except (OSError, AttributeError):
        return None


_TRIM = _libc_function("malloc_trim")


def limit_arenas(count: int = ARENAS) -> bool:
    """At most `count` malloc arenas in this process and the ones forked from it, unless MALLOC_ARENA_MAX says
    otherwise (an operator's setting wins). Whether the limit was set."""
    mallopt = _libc_function("mallopt")
    if mallopt is None or "MALLOC_ARENA_MAX" in os.environ:
        return False
    return bool(mallopt(_M_ARENA_MAX, count))


def after_transfer(size: int) -> None:
    """Once a transfer of `size` bytes ends (done, failed or cut short): the allocator's free pages back to the
    system when it moved TRIM_AFTER bytes or more."""
    if size >= TRIM_AFTER and _TRIM is not None:
        _TRIM(0)
