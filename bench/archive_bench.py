"""The whole-record archive benchmark (`bench/bench.py --parts archive`): a record of a few large files published
on the running server, then `GET /api/records/<id>/files-archive` streamed to the client against reading the same
files from disk in a plain Python loop (1 MiB reads, as the archive reads them), in turn, best of each; the ratio is
the figure (issue 20's target: at least 0.8). Before each run the files are dropped from the page cache
(`posix_fadvise(DONTNEED)`, no privilege needed), so both read the disk: from the cache a read loop runs at memory
speed, a ceiling no network transfer approaches. Also reported: the same files downloaded one by one from the
bucket (what the zip costs over plain downloads), and the largest growth of a worker's peak memory while streaming.

The record stays in the instance (a published record cannot be deleted): each run adds `files x megabytes` to it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

CHUNK = 1024 * 1024


def _publish(session: Any, server: Any, files: int, megabytes: int) -> tuple[int, str]:
    """A published record of `files` files of `megabytes` MiB of random bytes; its id and bucket id."""
    block = os.urandom(CHUNK)
    deposit = session.post(server.base + "/api/deposit/depositions", timeout=60, json={"metadata": {
        "title": "Archive benchmark", "upload_type": "dataset", "description": "<p>Large files.</p>",
        "creators": [{"name": "Bench, Mark"}]}}).json()
    for n in range(files):
        marker = os.urandom(16)  # every file different (and every run)

        def body(marker: bytes = marker):  # type: ignore[no-untyped-def]  # noqa: ANN202
            yield marker + block[16:]
            for _ in range(megabytes - 1):
                yield block

        response = session.put(server.local(deposit["links"]["bucket"]) + f"/part-{n}.bin", data=body(),
                               timeout=600)
        response.raise_for_status()
    session.post(server.local(deposit["links"]["publish"]), timeout=120).raise_for_status()
    return deposit["id"], deposit["links"]["bucket"].rsplit("/", 1)[1]


def _paths(instance: str, bucket_id: str) -> list[str]:
    """Where the record's files are on disk (read from the instance's database, as the server would)."""
    from sqlalchemy import select

    from repository.config import Settings
    from repository.storage import open_database
    from repository.storage.engine import close_all
    from repository.storage.tables.deposits import file_instances, objects

    settings = Settings.build(INSTANCE_PATH=instance)
    db = open_database(settings.DATABASE_URL)
    with db.read() as conn:
        uris = conn.execute(select(file_instances.c.uri).join(objects, objects.c.file_id == file_instances.c.id)
                            .where(objects.c.bucket_id == bucket_id)).scalars().all()
    close_all()
    return [os.path.join(settings.FILES_ROOT, uri) for uri in uris]


def _evict(paths: list[str]) -> None:
    """Drop the files' pages from the page cache (they were fsynced when stored: clean pages, dropped at once)."""
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def _read_files(paths: list[str]) -> float:
    """MiB/s of reading the files in 1 MiB chunks."""
    _evict(paths)
    total = 0
    started = time.perf_counter()
    for path in paths:
        with open(path, "rb") as handle:
            while chunk := handle.read(CHUNK):
                total += len(chunk)
    return total / CHUNK / (time.perf_counter() - started)


def _download(session: Any, urls: list[str], paths: list[str]) -> tuple[float, int, int]:
    """MiB/s of downloading `urls` one after the other as the client receives them (the files read from disk),
    the bytes received and the sum of their Content-Lengths."""
    _evict(paths)
    total = length = 0
    started = time.perf_counter()
    for url in urls:
        with session.get(url, stream=True, timeout=600) as response:
            response.raise_for_status()
            for chunk in response.iter_content(CHUNK):
                total += len(chunk)
            length += int(response.headers["Content-Length"])
    return total / CHUNK / (time.perf_counter() - started), total, length


def measure(session: Any, server: Any, instance: str, files: int, megabytes: int, rounds: int,
            peak_kb: Callable[[int], int]) -> dict:
    """The archive benchmark on `server` (bench.Server) with an authorized `session`."""
    recid, bucket_id = _publish(session, server, files, megabytes)
    paths = _paths(instance, bucket_id)
    archive_url = f"{server.base}/api/records/{recid}/files-archive"
    file_urls = [server.local(f["links"]["self"]) for f in
                 session.get(f"{server.base}/api/records/{recid}", timeout=60).json()["files"]]
    workers = server.workers()
    before = {pid: peak_kb(pid) for pid in workers}
    disk, archive, downloads = [], [], []
    for _ in range(rounds):  # in turn, so that drift hits all; the best of each (load only ever lowers a run)
        disk.append(_read_files(paths))
        rate, received, length = _download(session, [archive_url], paths)
        if received != length:
            raise RuntimeError(f"the archive sent {received} bytes, its Content-Length said {length}")
        archive.append(rate)
        downloads.append(_download(session, file_urls, paths)[0])
    after = {pid: peak_kb(pid) for pid in workers}
    best_disk, best_archive, best_downloads = max(disk), max(archive), max(downloads)
    return {"files": files, "megabytes_each": megabytes, "archive_bytes": length, "recid": recid,
            "archive_mib_s": best_archive, "disk_read_mib_s": best_disk, "ratio": best_archive / best_disk,
            "file_downloads_mib_s": best_downloads, "ratio_of_file_downloads": best_archive / best_downloads,
            "archive_runs": [round(r) for r in archive], "disk_runs": [round(r) for r in disk],
            "file_download_runs": [round(r) for r in downloads],
            "worker_peak_growth_mb": max(after[pid] - before[pid] for pid in workers) / 1024}
