"""The single upload of bench/bench.py (`--parts upload`): one file streamed in one PUT with its length known (as a
client uploading a file sends it), against the plain write+MD5 loop on the same disk measured just before and just
after it (bench/multipart_bench.py's), and the workers' peak memory. No figure is asserted."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from typing import Any

from multipart_bench import CHUNK, plain_write_md5  # its neighbour: bench/ heads sys.path


class _Body:
    """Streamed with its length known, as a client uploading a file sends it (Content-Length, not chunked)."""

    def __init__(self, block: bytes, megabytes: int) -> None:
        self.block, self.megabytes = block, megabytes

    def __len__(self) -> int:
        return self.megabytes * CHUNK

    def __iter__(self) -> Iterator[bytes]:
        for _ in range(self.megabytes):
            yield self.block


def measure(session: Any, server: Any, instance: str, megabytes: int, peak_kb: Callable[[int], int]) -> dict:
    """Upload `megabytes` MiB into a new draft (deleted after) over `session` (authorized); the figures as a dict.
    `peak_kb(pid)` reads a worker's peak memory."""
    block = os.urandom(CHUNK)
    files_root = os.path.join(instance, "files")
    deposit = session.post(server.base + "/api/deposit/depositions", json={}, timeout=60).json()
    workers = server.workers()
    before = {pid: peak_kb(pid) for pid in workers}
    # The same bytes written to the same disk with MD5, in a plain Python loop (fsynced, as FileStore).
    disk_before = plain_write_md5(files_root, megabytes, block)
    started = time.perf_counter()
    response = session.put(server.local(deposit["links"]["bucket"]) + "/big.bin", data=_Body(block, megabytes),
                           timeout=600)
    elapsed = time.perf_counter() - started
    disk_after = plain_write_md5(files_root, megabytes, block)
    response.raise_for_status()
    after = {pid: peak_kb(pid) for pid in workers}
    session.delete(server.local(deposit["links"]["self"]), timeout=60)
    disk = (disk_before + disk_after) / 2
    rate = megabytes / elapsed
    return {"megabytes": megabytes, "seconds": round(elapsed, 2), "rate_mib_s": rate,
            "plain_disk_md5_mib_s": disk, "ratio": rate / disk,
            "worker_peak_rss_mb": max(after.values()) / 1024,
            "worker_peak_growth_mb": max(after[p] - before[p] for p in workers) / 1024}


def summary(result: dict) -> str:
    """One line for the benchmark's table."""
    return (f"upload {result['megabytes']} MiB: {result['rate_mib_s']:.0f} MiB/s vs plain write+MD5 "
            f"{result['plain_disk_md5_mib_s']:.0f} MiB/s (ratio {result['ratio']:.2f}); worker peak RSS "
            f"{result['worker_peak_rss_mb']:.0f} MB, growth {result['worker_peak_growth_mb']:.1f} MB")
