"""Start writing an upload's bytes to disk while more of them arrive (Linux `sync_file_range`).

Without it the kernel keeps a file's new bytes in memory until a tenth of the machine's memory is dirty (GBs on a
server), so the fsync that acknowledges an upload or a multipart part writes them all at once while the disk had
sat idle during the transfer: the client waits for that flush after the last byte. Asking for the write-out of
every few MiB as they are written keeps the disk busy during the transfer and leaves the fsync little to do. The
call only starts the writes (SYNC_FILE_RANGE_WRITE: no wait for their completion, no durability promise: the
fsync still gives that). Elsewhere than Linux it does nothing."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import logging
import os
from typing import Any

STEP = 8 * 1024 * 1024  # bytes written between two requests to start their write-out
SYNC_FILE_RANGE_WRITE = 2  # <fcntl.h>: start writing the range's dirty pages, do not wait

log = logging.getLogger("repository.files.writeback")


@functools.cache
def _sync_file_range() -> Any:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        call = libc.sync_file_range
    except (OSError, AttributeError, TypeError):
        return None
    call.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
    call.restype = ctypes.c_int
    return call


class Writeback:
    """Counts the bytes written to `fd` from `offset` on and starts their write-out every `step` bytes."""

    def __init__(self, fd: int, offset: int, step: int = STEP) -> None:
        self.fd, self.start, self.step, self.pending = fd, offset, step, 0
        self.call = _sync_file_range()

    def wrote(self, size: int) -> None:
        self.pending += size
        if self.call is None or self.pending < self.step:
            return
        if self.call(self.fd, self.start, self.pending, SYNC_FILE_RANGE_WRITE) != 0:
            # A file system without it (some FUSE or network ones): the fsync at the end does all the work.
            log.debug("sync_file_range: %s", os.strerror(ctypes.get_errno()))
            self.call = None
        self.start += self.pending
        self.pending = 0
