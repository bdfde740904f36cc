#!/usr/bin/env python
"""Benchmark the service as it runs in production, against its own ceiling, on a generated corpus.

    python bench/bench.py --records 100000 --instance bench-results/instance-100k   # full run
    python bench/bench.py --quick                                                     # small, < 2 minutes

Starts `scripts/serve.py` (gunicorn, TLS on 127.0.0.1, RATELIMIT_ENABLED=false, BACKGROUND_WORKER=true as in
production, BENCH_CEILING_ENDPOINT=true) once per worker setup, drives it with wrk (or, without wrk, a Python
load generator in a separate process) for a fixed duration per run, alternating every measured endpoint with the
minimal endpoint `/api/_ceiling` so that drift hits both; every figure is also given as a ratio of the ceiling
measured next to it. Also: OAI-PMH full harvests (records/s), a reindex (records/s), a 1 GB streamed upload against
a plain write+MD5 loop on the same disk (and the server's peak memory), the same as a multipart upload of 4 parts at
once (bench/multipart_bench.py), a record's files as one streamed zip
against reading them from disk (`--parts archive`, bench/archive_bench.py), publish -> searchable latency, the
ceiling with rate limits on against off (what the shared counters cost a request), and the record and search
pages against the API's JSON they show (`--parts pages`, bench/pages_bench.py).
Writes bench-results/bench-<timestamp>.json and prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from urllib.parse import urlencode

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHUNK = 1024 * 1024
SETUPS = {  # name -> serve.py arguments
    "gthread-3x4": ["--workers", "3", "--threads", "4"],
    "gthread-2x8": ["--workers", "2", "--threads", "8"],
    "sync-3": ["--workers", "3", "--threads", "1", "--worker-class", "sync"],
    "gthread-3x4-nocache": ["--workers", "3", "--threads", "4"],
}
SETUP_ENV = {  # name -> settings of that setup
    # Every search computed: what a search costs when it is not a repeat of one since the last index commit.
    "gthread-3x4-nocache": {"SEARCH_CACHE_ENTRIES": "0"},
}
EXPORT_FORMATS = ("json", "marcxml", "bibtex", "datacite", "datacite3", "dc", "csl", "jsonld", "citation")
RECORD_FORMATS = ("v1", "json", "bibtex", "datacite", "marcxml")
SPREAD_IDS = 20_000  # record_v1_any reads these in turn: more than a 10 s run gets through
# Limits on, as configured by default (counters in the file under INSTANCE_PATH), but high enough never to refuse:
# the ceiling with them against the ceiling without them is what counting costs a request.
RATELIMIT_ON_ENV = {"RATELIMIT_ENABLED": "true", "RATELIMIT_GUEST": "1000000000/minute;1000000000/hour"}
SEARCH_P99_MS = 100


# --- load generation -----------------------------------------------------------------------------------------
def _lua(paths: list[str]) -> str:
    listed = ",\n".join(json.dumps(p) for p in paths)
    return ("local paths = {\n" + listed + "\n}\nlocal i = 0\n"
            "request = function()\n  i = i % #paths + 1\n  return wrk.format(\"GET\", paths[i])\nend\n")


def _ms(value: str, unit: str) -> float:
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}[unit]


def run_wrk(base: str, paths: list[str], seconds: int, connections: int, threads: int) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(_lua(paths))
    try:
        out = subprocess.run(
            ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--timeout", "20s", "--latency",
             "-s", script.name, base + paths[0]],
            capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(script.name)
    latency = {m.group(1): _ms(m.group(2), m.group(3))
               for m in re.finditer(r"^\s+(50|99)(?:\.0+)?%\s+([\d.]+)(us|ms|s|m)\s*$", out, re.M)}
    total = re.search(r"(\d+) requests in", out)
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    socket_errors = re.search(r"Socket errors: (.*)", out)
    return {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
            "p50_ms": latency.get("50"), "p99_ms": latency.get("99"),
            "requests": int(total.group(1)) if total else 0,
            "errors": int(errors.group(1)) if errors else 0,
            "socket_errors": socket_errors.group(1).strip() if socket_errors else ""}


def run_python_load(base: str, paths: list[str], seconds: int, connections: int, cafile: str) -> dict:
    """The fallback: a separate process with one keep-alive HTTPS connection per thread."""
    spec = json.dumps({"base": base, "paths": paths, "seconds": seconds, "connections": connections,
                       "cafile": cafile})
    # The spec on stdin: the search mix's thousands of paths exceed the kernel's limit on one argument (128 KiB).
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--loadgen", "-"], input=spec,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def _loadgen(spec: dict) -> None:
    import http.client
    import ssl
    from urllib.parse import urlsplit

    parts = urlsplit(spec["base"])
    context = ssl.create_default_context(cafile=spec["cafile"])
    deadline = time.monotonic() + spec["seconds"]
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()

    def worker(offset: int) -> None:
        mine, bad, conn = [], 0, None
        paths, i = spec["paths"], offset
        while time.monotonic() < deadline:
            if conn is None:
                conn = http.client.HTTPSConnection(parts.hostname, parts.port, context=context, timeout=20)
            path = paths[i % len(paths)]
            i += 1
            started = time.perf_counter()
            try:
                conn.request("GET", path)
                response = conn.getresponse()
                response.read()
            except (OSError, http.client.HTTPException):
                conn.close()
                conn, bad = None, bad + 1
                continue
            mine.append(time.perf_counter() - started)
            if response.status >= 400:
                bad += 1
            if response.will_close:
                conn.close()
                conn = None
        with lock:
            latencies.extend(mine)
            errors[0] += bad

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(spec["connections"])]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    latencies.sort()

    def pct(p: float) -> float | None:
        return latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000 if latencies else None

    print(json.dumps({"rps": len(latencies) / elapsed, "p50_ms": pct(0.5), "p99_ms": pct(0.99),
                      "requests": len(latencies), "errors": errors[0], "socket_errors": ""}))


# --- the server ------------------------------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


PUBLIC_BASE = "https://127.0.0.1:5000"  # BASE_URL of the corpus load, the reindex and the servers


class Server:
    """scripts/serve.py in a subprocess (production settings, rate limits off, the ceiling route on)."""

    def __init__(self, instance: str, setup: str, log_dir: str, env: dict | None = None, label: str = "") -> None:
        self.instance, self.setup = instance, setup
        self.port = _free_port()
        self.base = f"https://127.0.0.1:{self.port}"
        self.cert = os.path.join(instance, "tls", "cert.pem")
        # The public root stays the one the corpus was loaded and indexed with (as behind a proxy, it need not be
        # the address served): stored copies and renditions name it, and a different one would make them stale.
        self.env = {**os.environ, "INSTANCE_PATH": instance, "BASE_URL": PUBLIC_BASE, "RATELIMIT_ENABLED": "false",
                    "BACKGROUND_WORKER": "true", "BENCH_CEILING_ENDPOINT": "true", "SECRET_KEY": "bench-secret",
                    "LOG_LEVEL": "warning", **SETUP_ENV.get(setup, {}), **(env or {})}
        self.env.pop("DATABASE_URL", None)
        self.env.pop("SEARCH_URL", None)
        self.env.pop("RATELIMIT_STORAGE_URI", None)
        self.log_path = os.path.join(log_dir, f"server-{setup}{label}.log")

    def local(self, url: str) -> str:
        """A link the service gave out (under PUBLIC_BASE), as the address this server listens on."""
        return self.base + url[len(PUBLIC_BASE):] if url.startswith(PUBLIC_BASE) else url

    def __enter__(self) -> Server:
        import requests

        self.log = open(self.log_path, "w")  # noqa: SIM115 - closed in __exit__
        self.proc = subprocess.Popen([sys.executable, os.path.join(ROOT, "scripts", "serve.py"), *SETUPS[self.setup],
                                      "--bind", f"127.0.0.1:{self.port}"],
                                     cwd=ROOT, env=self.env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: see {self.log_path}")
            try:
                if requests.get(self.base + "/api/_ceiling", verify=self.cert, timeout=2).status_code == 200:
                    return self
            except (requests.RequestException, OSError):
                pass
            time.sleep(0.2)
        self.__exit__()
        raise RuntimeError(f"server did not answer within 60 s: see {self.log_path}")

    def __exit__(self, *exc: object) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()

    def workers(self) -> list[int]:
        with open(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children") as handle:
            return [int(pid) for pid in handle.read().split()]


def _session(server: Server):  # type: ignore[no-untyped-def]
    """A keep-alive HTTPS session trusting the server's certificate (whatever CA bundle the environment names)."""
    import requests

    session = requests.Session()
    session.verify = server.cert
    session.trust_env = False
    return session


