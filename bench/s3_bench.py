"""The S3 store's transfer benchmark (docs/operators/object-storage.md): one file of SIZE MiB uploaded (PUT to a
bucket) and downloaded through the service, set against boto3's own `upload_fileobj`/`download_fileobj` of the
same bytes to the same SeaweedFS in the same run, and a presigned download (the store's own speed).

    .venv/bin/python bench/s3_bench.py --endpoint http://127.0.0.1:8333 [--size 1024] [--rounds 2]

The S3 server must accept the tests' key (`bash scripts/seaweedfs.sh start` starts one that does). The service
runs in this process behind werkzeug's threaded server on loopback, plain HTTP (TLS and gunicorn measured by
bench/bench.py are left out: this compares the store's path with boto3's). Each side's best round counts; the
ratios are service / boto3. Also reported: this process's peak RSS growth over the service's transfers."""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import boto3
import requests
from botocore.config import Config
from werkzeug.serving import make_server

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from app import create_app  # noqa: E402
from repository.accounts.tokens import SCOPES, create_token, create_user  # noqa: E402
from repository.config import Settings  # noqa: E402

MIB = 1024 * 1024
# The key scripts/seaweedfs.sh's server accepts (tests/helpers/seaweed.py); S3_ACCESS_KEY_ID/S3_SECRET_ACCESS_KEY win.
ACCESS_KEY = os.environ.get("S3_ACCESS_KEY_ID", "test-access-key")
SECRET_KEY = os.environ.get("S3_SECRET_ACCESS_KEY", "test-secret-key")


class _Source:
    """`size` bytes of a repeated random block, read in any size (no file on disk, nothing held whole)."""

    def __init__(self, size: int, block: bytes) -> None:
        self.left, self.block, self.offset = size, block, 0

    def read(self, n: int = -1) -> bytes:
        n = self.left if n < 0 else min(n, self.left)
        out = bytearray()
        while len(out) < n:
            start = self.offset % len(self.block)
            take = min(n - len(out), len(self.block) - start)
            out += self.block[start:start + take]
            self.offset += take
        self.left -= n
        return bytes(out)

    def chunks(self) -> Iterator[bytes]:
        while chunk := self.read(MIB):
            yield chunk


class _Sink:
    def __init__(self) -> None:
        self.size = 0

    def write(self, data: bytes) -> int:
        self.size += len(data)
        return len(data)


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(endpoint: str, size_mib: int, rounds: int) -> dict[str, Any]:
    size = size_mib * MIB
    block = os.urandom(MIB)
    bucket = f"bench-{uuid.uuid4().hex[:12]}"
    client = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY,
                          region_name="us-east-1",
                          config=Config(signature_version="s3v4", s3={"addressing_style": "path"}))
    with tempfile.TemporaryDirectory() as instance:
        settings = Settings.build(INSTANCE_PATH=instance, BASE_URL="http://127.0.0.1", SECRET_KEY="bench-secret",
                                  BACKGROUND_WORKER=False, FILES_STORE="s3", S3_ENDPOINT_URL=endpoint,
                                  S3_BUCKET=bucket, S3_ACCESS_KEY_ID=ACCESS_KEY, S3_SECRET_ACCESS_KEY=SECRET_KEY,
                                  S3_CREATE_BUCKET=True, TRUSTED_PROXIES=1, LOG_LEVEL="WARNING")
        app = create_app(settings)
        services = app.extensions["repository"]
        with services.db.write() as conn:
            token = create_token(conn, create_user(conn, "bench@example.org"), list(SCOPES))[1]
        server = make_server("127.0.0.1", 0, app, threaded=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_port}"
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {token}"
        session.headers["X-Forwarded-Proto"] = "https"
        deposit = session.post(base + "/api/deposit/depositions", json={}, timeout=60).json()
        bucket_url = deposit["links"]["bucket"].replace("https://127.0.0.1", base).replace("http://127.0.0.1", base)
        figures: dict[str, list[float]] = {"service_upload": [], "boto3_upload": [], "service_download": [],
                                           "boto3_download": [], "presigned_download": []}
        rss_before = _rss_mib()
        for n in range(rounds):
            started = time.perf_counter()
            answer = session.put(f"{bucket_url}/big-{n}.bin", data=_Source(size, block).chunks(), timeout=3600)
            figures["service_upload"].append(size / MIB / (time.perf_counter() - started))
            assert answer.status_code in (200, 201), answer.text[:300]
            started = time.perf_counter()
            client.upload_fileobj(_Source(size, block), bucket, f"boto3-{n}")
            figures["boto3_upload"].append(size / MIB / (time.perf_counter() - started))
            started = time.perf_counter()
            got = 0
            with session.get(f"{bucket_url}/big-{n}.bin", stream=True, timeout=3600) as response:
                for chunk in response.iter_content(MIB):
                    got += len(chunk)
            figures["service_download"].append(size / MIB / (time.perf_counter() - started))
            assert got == size, got
            sink = _Sink()
            started = time.perf_counter()
            client.download_fileobj(bucket, f"boto3-{n}", sink)
            figures["boto3_download"].append(size / MIB / (time.perf_counter() - started))
            uri = answer.json()["links"]["self"]
            key = _uri_of(services, deposit, f"big-{n}.bin") or uri
            url = services.files.presigned_url(key, "big.bin", "application/octet-stream", True)
            started = time.perf_counter()
            with requests.get(url, stream=True, timeout=3600) as response:
                got = sum(len(chunk) for chunk in response.iter_content(MIB))
            figures["presigned_download"].append(size / MIB / (time.perf_counter() - started))
            assert got == size, got
        rss_growth = _rss_mib() - rss_before
        server.shutdown()
        services.db.dispose()
    best = {name: max(values) for name, values in figures.items()}
    return {"size_mib": size_mib, "rounds": rounds, "mib_per_s": figures, "best_mib_per_s": best,
            "upload_ratio": round(best["service_upload"] / best["boto3_upload"], 3),
            "download_ratio": round(best["service_download"] / best["boto3_download"], 3),
            "presigned_ratio": round(best["presigned_download"] / best["boto3_download"], 3),
            "peak_rss_growth_mib": round(rss_growth, 1)}


def _uri_of(services: Any, deposit: dict, key: str) -> str | None:
    from repository.files import buckets

    bucket_id = deposit["links"]["bucket"].rsplit("/", 1)[1]
    with services.db.read() as conn:
        return str(buckets.get_object(conn, bucket_id, key)["uri"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--endpoint", default=os.environ.get("TEST_S3_ENDPOINT", "http://127.0.0.1:8333"))
    parser.add_argument("--size", type=int, default=1024, help="MiB per file (default 1024)")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    print(json.dumps(run(args.endpoint, args.size, args.rounds), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
