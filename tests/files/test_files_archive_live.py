"""The whole-record archive through the real server: streamed as it is made, the worker's memory flat."""

from __future__ import annotations

import hashlib
import zipfile

import pytest
from helpers.http import peak_rss_kb, token_session, worker_pids

FILE_MB = 80
FILES = 3
CHUNK = b"0123456789abcdef" * 65536  # 1 MiB


@pytest.fixture(scope="module")
def session(live_server):  # type: ignore[no-untyped-def]
    http = token_session(live_server, "archive@example.org")
    yield http
    http.close()


def test_the_archive_streams_with_worker_memory_flat(live_server, session, tmp_path):
    base = live_server["url"]
    dep = session.post(f"{base}/api/deposit/depositions", json={"metadata": {
        "title": "Three large files", "upload_type": "dataset", "description": "Big.",
        "creators": [{"name": "Doe, Jo"}]}}).json()
    checksums = {}
    for n in range(FILES):
        digest = hashlib.md5()

        def body(n: int = n, digest=digest):  # type: ignore[no-untyped-def]
            for i in range(FILE_MB):
                chunk = CHUNK if i else CHUNK[:-8] + b"%08d" % n  # each file different
                digest.update(chunk)
                yield chunk

        response = session.put(f"{dep['links']['bucket']}/part-{n}.bin", data=body(), timeout=300)
        assert response.status_code == 200, response.text
        checksums[f"part-{n}.bin"] = "md5:" + digest.hexdigest()
    assert session.post(dep["links"]["publish"], timeout=60).status_code == 202
    workers = worker_pids(live_server["pid"])
    for pid in workers:  # the uploads' peak must not hide the download's: the peak starts again from now (Linux)
        with open(f"/proc/{pid}/clear_refs", "w") as handle:
            handle.write("5")
    before = {pid: peak_rss_kb(pid) for pid in workers}
    path = tmp_path / "record.zip"
    with session.get(f"{base}/api/records/{dep['id']}/files-archive", stream=True, timeout=300) as response:
        assert response.status_code == 200
        length = int(response.headers["Content-Length"])
        with open(path, "wb") as out:
            for chunk in response.iter_content(1024 * 1024):
                out.write(chunk)
    growth_mb = max(peak_rss_kb(pid) - before[pid] for pid in workers) / 1024
    assert path.stat().st_size == length > FILES * FILE_MB * len(CHUNK)
    with zipfile.ZipFile(path) as archive:
        assert archive.testzip() is None
        for name, checksum in checksums.items():
            digest = hashlib.md5()
            with archive.open(name) as entry:
                while chunk := entry.read(1024 * 1024):
                    digest.update(chunk)
            assert "md5:" + digest.hexdigest() == checksum
    print(f"\narchive of {FILES} x {FILE_MB} MB; largest peak-memory growth of a worker: {growth_mb:.1f} MB")
    assert growth_mb < 40, f"server memory grew by {growth_mb:.0f} MB for a {FILES * FILE_MB} MB archive"