def _drain(server: Server, deadline_s: float = 120.0) -> None:
    """Wait until requests still queued from the last run are done (the ceiling answers fast again), so a slow
    target's backlog is not charged to the next run."""
    session = _session(server)
    until = time.monotonic() + deadline_s
    while time.monotonic() < until:
        started = time.perf_counter()
        session.get(server.base + "/api/_ceiling", timeout=deadline_s)
        if time.perf_counter() - started < 0.05:
            break
        time.sleep(0.05)
    session.close()


def _status_kb(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


# --- the benchmark -----------------------------------------------------------------------------------------------
class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.tool = "wrk" if shutil.which("wrk") and not args.python_load else "python"
        self.results: dict = {"meta": {
            "started": datetime.now(UTC).isoformat(timespec="seconds"), "quick": args.quick,
            "cpus": os.cpu_count(), "load_generator": self.tool, "seconds_per_run": args.seconds,
            "connections": args.connections, "commit": _git_commit(), "instance": args.instance}}

    # measurement helpers
    def load(self, server: Server, paths: list[str]) -> dict:
        if self.tool == "wrk":
            result = run_wrk(server.base, paths, self.args.seconds, self.args.connections, self.args.wrk_threads)
        else:
            result = run_python_load(server.base, paths, self.args.seconds, self.args.connections, server.cert)
        _drain(server)
        return result

    def alternate(self, server: Server, targets: list[tuple[str, list[str]]], every: int) -> list[dict]:
        """Ceiling, then `every` targets, then the ceiling again...; each target's ratio is against the mean of
        the ceiling runs just before and just after it."""

        session = _session(server)
        for _name, paths in targets:  # warm every code path and check it answers
            for path in paths[:1 if self.args.quick else 3]:
                response = session.get(server.base + path, timeout=60)
                if response.status_code != 200:
                    raise RuntimeError(f"{path} answered {response.status_code}: {response.text[:300]}")
        session.close()
        self.load(server, ["/api/_ceiling"])  # warm-up run, not reported
        ceilings = [self.load(server, ["/api/_ceiling"])]
        rows: list[dict] = []
        pending: list[dict] = []
        for position, (name, paths) in enumerate(targets):
            result = self.load(server, paths)
            result.update(name=name, ceiling_before=ceilings[-1]["rps"], path=paths[0])
            pending.append(result)
            print(f"  {name:<28} {result['rps']:>9.1f} req/s  p50 {result['p50_ms'] or 0:>7.2f} ms  "
                  f"p99 {result['p99_ms'] or 0:>8.2f} ms", file=sys.stderr, flush=True)
            if (position + 1) % every == 0 or position == len(targets) - 1:
                ceilings.append(self.load(server, ["/api/_ceiling"]))
                for row in pending:
                    row["ceiling_rps"] = (row.pop("ceiling_before") + ceilings[-1]["rps"]) / 2
                    row["ratio"] = row["rps"] / row["ceiling_rps"] if row["ceiling_rps"] else None
                rows.extend(pending)
                pending = []
                print(f"  {'(ceiling)':<28} {ceilings[-1]['rps']:>9.1f} req/s", file=sys.stderr, flush=True)
        rows.insert(0, {"name": "ceiling", "path": "/api/_ceiling",
                        "rps": statistics.mean(c["rps"] for c in ceilings),
                        "p50_ms": statistics.median(c["p50_ms"] or 0 for c in ceilings),
                        "p99_ms": statistics.median(c["p99_ms"] or 0 for c in ceilings),
                        "runs": [round(c["rps"], 1) for c in ceilings], "ratio": 1.0,
                        "errors": sum(c["errors"] for c in ceilings)})
        return rows

    # the corpus
    def corpus(self) -> dict:
        from repository.config import Settings
        from repository.storage import open_database
        from repository.storage.engine import close_all

        settings = Settings.build(INSTANCE_PATH=self.args.instance)
        existing = 0
        if os.path.exists(os.path.join(settings.INSTANCE_PATH, "repository.db")):
            from sqlalchemy import func, select

            from repository.storage.tables.deposits import records

            db = open_database(settings.DATABASE_URL)
            try:
                with db.read() as conn:
                    existing = conn.execute(select(func.count()).select_from(records)).scalar_one()
            except Exception:  # noqa: BLE001 - an instance without the schema yet
                existing = 0
            close_all()
        if existing and existing >= self.args.records:
            return {"records": existing, "loaded_now": False}
        if existing:
            raise SystemExit(f"{self.args.instance} holds {existing} records, fewer than --records "
                             f"{self.args.records}: use another --instance")
        env = {**os.environ, "INSTANCE_PATH": self.args.instance, "BASE_URL": PUBLIC_BASE}
        env.pop("DATABASE_URL", None)
        env.pop("SEARCH_URL", None)
        command = [sys.executable, os.path.join(ROOT, "bench", "generate_corpus.py"), "--records",
                   str(self.args.records), "--jobs", "0" if self.args.quick else "1"]
        if self.args.quick:
            command.append("--quiet")
        out = subprocess.run(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True, check=True).stdout
        print(out.strip(), file=sys.stderr)
        rate = re.search(r"in ([\d.]+) s: (\d+) records/s", out)
        return {"records": self.args.records, "loaded_now": True, "load_seconds": float(rate.group(1)),
                "load_records_per_s": float(rate.group(2)), "load_report": out.strip()}

    def sample(self) -> dict:
        """Record ids to read (open, with files), a cursor page deep in the results, the search terms."""
        from generate_corpus import COMMON_TERM, PHRASE, rare_term  # its neighbour: bench/ heads sys.path
        from sqlalchemy import func, select

        from repository.config import Settings
        from repository.storage import open_database
        from repository.storage.engine import close_all
        from repository.storage.tables.deposits import records

        db = open_database(Settings.build(INSTANCE_PATH=self.args.instance).DATABASE_URL)
        with db.read() as conn:
            ids = [row.id for row in conn.execute(select(records.c.id, records.c.metadata).order_by(records.c.id)
                                                   .limit(2000)) if row.metadata.get("access_right") == "open"]
            # Records across the whole corpus, more than a run reads: every read misses the per-process cache.
            count = conn.execute(select(func.count()).select_from(records)).scalar_one()
            spread = list(conn.execute(select(records.c.id).where(
                records.c.deleted.is_(None), records.c.id % max(1, count // SPREAD_IDS) == 0)).scalars())
        close_all()
        step = max(1, len(ids) // 200)
        return {"recids": ids[::step][:200], "spread": spread[:SPREAD_IDS], "common": COMMON_TERM,
                "phrase": PHRASE, "rare": rare_term()}

    def token(self) -> str:
        from repository.accounts import tokens
        from repository.config import Settings
        from repository.storage import open_database
        from repository.storage.engine import close_all

        db = open_database(Settings.build(INSTANCE_PATH=self.args.instance).DATABASE_URL)
        with db.write() as conn:
            user = tokens.create_user(conn, "bench@example.org")
            token = tokens.create_token(conn, user, list(tokens.SCOPES), name="bench")[1]
        close_all()
        return token

    def targets(self, server: Server, sample: dict) -> list[tuple[str, list[str]]]:
        import requests

        def search(**params: str) -> str:
            return "/api/records/?" + urlencode({"size": "20", **params})

        # A cursor page deep in the result set: past the page window when the corpus is larger than it.
        listing = requests.get(server.base + search(sort="mostrecent", page="1"), verify=server.cert,
                               timeout=60).json()
        total = listing["hits"]["total"]
        deep_page = max(1, min(10_000, total) // 20 - 1)
        page = requests.get(server.base + search(sort="mostrecent", page=str(deep_page)), verify=server.cert,
                            timeout=60).json()
        deep = page["links"].get("next") or page["links"]["self"]
        deep = deep[len(PUBLIC_BASE):] if deep.startswith(PUBLIC_BASE) else deep
        common = sample["common"]
        ids = sample["recids"]
        targets = [
            ("search_common", [search(q=common)]),
            ("search_rare", [search(q=sample["rare"])]),
            ("search_phrase", [search(q=f'"{sample["phrase"]}"')]),
            ("search_filtered", [search(q=common, type="dataset", access_right="open")]),
            ("search_sorted", [search(q=common, sort="mostrecent")]),
            ("search_aggregations", [search(q=common, facets="access_right,type,file_type,keywords,communities,"
                                                             "publication_date")]),
            ("search_deep_cursor", [deep]),
        ]
        targets += [(f"record_{fmt}", [f"/api/records/{recid}?format={fmt}" for recid in ids])
                    for fmt in RECORD_FORMATS]
        targets.append(("record_v1_any", [f"/api/records/{recid}" for recid in sample["spread"]]))
        targets += [(f"page20_{fmt}", [search(q=common, format=fmt)]) for fmt in EXPORT_FORMATS]
        return targets

    # the non-HTTP-load measurements
    def reindex(self) -> dict:
        from repository.config import Settings
        from repository.indexing import reindex
        from repository.search.open import open_search
        from repository.storage import open_database
        from repository.storage.engine import close_all

        settings = Settings.build(INSTANCE_PATH=self.args.instance, BASE_URL=PUBLIC_BASE)
        db = open_database(settings.DATABASE_URL)
        search = open_search(settings.SEARCH_URL)
        started = time.perf_counter()
        loaded = reindex.rebuild(db, settings, search, lambda n: None)
        elapsed = time.perf_counter() - started
        problems = reindex.check(db, search)
        close_all()
        return {"records": loaded, "seconds": round(elapsed, 2), "rate": loaded / elapsed,
                "parity_problems": len(problems)}

    def ratelimit(self) -> dict:
        """The ceiling endpoint on two servers of the first setup, rate limits off and on (RATELIMIT_ON_ENV),
        measured in turn so that drift hits both; `ratio` is on/off of the best runs."""
        setup = self.args.setups.split(",")[0]
        rounds = 5 if self.args.quick else 7
        with Server(self.args.instance, setup, self.args.out) as off, \
                Server(self.args.instance, setup, self.args.out, RATELIMIT_ON_ENV, "-ratelimit") as on:
            session = _session(off)
            limited = session.get(on.base + "/api/_ceiling", verify=on.cert, timeout=30)
            session.close()
            if "X-RateLimit-Remaining" not in limited.headers:
                raise RuntimeError("the server with limits on answered without X-RateLimit headers")
            self.load(off, ["/api/_ceiling"])  # warm-up runs, not reported
            self.load(on, ["/api/_ceiling"])
            runs: dict[str, list[dict]] = {"off": [], "on": []}
            for round_ in range(rounds):
                pair = (("off", off), ("on", on))
                for name, server in pair if round_ % 2 == 0 else pair[::-1]:  # neither always goes first
                    runs[name].append(self.load(server, ["/api/_ceiling"]))
                    print(f"  ceiling, limits {name:<4} {runs[name][-1]['rps']:>9.1f} req/s", file=sys.stderr,
                          flush=True)
        # The best run of each: load from outside the benchmark only ever lowers a run (as timeit takes the minimum).
        off_rps = max(r["rps"] for r in runs["off"])
        on_rps = max(r["rps"] for r in runs["on"])
        return {"setup": setup, "storage": "file:// under INSTANCE_PATH (the default)",
                "off_mean_rps": statistics.mean(r["rps"] for r in runs["off"]),
                "on_mean_rps": statistics.mean(r["rps"] for r in runs["on"]),
                "off_rps": off_rps, "on_rps": on_rps, "ratio": on_rps / off_rps if off_rps else None,
                "cost_us_per_request": (1 / on_rps - 1 / off_rps) * 1e6 if on_rps and off_rps else None,
                "off_runs": [round(r["rps"], 1) for r in runs["off"]],
                "on_runs": [round(r["rps"], 1) for r in runs["on"]],
                "errors": sum(r["errors"] for r in runs["on"] + runs["off"])}

    def harvest(self, server: Server, prefix: str) -> dict:

        session = _session(server)
        params = {"verb": "ListRecords", "metadataPrefix": prefix}
        count = pages = 0
        started = time.perf_counter()
        limit = self.args.harvest_limit
        while True:
            response = session.get(server.base + "/oai2d", params=params, timeout=120)
            if response.status_code == 404:
                return {"measured": False, "reason": "no /oai2d endpoint"}
            response.raise_for_status()
            body = response.text
            count += body.count("<record>") + body.count("<record ")
            pages += 1
            token = re.search(r"<resumptionToken[^>]*>([^<]+)</resumptionToken>", body)
            if not token or (limit and count >= limit):
                break
            params = {"verb": "ListRecords", "resumptionToken": token.group(1)}
        elapsed = time.perf_counter() - started
        session.close()
        return {"measured": True, "records": count, "pages": pages, "seconds": round(elapsed, 2),
                "rate": count / elapsed, "complete": not (limit and count >= limit)}

    def upload(self, server: Server, token: str) -> dict:

        megabytes = self.args.upload_mb
        block = os.urandom(CHUNK)
        files_root = os.path.join(self.args.instance, "files")

        from multipart_bench import plain_write_md5  # its neighbour: bench/ heads sys.path

        def plain() -> float:
            """The same bytes written to the same disk with MD5, in a plain Python loop (fsynced, as FileStore)."""
            return plain_write_md5(files_root, megabytes, block)

        session = _session(server)
        session.headers["Authorization"] = f"Bearer {token}"
        deposit = session.post(server.base + "/api/deposit/depositions", json={}, timeout=60).json()
        workers = server.workers()
        before = {pid: _status_kb(pid, "VmHWM") for pid in workers}

        class Body:
            """Streamed with its length known, as a client uploading a file sends it (Content-Length, not chunked)."""

            def __len__(self) -> int:
                return megabytes * CHUNK

            def __iter__(self):  # noqa: ANN204
                for _ in range(megabytes):
                    yield block

        disk_before = plain()
        started = time.perf_counter()
        response = session.put(server.local(deposit["links"]["bucket"]) + "/big.bin", data=Body(), timeout=600)
        elapsed = time.perf_counter() - started
        disk_after = plain()
        response.raise_for_status()
        after = {pid: _status_kb(pid, "VmHWM") for pid in workers}
        session.delete(server.local(deposit["links"]["self"]), timeout=60)
        session.close()
        disk = (disk_before + disk_after) / 2
        rate = megabytes / elapsed
        return {"megabytes": megabytes, "seconds": round(elapsed, 2), "rate_mib_s": rate,
                "plain_disk_md5_mib_s": disk, "ratio": rate / disk,
                "worker_peak_rss_mb": max(after.values()) / 1024,
                "worker_peak_growth_mb": max(after[p] - before[p] for p in workers) / 1024}

    def multipart(self, server: Server, token: str) -> dict:
        """The same size as `upload` sent as a multipart upload, 4 parts at once, from initiate to the completed
        object, against the plain write+MD5 loop: bench/multipart_bench.py."""
        from multipart_bench import measure  # its neighbour: bench/ heads sys.path

        session = _session(server)
        session.headers["Authorization"] = f"Bearer {token}"
        try:
            return measure(session, server, self.args.instance, self.args.upload_mb, max(1, self.args.upload_mb // 16),
                           4, lambda pid: _status_kb(pid, "VmHWM"))
        finally:
            session.close()

    def publish(self, server: Server, token: str) -> dict:

        session = _session(server)
        session.headers["Authorization"] = f"Bearer {token}"
        calls, searchable = [], []
        for attempt in range(self.args.publish_runs):
            word = f"benchpublish{int(time.time() * 1000)}x{attempt}"
            deposit = session.post(server.base + "/api/deposit/depositions", timeout=60, json={"metadata": {
                "title": f"Publish latency {word}", "upload_type": "dataset", "description": f"<p>{word}</p>",
                "creators": [{"name": "Bench, Mark"}]}}).json()
            session.put(server.local(deposit["links"]["bucket"]) + "/data.csv", data=word.encode(), timeout=60).raise_for_status()
            started = time.perf_counter()
            response = session.post(server.local(deposit["links"]["publish"]), timeout=60)
            calls.append((time.perf_counter() - started) * 1000)
            response.raise_for_status()
            while True:
                found = session.get(server.base + "/api/records/", params={"q": word, "size": 1}, timeout=60)
                if found.ok and found.json()["hits"]["total"] == 1:
                    break
                if time.perf_counter() - started > 60:
                    raise RuntimeError("a published record was not searchable within 60 s")
            searchable.append((time.perf_counter() - started) * 1000)
        session.close()
        return {"runs": len(searchable), "publish_call_ms_median": statistics.median(calls),
                "searchable_ms_median": statistics.median(searchable), "searchable_ms_max": max(searchable)}

    def pages(self, server: Server, sample: dict) -> dict:
        """The record and search pages against the API's record and search: bench/pages_bench.py."""
        from pages_bench import measure  # its neighbour: bench/ heads sys.path

        session = _session(server)
        try:
            return measure(lambda paths: self.load(server, paths),
                           lambda path: session.get(server.base + path, timeout=60).status_code, sample,
                           2 if self.args.quick else 3, lambda line: print(line, file=sys.stderr, flush=True))
        finally:
            session.close()

    def search_mix(self, server: Server, token: str) -> dict:
        """Searches drawn from the corpus while another process publishes one record a second: bench/search_mix.py."""
        from search_mix import measure  # its neighbour: bench/ heads sys.path

        return measure(self, server, token, PUBLIC_BASE)

    def archive(self, server: Server, token: str) -> dict:
        """A record's files as one zip (`files-archive`) against reading them from disk: bench/archive_bench.py."""
        from archive_bench import measure  # its neighbour: bench/ heads sys.path

        session = _session(server)
        session.headers["Authorization"] = f"Bearer {token}"
        try:
            return measure(session, server, self.args.instance, self.args.archive_files, self.args.archive_mb,
                           5, lambda pid: _status_kb(pid, "VmHWM"))
        finally:
            session.close()

    # the whole run
    def phase(self, name: str, action, *args):  # type: ignore[no-untyped-def]
        """Run one measurement; a failure is recorded (and makes the exit status 1), the others still run. The
        report is rewritten after every phase, so an interrupted run keeps what it measured."""
        print(name, file=sys.stderr, flush=True)
        try:
            result = action(*args)
        except Exception as exc:  # noqa: BLE001 - reported in the results and the exit status
            result = {"error": f"{type(exc).__name__}: {exc}"}
            print(f"  FAILED: {result['error']}", file=sys.stderr, flush=True)
        self.save()
        return result

    def save(self) -> None:
        with open(self.path, "w", encoding="utf-8") as handle:
            json.dump(self.results, handle, indent=2)

    def run(self) -> dict:
        args = self.args
        os.makedirs(args.out, exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        self.path = self.results["meta"]["report"] = os.path.join(args.out, f"bench-{stamp}.json")
        parts = set(args.parts.split(","))
        print(f"corpus: {args.records} records in {args.instance}", file=sys.stderr, flush=True)
        self.results["corpus"] = self.corpus()
        if "reindex" in parts:
            self.results["reindex"] = self.phase("reindex", self.reindex)
        if "ratelimit" in parts:
            self.results["ratelimit"] = self.phase("rate limits on vs off (ceiling)", self.ratelimit)
        sample = self.sample()
        token = self.token()
        setups = args.setups.split(",")
        self.results["setups"] = {}
        self.results["server"] = setups[0]
        for setup in setups:
            full = setup == setups[0]
            if not full and "compare" not in parts:
                continue
            print(f"server {setup} ({'full suite' if full else 'comparison'})", file=sys.stderr, flush=True)
            with Server(args.instance, setup, args.out) as server:
                if "http" in parts or not full:
                    targets = self.targets(server, sample)
                    if not full and setup in SETUP_ENV:  # a settings variant: the requests it changes
                        targets = [t for t in targets if t[0].startswith("search_")]
                    elif not full:
                        targets = [t for t in targets if t[0] in ("search_common", "record_v1")]
                    elif args.targets:
                        targets = [t for t in targets if re.search(args.targets, t[0])]
                    self.results["setups"][setup] = self.phase(
                        f"requests ({setup})", self.alternate, server, targets, args.ceiling_every if full else 1)
                if full:
                    for prefix in ("oai_dc", "oai_registry"):
                        if "oai" in parts:
                            self.results[prefix] = self.phase(f"harvest {prefix}", self.harvest, server, prefix)
                    if "upload" in parts:
                        self.results["upload"] = self.phase(f"upload {args.upload_mb} MiB", self.upload, server,
                                                            token)
                    if "multipart" in parts:
                        self.results["multipart"] = self.phase(f"multipart upload {args.upload_mb} MiB",
                                                               self.multipart, server, token)
                    if "publish" in parts:
                        self.results["publish"] = self.phase("publish -> searchable", self.publish, server, token)
                    if "pages" in parts:
                        self.results["pages"] = self.phase("pages vs API", self.pages, server, sample)
                    if "mix" in parts:
                        self.results["search_mix"] = self.phase("search mix under a publish stream",
                                                                self.search_mix, server, token)
                    if "archive" in parts:
                        self.results["archive"] = self.phase(
                            f"archive {args.archive_files} x {args.archive_mb} MiB", self.archive, server, token)
        self.results["meta"]["finished"] = datetime.now(UTC).isoformat(timespec="seconds")
        self.results["verdicts"] = verdicts(self.results)
        self.save()
        return self.results


def _git_commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def failures(results: dict) -> list[str]:
    """The phases that failed."""
    found = [f"{name}: {value['error']}" for name, value in results.items() if isinstance(value, dict)
             and "error" in value]
    found += [f"{name}: {rows['error']}" for name, rows in results.get("setups", {}).items() if isinstance(rows, dict)]
    return found


def _page_throughput(results: dict, pair: str) -> float | None:
    row = results.get("pages", {}).get(pair) if isinstance(results.get("pages"), dict) else None
    return row.get("throughput_ratio") if isinstance(row, dict) else None


def verdicts(results: dict) -> list[dict]:
    """Each target of the issue: the measured figure, the target, met or missed and by how much."""
    rows = results.get("setups", {}).get(results.get("server"))
    main = {row["name"]: row for row in rows} if isinstance(rows, list) else {}

    def get(part: str, key: str) -> float | None:
        value = results.get(part)
        return value.get(key) if isinstance(value, dict) else None

    uncached_rows = results.get("setups", {}).get("gthread-3x4-nocache")
    uncached = {row["name"]: row for row in uncached_rows} if isinstance(uncached_rows, list) else {}
    figures = {
        "search_common": (main.get("search_common", {}).get("ratio"), 0.35, "ratio of ceiling (v1, 20 per page)"),
        "search_common_p99_ms": (main.get("search_common", {}).get("p99_ms"), SEARCH_P99_MS,
                                 "p99 ms at 16 connections (lower is better)"),
        "search_common_uncached": (uncached.get("search_common", {}).get("ratio"), 0.35,
                                   "ratio of ceiling, result cache off"),
        "search_common_uncached_p99_ms": (uncached.get("search_common", {}).get("p99_ms"), SEARCH_P99_MS,
                                          "p99 ms, result cache off (lower is better)"),
        "record_v1": (main.get("record_v1", {}).get("ratio"), 0.60, "ratio of ceiling"),
        "record_v1_any": (main.get("record_v1_any", {}).get("ratio"), 0.60,
                          "ratio of ceiling, records across the corpus (no cache hits)"),
        "oai_dc": (get("oai_dc", "rate"), 5000, "records/s"),
        "oai_registry": (get("oai_registry", "rate"), 5000, "records/s"),
        "reindex": (get("reindex", "rate"), 10000, "records/s"),
        "upload": (get("upload", "ratio"), 0.80, "ratio of plain write+MD5"),
        "multipart": (get("multipart", "ratio"), 0.80, "ratio of plain write+MD5, 4 parts at once"),
        "archive": (get("archive", "ratio"), 0.80,
                    "ratio of reading the files and sending them over TLS in a plain loop"),
        "publish_searchable_ms": (get("publish", "searchable_ms_max"), 200, "ms, worst run (lower is better)"),
        "ratelimit": (get("ratelimit", "ratio"), 0.90, "ceiling with rate limits on / off"),
        # Page cost within 1.5x of the API's: page req/s over API req/s at least 1/1.5.
        "record_page": (_page_throughput(results, "record"), 0.67, "record page req/s / API record req/s"),
        "search_page": (_page_throughput(results, "search"), 0.67, "search page req/s / API search req/s"),
        "search_mix": ((results.get("search_mix") or {}).get("publishing", {}).get("ratio"), 0.35,
                       "ratio of ceiling, search mix under a publish stream"),
        "search_mix_p99_ms": ((results.get("search_mix") or {}).get("publishing", {}).get("p99_ms"), 200,
                              "p99 ms, search mix under a publish stream (lower is better)"),
    }
    out = []
    for name, (value, target, unit) in figures.items():
        lower_better = name.endswith("_ms")
        if value is None:
            out.append({"name": name, "value": None, "target": target, "unit": unit, "met": None})
            continue
        met = value < target if lower_better else value >= target
        out.append({"name": name, "value": value, "target": target, "unit": unit, "met": met,
                    "off_by": (value / target) if not met else None})
    return out


def table(results: dict) -> str:
    lines = []
    meta = results["meta"]
    lines.append(f"records: {results['corpus']['records']}, cpus: {meta['cpus']}, load generator: "
                 f"{meta['load_generator']} ({meta['connections']} connections, {meta['seconds_per_run']} s per run), "
                 f"server: {results['server']}, commit {meta['commit']}")
    if results["corpus"].get("loaded_now"):
        lines.append(f"corpus load: {results['corpus']['load_records_per_s']:.0f} records/s")
    lines.append("")
    lines.append("| measurement | req/s | p50 ms | p99 ms | ratio of ceiling |")
    lines.append("|---|---:|---:|---:|---:|")
    for setup, rows in results["setups"].items():
        for row in rows if isinstance(rows, list) else []:
            name = row["name"] if setup == results["server"] else f"{row['name']} [{setup}]"
            errors = f" ({row['errors']} errors)" if row.get("errors") else ""
            lines.append(f"| {name}{errors} | {row['rps']:.0f} | {row['p50_ms'] or 0:.2f} | {row['p99_ms'] or 0:.2f} "
                         f"| {row['ratio']:.2f} |")
    lines.append("")

    def part(name: str, render) -> None:  # type: ignore[no-untyped-def]
        value = results.get(name)
        if value is None:
            lines.append(f"{name}: not run")
        elif "error" in value:
            lines.append(f"{name}: FAILED ({value['error']})")
        else:
            lines.append(render(value))

    for prefix in ("oai_dc", "oai_registry"):
        part(prefix, lambda h, prefix=prefix: f"OAI-PMH ListRecords {prefix}: " + (
            f"{h['rate']:.0f} records/s ({h['records']} records, {h['pages']} pages, {h['seconds']} s)"
            if h.get("measured") else f"not measured ({h.get('reason')})"))
    part("search_mix", lambda m: f"search mix ({m['mix']['distinct']} distinct searches, top 100 "
                                 f"{m['mix']['top100_share']:.0%} of {m['mix']['requests']}): quiet "
                                 f"{m['quiet']['rps']:.0f} req/s (ratio {m['quiet']['ratio']:.2f}, p99 "
                                 f"{m['quiet']['p99_ms'] or 0:.1f} ms); under a publish stream {m['publishing']['rps']:.0f}"
                                 f" req/s (ratio {m['publishing']['ratio']:.2f}, p99 {m['publishing']['p99_ms'] or 0:.1f}"
                                 f" ms); stream {m['stream'].get('actions')} errors {m['stream'].get('errors')}")
    part("reindex", lambda r: f"reindex: {r['rate']:.0f} records/s ({r['records']} records in {r['seconds']} s, "
                              f"parity problems: {r['parity_problems']})")
    part("upload", lambda u: f"upload {u['megabytes']} MiB: {u['rate_mib_s']:.0f} MiB/s vs plain write+MD5 "
                             f"{u['plain_disk_md5_mib_s']:.0f} MiB/s (ratio {u['ratio']:.2f}); worker peak RSS "
                             f"{u['worker_peak_rss_mb']:.0f} MB, growth {u['worker_peak_growth_mb']:.1f} MB")
    part("archive", lambda a: f"archive of {a['files']} x {a['megabytes_each']} MiB: {a['archive_mib_s']:.0f} MiB/s "
                              f"vs reading the files and sending them over TLS in a plain loop {a['tls_ceiling_mib_s']:.0f} MiB/s "
                              f"(ratio {a['ratio']:.2f}; client {a['client']}), vs reading them only "
                              f"{a['disk_read_mib_s']:.0f} MiB/s (ratio {a['ratio_of_disk']:.2f}), vs "
                              f"downloading them one by one {a['file_downloads_mib_s']:.0f} MiB/s (ratio "
                              f"{a['ratio_of_file_downloads']:.2f}); worker peak growth {a['worker_peak_growth_mb']:.1f} MB")
    part("multipart", lambda m: f"multipart upload {m['megabytes']} MiB ({m['parallel']} x {m['part_mb']} MiB parts at "
                                f"once): {m['rate_mib_s']:.0f} MiB/s vs plain write+MD5 {m['plain_disk_md5_mib_s']:.0f}"
                                f" MiB/s (best of each: uploads {m['upload_runs']}, plain {m['plain_runs']}; ratio "
                                f"{m['ratio']:.2f}; complete {m['complete_seconds']} s); worker peak "
                                f"growth {m['worker_peak_growth_mb']:.1f} MB")
    part("ratelimit", lambda r: f"ceiling with rate limits on / off ({r['setup']}, counters {r['storage']}): "
                                f"{r['on_rps']:.0f} / {r['off_rps']:.0f} req/s (ratio {r['ratio']:.2f}, "
                                f"{r['cost_us_per_request']:.0f} us per request; runs on {r['on_runs']}, "
                                f"off {r['off_runs']}; {r['errors']} errors)")
    from pages_bench import summary as pages_summary  # its neighbour: bench/ heads sys.path

    part("pages", pages_summary)
    part("publish", lambda p: f"publish -> searchable: median {p['searchable_ms_median']:.0f} ms, max "
                              f"{p['searchable_ms_max']:.0f} ms (publish call {p['publish_call_ms_median']:.0f} ms), "
                              f"{p['runs']} runs")
    lines.append("")
    lines.append("| target | measured | target | verdict |")
    lines.append("|---|---:|---:|---|")
    for v in results["verdicts"]:
        value = "n/a" if v["value"] is None else f"{v['value']:.2f}"
        verdict = "not measured" if v["met"] is None else ("met" if v["met"] else f"MISSED (x{v['off_by']:.2f})")
        lines.append(f"| {v['name']} ({v['unit']}) | {value} | {v['target']} | {verdict} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small corpus and short runs (under two minutes)")
    parser.add_argument("--records", type=int, default=None, help="corpus size (default 100000; quick 800)")
    parser.add_argument("--instance", default=None,
                        help="instance directory; reused when it already holds the corpus (default: a new one)")
    parser.add_argument("--out", default=os.path.join(ROOT, "bench-results"), help="where reports go")
    parser.add_argument("--seconds", type=int, default=None, help="duration of each load run (default 10; quick 1)")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--wrk-threads", type=int, default=1)
    parser.add_argument("--ceiling-every", type=int, default=None,
                        help="targets between two ceiling runs (default 1; quick 4)")
    parser.add_argument("--setups", default=None,
                        help=f"comma-separated, the first gets the full suite (choices: {', '.join(SETUPS)})")
    parser.add_argument("--upload-mb", type=int, default=None, help="upload size in MiB (default 1024; quick 64)")
    parser.add_argument("--publish-runs", type=int, default=None)
    parser.add_argument("--archive-files", type=int, default=None,
                        help="files of the archived record (default 4; quick 3)")
    parser.add_argument("--archive-mb", type=int, default=None, help="MiB per archived file (default 256; quick 16)")
    parser.add_argument("--harvest-limit", type=int, default=0, help="stop a harvest after N records (0: all)")
    parser.add_argument("--parts", default="reindex,ratelimit,http,oai,upload,multipart,publish,archive,pages,mix,compare",
                        help="what to measure (default: everything)")
    parser.add_argument("--targets", default="", help="regular expression: measure only the matching requests")
    parser.add_argument("--python-load", action="store_true", help="use the Python load generator even with wrk")
    parser.add_argument("--loadgen", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.loadgen:
        _loadgen(json.loads(sys.stdin.read() if args.loadgen == "-" else args.loadgen))
        return 0
    quick = args.quick
    args.records = args.records or (800 if quick else 100_000)
    args.seconds = args.seconds or (1 if quick else 10)
    args.ceiling_every = args.ceiling_every or (4 if quick else 1)
    args.setups = args.setups or ("gthread-3x4,sync-3" if quick else "gthread-3x4,gthread-3x4-nocache,gthread-2x8,sync-3")
    args.upload_mb = args.upload_mb or (64 if quick else 1024)
    args.publish_runs = args.publish_runs or (3 if quick else 10)
    args.archive_files = args.archive_files or (3 if quick else 4)
    args.archive_mb = args.archive_mb or (16 if quick else 256)
    temporary = None
    if args.instance is None:
        os.makedirs(args.out, exist_ok=True)
        temporary = tempfile.mkdtemp(prefix="instance-", dir=args.out)
        args.instance = temporary
    args.instance = os.path.abspath(args.instance)
    unknown = [s for s in args.setups.split(",") if s not in SETUPS]
    if unknown:
        parser.error(f"unknown setup {unknown[0]!r}")
    try:
        results = Bench(args).run()
    finally:
        if temporary:
            shutil.rmtree(temporary, ignore_errors=True)
    print(table(results))
    print(f"\nreport: {results['meta']['report']}")
    problems = failures(results)
    for problem in problems:
        print(f"FAILED {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
