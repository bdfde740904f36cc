#!/usr/bin/env python
"""Fuzz the whole API with schemathesis against the real server: exit 1 if any request got a 5xx.

    python scripts/fuzz_api.py [--max-examples 25] [--workers 2] [--seed N] [--report-dir DIR]

Starts the documented server (scripts/serve.py: gunicorn over TLS) on a fresh instance with rate limits off,
creates a user with a token of every scope, seeds what the operations need to get past their 404s (a
published record with a file, a draft with a file, a community with a pending inclusion request), then runs
`schemathesis run /api/openapi.json --checks all` twice: once with the seeded ids as path parameters (the
deep paths) and once with generated ids. Every check of schemathesis runs and is summarised, but only a
server error fails the run: a 5xx, a connection the server dropped, or schemathesis' `not_a_server_error`.
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import requests

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start_server(env: dict[str, str], log_path: str, port: int) -> subprocess.Popen:
    log = open(log_path, "w")
    proc = subprocess.Popen(
        [sys.executable, os.path.join(ROOT, "scripts", "serve.py"), "--workers", "2", "--threads", "4"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit("the server did not start:\n" + open(log_path).read())
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("the server did not start within 60 s")


class Seeder:
    """Creates, through the API itself, the objects whose ids the fuzzer then uses."""

    def __init__(self, base: str, token: str, cert: str) -> None:
        self.base = base
        self.cert = cert
        self.http = requests.Session()
        self.http.headers["Authorization"] = f"Bearer {token}"

    def _call(self, method: str, path: str, expected: int, **kwargs) -> dict:  # type: ignore[no-untyped-def]
        url = path if path.startswith("https://") else self.base + path
        # verify per request: a session's verify loses to REQUESTS_CA_BUNDLE/CURL_CA_BUNDLE in requests
        response = self.http.request(method, url, timeout=60, verify=self.cert, **kwargs)
        if response.status_code != expected:
            raise SystemExit(f"seeding: {method} {path} answered {response.status_code}: {response.text[:500]}")
        return response.json() if response.content else {}

    def deposit(self, title: str, **extra: object) -> dict:
        metadata = {
            "title": title, "upload_type": "dataset", "description": "Fuzzing seed.",
            "creators": [{"name": "Doe, Jane", "affiliation": "Example University"}], **extra,
        }
        dep = self._call("POST", "/api/deposit/depositions", 201, json={"metadata": metadata})
        self._call("PUT", f"{dep['links']['bucket']}/data.csv", 200, data=b"a,b\n1,2\n")
        return self._call("GET", f"/api/deposit/depositions/{dep['id']}", 200)

    def seed(self) -> dict[str, object]:
        self._call(
            "POST", "/api/communities/", 201,
            json={"identifier": "fuzz", "title": "Fuzz", "description": "Seed community."},
        )
        published = self.deposit("Published seed", communities=[{"identifier": "fuzz"}])
        record = self._call("POST", f"/api/deposit/depositions/{published['id']}/actions/publish", 202)
        draft = self.deposit("Draft seed")
        pending = self._call("GET", "/api/communities/fuzz/requests/", 200)
        hits = pending.get("hits", {}).get("hits", []) if isinstance(pending, dict) else pending
        return {
            "dep_id": draft["id"],
            "file_id": draft["files"][0]["id"],
            "bucket_id": draft["links"]["bucket"].rstrip("/").rsplit("/", 1)[1],
            "key": "data.csv",
            "recid": record["record_id"],
            "identifier": "fuzz",
            "request_id": hits[0]["id"] if hits else 1,
            "size": 250,
            "license_id": "cc-by",
            "name": "software-corpus.json",
        }


def _write_config(path: str, parameters: dict[str, object] | None) -> None:
    lines = []
    if parameters:
        lines.append("[parameters]")
        for name, value in parameters.items():
            lines.append(f'"path.{name}" = {json.dumps(value)}')
    with open(path, "w") as out:
        out.write("\n".join(lines) + "\n")


def _schemathesis(args: argparse.Namespace, url: str, cert: str, token: str, config: str, report: str) -> int:
    command = [
        os.path.join(os.path.dirname(sys.executable), "schemathesis"), "--config-file", config, "run",
        f"{url}/api/openapi.json", "--checks", "all", "--tls-verify", cert,
        "-H", f"Authorization: Bearer {token}", "--max-examples", str(args.max_examples),
        "--workers", str(args.workers), "--report", "ndjson", "--report-dir", report,
        "--request-timeout", "30", "--suppress-health-check", "all",
    ]
    if args.seed is not None:
        command += ["--seed", str(args.seed)]
    return subprocess.call(command, stdout=subprocess.DEVNULL if args.quiet else None)


def _server_errors(report_dir: str) -> tuple[list[str], collections.Counter]:
    """Every interaction answered 5xx (or dropped), and a count of the other checks' failures."""
    errors: list[str] = []
    others: collections.Counter = collections.Counter()
    for path in glob.glob(os.path.join(report_dir, "**", "*.ndjson"), recursive=True):
        for line in open(path):
            event = json.loads(line).get("ScenarioFinished")
            if not event:
                continue
            recorder = event["recorder"]
            for checks in recorder.get("checks", {}).values():
                for check in checks:
                    if check["status"] == "failure" and check["name"] != "not_a_server_error":
                        others[check["name"]] += 1
            for interaction in recorder.get("interactions", {}).values():
                request = interaction["request"]
                response = interaction.get("response")
                status = response["status_code"] if response else None
                if status is None or status >= 500:
                    errors.append(f"{status or 'no response'}: {request['method']} {request['uri']}")
    return errors, others


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-examples", type=int, default=25, help="examples per operation and phase")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=None, help="schemathesis' random seed (replay a run)")
    parser.add_argument("--report-dir", default=None, help="keep the NDJSON reports and the server log here")
    parser.add_argument("--quiet", action="store_true", help="only print the summary")
    args = parser.parse_args(argv)

    work = tempfile.mkdtemp(prefix="fuzz-")
    report_dir = args.report_dir or os.path.join(work, "reports")
    os.makedirs(report_dir, exist_ok=True)
    port = _free_port()
    env = {
        **os.environ,
        "INSTANCE_PATH": os.path.join(work, "instance"),
        "DATABASE_URL": os.environ.get("FUZZ_DATABASE_URL", f"sqlite:///{work}/instance/repository.db"),
        "BASE_URL": f"https://127.0.0.1:{port}",
        "SECRET_KEY": "fuzz-secret",
        "RATELIMIT_ENABLED": "false",
    }
    token = subprocess.check_output(
        [sys.executable, os.path.join(ROOT, "scripts", "create_token.py"), "--email", "fuzz@example.org"],
        cwd=ROOT, env=env, text=True,
    ).strip()
    server = _start_server(env, os.path.join(report_dir, "server.log"), port)
    try:
        url = env["BASE_URL"]
        cert = os.path.join(env["INSTANCE_PATH"], "tls", "cert.pem")
        seeded = Seeder(url, token, cert).seed()
        for label, parameters in (("seeded", seeded), ("generated", None)):
            config = os.path.join(work, f"{label}.toml")
            _write_config(config, parameters)
            print(f"== schemathesis, {label} path parameters", flush=True)
            _schemathesis(args, url, cert, token, config, os.path.join(report_dir, label))
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
    errors, others = _server_errors(report_dir)
    print("== other schemathesis checks (informative): " + (", ".join(f"{k} {v}" for k, v in others.items()) or "none"))
    if not args.report_dir:
        log = open(os.path.join(report_dir, "server.log")).read()
        shutil.rmtree(work, ignore_errors=True)
    else:
        log = ""
    if errors:
        print(f"FAIL: {len(errors)} requests answered a server error:")
        for line in sorted(set(errors))[:50]:
            print("  " + line)
        if log:
            print("== server log (tail)\n" + log[-5000:])
        return 1
    print("OK: no request answered a server error")
    return 0


if __name__ == "__main__":
    sys.exit(main())
