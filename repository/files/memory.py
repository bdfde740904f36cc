"""Giving a large transfer's memory back to the system once it ends (docs/operators/object-storage.md#speed).

A transfer allocates and frees buffers of a chunk (1 MiB) or an S3 part (8 MiB) again and again, in the request's
thread and in the part uploads' threads. glibc's malloc raises its mmap threshold to the size of the largest block
freed (up to 32 MiB), so after the first transfer these buffers come from its arenas, one per thread that
allocated, and the freed ones stay there: the workers' resident memory grew by ~15 MiB per GiB moved up and down.
`malloc_trim(0)` returns the arenas' free pages once a large transfer ends; measured on the S3 bench, the workers'
memory then stays flat round after round, where a fixed mmap threshold (MALLOC_MMAP_THRESHOLD_) kept it flat too but
made every buffer's pages fault in anew (uploads about a third slower). Measured (bench/s3_bench.py's server, 512 MiB
up and down a round, loaded machine): 482 -> 510 -> 526 -> 551 -> 553 MiB without, 457 -> 471 -> 482 -> 479 -> 481
with, the speeds unchanged within the rounds' spread."""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable

TRIM_AFTER = 64 * 1024 * 1024  # bytes moved; smaller transfers leave little behind, and trimming costs a few ms


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, or None where there is none (musl, macOS)."""
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        return None


_TRIM = _malloc_trim()


def after_transfer(size: int) -> None:
    """Once a transfer of `size` bytes ends (done, failed or cut short): the allocator's free pages back to the
    system when it moved TRIM_AFTER bytes or more."""
    if size >= TRIM_AFTER and _TRIM is not None:
        _TRIM(0)
