"""The S3 store's transfer benchmark (docs/operators/object-storage.md): one file of SIZE MiB uploaded (PUT to a
bucket) and downloaded through the service, set against boto3's own `upload_fileobj`/`download_fileobj` of the
same bytes to the same SeaweedFS in the same run, and a presigned download (the store's own speed).

    .venv/bin/python bench/s3_bench.py --endpoint http://127.0.0.1:8333 [--size 1024] [--rounds 2]

The S3 server must accept the tests' key (`bash scripts/seaweedfs.sh start` starts one that does). The service is
`scripts/serve.py` in a subprocess (gunicorn, TLS on loopback: bench/bench.py's Server), so its workers' memory is
measured apart from this process's boto3 transfers: their resident set size before and after the transfers, and
its peak (VmHWM). Each side's best round counts; the ratios are service / boto3."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from typing import Any

import boto3
import requests
from botocore.config import Config

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.bench import Server  # noqa: E402
from repository.accounts.tokens import SCOPES, create_token, create_user  # noqa: E402
from repository.config import Settings  # noqa: E402
from repository.services import build_services  # noqa: E402

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


def _workers_mib(server: Server, field: str) -> float:
    """The sum over the server's worker processes of a /proc status field (VmRSS now, VmHWM the peak), in MiB."""
    total = 0
    for pid in server.workers():
        with open(f"/proc/{pid}/status") as handle:
            total += next(int(line.split()[1]) for line in handle if line.startswith(field + ":"))
    return total / 1024


def run(endpoint: str, size_mib: int, rounds: int) -> dict[str, Any]:
    size = size_mib * MIB
    block = os.urandom(MIB)
    bucket = f"bench-{uuid.uuid4().hex[:12]}"
    client = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY,
                          region_name="us-east-1",
                          config=Config(signature_version="s3v4", s3={"addressing_style": "path"}))
    with tempfile.TemporaryDirectory() as instance, tempfile.TemporaryDirectory() as logs:
        store = {"FILES_STORE": "s3", "S3_ENDPOINT_URL": endpoint, "S3_BUCKET": bucket, "S3_ACCESS_KEY_ID": ACCESS_KEY,
                 "S3_SECRET_ACCESS_KEY": SECRET_KEY, "S3_CREATE_BUCKET": "true"}
        settings = Settings.build(INSTANCE_PATH=instance, BASE_URL="https://127.0.0.1:5000", SECRET_KEY="bench-secret",
                                  BACKGROUND_WORKER=False, **store)
        services = build_services(settings)  # this process's view: the token, the objects' keys, presigned URLs
        with services.db.write() as conn:
            token = create_token(conn, create_user(conn, "bench@example.org"), list(SCOPES))[1]
        server = Server(instance, "gthread-2x8", logs, env={**store, "BACKGROUND_WORKER": "false"})
        with server:
            session = requests.Session()
            session.trust_env = False  # REQUESTS_CA_BUNDLE in the environment would win over `verify`
            session.verify = server.cert
            session.headers["Authorization"] = f"Bearer {token}"
            deposit = session.post(server.base + "/api/deposit/depositions", json={}, timeout=60).json()
            bucket_url = server.local(deposit["links"]["bucket"])
            figures: dict[str, list[float]] = {"service_upload": [], "boto3_upload": [], "service_download": [],
                                               "boto3_download": [], "presigned_download": []}
            rss_before = _workers_mib(server, "VmRSS")
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
                key = _uri_of(services, deposit, f"big-{n}.bin")
                url = services.files.presigned_url(key, "big.bin", "application/octet-stream", True)
                started = time.perf_counter()
                with requests.get(url, stream=True, timeout=3600) as response:
                    got = sum(len(chunk) for chunk in response.iter_content(MIB))
                figures["presigned_download"].append(size / MIB / (time.perf_counter() - started))
                assert got == size, got
            rss_after, rss_peak = _workers_mib(server, "VmRSS"), _workers_mib(server, "VmHWM")
        services.db.dispose()
    best = {name: max(values) for name, values in figures.items()}
    return {"size_mib": size_mib, "rounds": rounds, "mib_per_s": figures, "best_mib_per_s": best,
            "upload_ratio": round(best["service_upload"] / best["boto3_upload"], 3),
            "download_ratio": round(best["service_download"] / best["boto3_download"], 3),
            "presigned_ratio": round(best["presigned_download"] / best["boto3_download"], 3),
            "workers_rss_mib": {"before": round(rss_before, 1), "after": round(rss_after, 1),
                                "peak": round(rss_peak, 1)}}


def _uri_of(services: Any, deposit: dict, key: str) -> str:
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
