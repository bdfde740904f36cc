"""The multipart upload measurement of bench/bench.py (`--parts multipart`): one file sent in parts over several
connections at once, from initiate to the completed object (complete hashes only what the hash frontier has not
reached: `complete_seconds`), against the plain write+MD5 loop on the same disk run just before and just after each
upload (the mean of the two, as the HTTP figures are taken against the ceiling runs around them: that loop's speed
can vary by a third from one run to the next on a virtual disk, and drifts within a run), and the
workers' peak memory. No figure is asserted."""

from __future__ import annotations

import hashlib
import os
import statistics
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

CHUNK = 1024 * 1024


def plain_write_md5(files_root: str, megabytes: int, block: bytes) -> float:
    """MiB/s of writing `megabytes` MiB with MD5 in a plain loop, fsynced (what FileStore does for one PUT)."""
    path = os.path.join(files_root, ".tmp", "bench-plain-multipart")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    digest = hashlib.md5(usedforsecurity=False)
    started = time.perf_counter()
    with open(path, "wb") as out:
        for _ in range(megabytes):
            digest.update(block)
            out.write(block)
        out.flush()
        os.fsync(out.fileno())
    elapsed = time.perf_counter() - started
    os.unlink(path)
    return megabytes / elapsed


class _Part:
    """A part's body streamed with its length known (Content-Length, as clients send parts)."""

    def __init__(self, block: bytes, megabytes: int) -> None:
        self.block, self.megabytes = block, megabytes

    def __len__(self) -> int:
        return self.megabytes * len(self.block)

    def __iter__(self) -> Iterator[bytes]:
        for _ in range(self.megabytes):
            yield self.block


def _upload(session: Any, server: Any, megabytes: int, part_mb: int, parallel: int, block: bytes
            ) -> tuple[float, float]:
    """One multipart upload into a new draft (deleted after): its MiB/s from initiate to the completed object, and
    the seconds complete took."""
    deposit = session.post(server.base + "/api/deposit/depositions", json={}, timeout=60).json()
    url = server.local(deposit["links"]["bucket"]) + "/multipart.bin"
    count = -(-megabytes // part_mb)
    started = time.perf_counter()
    upload = session.post(f"{url}?uploads&size={megabytes * CHUNK}&partSize={part_mb * CHUNK}", timeout=60)
    upload.raise_for_status()
    uid = upload.json()["id"]

    def send(n: int) -> None:
        size = min(part_mb, megabytes - n * part_mb)
        session.put(f"{url}?uploadId={uid}&partNumber={n}", data=_Part(block, size), timeout=600).raise_for_status()

    with ThreadPoolExecutor(parallel) as pool:
        list(pool.map(send, range(count)))
    parts_done = time.perf_counter()
    session.post(f"{url}?uploadId={uid}", timeout=600).raise_for_status()
    elapsed = time.perf_counter() - started
    session.delete(server.local(deposit["links"]["self"]), timeout=60)
    return megabytes / elapsed, elapsed - (parts_done - started)


def measure(session: Any, server: Any, instance: str, megabytes: int, part_mb: int, parallel: int,
            peak_kb: Callable[[int], int], rounds: int = 3) -> dict:
    """Upload `megabytes` MiB in parts of `part_mb` MiB, `parallel` at once, `rounds` times between runs of the plain
    loop (plain, upload, plain, ..., plain); each upload against the mean of the plain runs around it. The verdict
    takes the best round (what the upload reaches), the median and every round are reported beside it; the
    figures as a dict."""
    block = os.urandom(CHUNK)
    files_root = os.path.join(instance, "files")
    workers = server.workers()
    before = {pid: peak_kb(pid) for pid in workers}
    plain_write_md5(files_root, min(megabytes, 1024), block)  # warm-up: a run's first writes were its slowest
    disk = [plain_write_md5(files_root, megabytes, block)]
    runs: list[tuple[float, float]] = []
    for _ in range(rounds):
        runs.append(_upload(session, server, megabytes, part_mb, parallel, block))
        disk.append(plain_write_md5(files_root, megabytes, block))
    after = {pid: peak_kb(pid) for pid in workers}
    around = [(disk[i] + disk[i + 1]) / 2 for i in range(rounds)]
    ratios = [rate / plain for (rate, _), plain in zip(runs, around, strict=True)]
    best = max(range(rounds), key=ratios.__getitem__)
    rate, complete_seconds = runs[best]
    return {"megabytes": megabytes, "part_mb": part_mb, "parallel": parallel, "seconds": round(megabytes / rate, 2),
            "complete_seconds": round(complete_seconds, 2), "rate_mib_s": rate, "plain_disk_md5_mib_s": around[best],
            "ratio": ratios[best], "round_ratios": [round(r, 2) for r in ratios],
            "median_round_ratio": statistics.median(ratios),
            "best_of_each_ratio": max(r for r, _ in runs) / max(disk),
            "upload_runs": [round(r) for r, _ in runs], "plain_runs": [round(d) for d in disk],
            "worker_peak_growth_mb": max(after[p] - before[p] for p in workers) / 1024}


def summary(m: dict) -> str:
    """One line for the benchmark's table."""
    return (f"multipart upload {m['megabytes']} MiB ({m['parallel']} x {m['part_mb']} MiB parts at once): "
            f"{m['rate_mib_s']:.0f} MiB/s vs plain write+MD5 {m['plain_disk_md5_mib_s']:.0f} MiB/s around it (ratio "
            f"{m['ratio']:.2f}, the best round of {m['round_ratios']}, median {m['median_round_ratio']:.2f}; uploads "
            f"{m['upload_runs']}, plain {m['plain_runs']}, best of each {m['best_of_each_ratio']:.2f}; complete "
            f"{m['complete_seconds']} s); worker peak growth {m['worker_peak_growth_mb']:.1f} MB")
