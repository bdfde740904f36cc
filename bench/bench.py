#!/usr/bin/env python
"""Benchmark the service as it runs in production, against its own ceiling, on a generated corpus.

    python bench/bench.py --records 100000 --instance bench-results/instance-100k   # full run
    python bench/bench.py --quick                                                     # small, < 2 minutes

Starts `scripts/serve.py` (gunicorn, TLS on 127.0.0.1, RATELIMIT_ENABLED=false, BACKGROUND_WORKER=true as in
production, BENCH_CEILING_ENDPOINT=true) once per worker setup, drives it with wrk (or, without wrk, a Python
load generator in a separate process: bench/load.py) for a fixed duration per run, alternating every measured
endpoint with the minimal endpoint `/api/_ceiling` so that drift hits both; every figure is also given as a ratio of
the ceiling measured next to it. Also, each in a module of its own beside this one: OAI-PMH full harvests (records/s,
bench/harvest_bench.py), a reindex (records/s, bench/reindex_bench.py), a 1 GB streamed upload against a plain
write+MD5 loop on the same disk and the server's peak memory (bench/upload_bench.py), the same as a multipart upload
of 4 parts at once (bench/multipart_bench.py), a record's files as one streamed zip against reading them from disk
(`--parts archive`, bench/archive_bench.py), publish -> searchable latency (bench/publish_bench.py), the ceiling with
rate limits on against off, what the shared counters cost a request (bench/ratelimit_bench.py), the record and
search pages against the API's JSON they show (`--parts pages`, bench/pages_bench.py), a search mix under a
publish stream (bench/search_mix.py), and the search targets and a reindex on the embedded engine and on a real
OpenSearch node side by side (`--parts engines`, bench/engines_bench.py). This module keeps the command line, the server, the run order and the targets.
Writes bench-results/bench-<timestamp>.json and prints a table with the verdicts (bench/report.py).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from urllib.parse import urlencode

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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


# --- the server ------------------------------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


PUBLIC_BASE = "https://127.0.0.1:5000"  # BASE_URL of the corpus load, the reindex and the servers


class Server:
    """scripts/serve.py in a subprocess (production settings, rate limits off, the ceiling route on)."""

    def __init__(self, instance: str, setup: str, log_dir: str, env: dict | None = None, label: str = "",
                 behind_proxy: bool = False) -> None:
        self.instance, self.setup, self.behind_proxy = instance, setup, behind_proxy
        self.port = _free_port()
        # behind_proxy: plain HTTP, as a bare `gunicorn 'app:create_app()'` serves behind a proxy that ends TLS and
        # says so in X-Forwarded-Proto (TRUSTED_PROXIES=1; `proxy_headers` are what that proxy adds).
        self.base = f"{'http' if behind_proxy else 'https'}://127.0.0.1:{self.port}"
        self.proxy_headers = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "127.0.0.1"} if behind_proxy else {}
        self.cert = os.path.join(instance, "tls", "cert.pem")
        # The public root stays the one the corpus was loaded and indexed with (as behind a proxy, it need not be
        # the address served): stored copies and renditions name it, and a different one would make them stale.
        # The instance's own database, index and counters, whatever the calling shell has set; `env` (a setup's or
        # a part's settings, e.g. the SEARCH_URL of an OpenSearch node) comes last and wins.
        inherited = {key: value for key, value in os.environ.items()
                     if key not in ("DATABASE_URL", "SEARCH_URL", "RATELIMIT_STORAGE_URI")}
        self.env = {**inherited, "INSTANCE_PATH": instance, "BASE_URL": PUBLIC_BASE, "RATELIMIT_ENABLED": "false",
                    "BACKGROUND_WORKER": "true", "BENCH_CEILING_ENDPOINT": "true", "SECRET_KEY": "bench-secret",
                    "LOG_LEVEL": "warning", **SETUP_ENV.get(setup, {}), **(env or {})}
        if behind_proxy:
            self.env["TRUSTED_PROXIES"] = "1"
        self.log_path = os.path.join(log_dir, f"server-{setup}{label}.log")

    def local(self, url: str) -> str:
        """A link the service gave out (under PUBLIC_BASE), as the address this server listens on."""
        return self.base + url[len(PUBLIC_BASE):] if url.startswith(PUBLIC_BASE) else url

    def __enter__(self) -> Server:
        import requests

        self.log = open(self.log_path, "w")  # noqa: SIM115 - closed in __exit__
        command = ([sys.executable, "-m", "gunicorn", "app:create_app()", "--config",
                    "python:repository.serving.gunicorn_conf"] if self.behind_proxy
                   else [sys.executable, os.path.join(ROOT, "scripts", "serve.py")])
        self.proc = subprocess.Popen([*command, *SETUPS[self.setup], "--bind", f"127.0.0.1:{self.port}"],
                                     cwd=ROOT, env=self.env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: see {self.log_path}")
            try:
                if requests.get(self.base + "/api/_ceiling", verify=self.cert, timeout=2,
                                headers=self.proxy_headers).status_code == 200:
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


ERROR_START = re.compile(r"\b(ERROR|CRITICAL)\b|Error in ASGI application|WORKER TIMEOUT")
CHAINED = ("Traceback", "During handling of the above exception", "The above exception was the direct cause")


def server_errors(log_path: str, limit: int = 5, lines_each: int = 60) -> list[str]:
    """The first `limit` errors a server logged, each with its traceback (at most `lines_each` lines): a run that
    fails says why in its own output, which is all a CI log keeps."""
    blocks: list[list[str]] = []
    follows = False  # whether the next line may still belong to the last block
    with open(log_path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            line = line.rstrip("\n")
            if follows and len(blocks[-1]) < lines_each:
                indented = line[:1].isspace()
                # a traceback's frames are indented; the exception's own line follows the last of them
                if indented or not line or line.startswith(CHAINED) or blocks[-1][-1][:1].isspace():
                    blocks[-1].append(line)
                    continue
            follows = False
            if ERROR_START.search(line):
                if len(blocks) == limit:
                    break
                blocks.append([line])
                follows = True
    return ["\n".join(block).rstrip() for block in blocks]


ACCESS_LINE = re.compile(r'"[A-Z]+ \S+ HTTP/[\d.]+" (\d{3}) (\d+|-) .* route=(\S*)')


def error_statuses(log_path: str, top: int = 12) -> dict[str, int]:
    """The most frequent error answers of a server's access log: "status bytes route" -> how many."""
    counted: dict[str, int] = {}
    with open(log_path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            found = ACCESS_LINE.search(line)
            if found and int(found.group(1)) >= 400:
                key = f"{found.group(1)} {found.group(2)} {found.group(3)}"
                counted[key] = counted.get(key, 0) + 1
    return dict(sorted(counted.items(), key=lambda item: -item[1])[:top])


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
        from load import run_python_load, run_wrk  # its neighbour: bench/ heads sys.path

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

            from repository.storage.tables.records import records

            db = open_database(settings.DATABASE_URL)
            try:
                with db.read() as conn:
                    existing = conn.execute(select(func.count()).select_from(records)).scalar_one()
            except Exception:  # noqa: BLE001 - an instance without the schema yet
                existing = 0
            close_all()
        if existing and existing >= self.args.records:
            return {"records": existing, "loaded_now": False}
        indexed = self._index_only(settings.SEARCH_URL) if not existing else 0
        if indexed >= self.args.records:  # generate_corpus.py --index-only: the search requests only (--targets)
            return {"records": indexed, "loaded_now": False, "index_only": True}
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

    @staticmethod
    def _index_only(search_url: str) -> int:
        """The documents of an instance's live index when it was made by `generate_corpus.py --index-only`
        (records in the index, none in the database), else 0."""
        from repository.search.open import open_search

        try:
            return len(open_search(search_url).get_revisions())
        except Exception:  # noqa: BLE001 - no index yet
            return 0

    def sample(self) -> dict:
        """Record ids to read (open, with files), a cursor page deep in the results, the search terms."""
        from generate_corpus import COMMON_TERM, PHRASE, rare_term  # its neighbour: bench/ heads sys.path
        from sqlalchemy import func, select

        from repository.config import Settings
        from repository.storage import open_database
        from repository.storage.engine import close_all
        from repository.storage.tables.records import records

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

        # The listing's last page inside the page window (page 500 of 20, offset 9,980), and the page after it,
        # which only a cursor reaches (links.next) when the corpus is larger than the window. `search_deep_cursor`
        # follows links.next of page 500, not of page 499 (that would be page 500 again: a deep page, no cursor).
        listing = requests.get(server.base + search(sort="mostrecent", page="1"), verify=server.cert,
                               timeout=60).json()
        total = listing["hits"]["total"]
        deepest = str(max(1, min(10_000, total) // 20))
        deep_page = search(sort="mostrecent", page=deepest)
        page = requests.get(server.base + deep_page, verify=server.cert, timeout=60).json()
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
            ("search_deep_page", [deep_page]),
            ("search_deep_cursor", [deep]),
            # The same depth by another key (deep_pages.by_first_part; 2.7 s of CPU at a million records before it)
            ("search_deep_publication_date", [search(sort="-publication_date", page=deepest)]),
        ]
        targets += [(f"record_{fmt}", [f"/api/records/{recid}?format={fmt}" for recid in ids])
                    for fmt in RECORD_FORMATS]
        targets.append(("record_v1_any", [f"/api/records/{recid}" for recid in sample["spread"]]))
        targets += [(f"page20_{fmt}", [search(q=common, format=fmt)]) for fmt in EXPORT_FORMATS]
        return targets

    # the non-HTTP-load measurements
    def reindex(self) -> dict:
        """A rebuild of the whole index from the stored copies: bench/reindex_bench.py."""
        from reindex_bench import measure  # its neighbour: bench/ heads sys.path

        return measure(self.args.instance, PUBLIC_BASE)

    def ratelimit(self) -> dict:
        """The ceiling endpoint on two servers of the first setup, rate limits off and on, measured in turn so that
        drift hits both: bench/ratelimit_bench.py."""
        from ratelimit_bench import RATELIMIT_ON_ENV, measure  # its neighbour: bench/ heads sys.path

        setup = self.args.setups.split(",")[0]
        with Server(self.args.instance, setup, self.args.out) as off, \
                Server(self.args.instance, setup, self.args.out, RATELIMIT_ON_ENV, "-ratelimit") as on:
            return measure(off, on, _session, self.load, 5 if self.args.quick else 7, setup)

    def harvest(self, server: Server, prefix: str) -> dict:
        """A full OAI-PMH ListRecords harvest in `prefix`: bench/harvest_bench.py."""
        from harvest_bench import measure  # its neighbour: bench/ heads sys.path

        session = _session(server)
        try:
            return measure(session, server, prefix, self.args.harvest_limit)
        finally:
            session.close()

    def upload(self, server: Server, token: str) -> dict:
        """One file in one streamed PUT against the plain write+MD5 loop: bench/upload_bench.py."""
        from upload_bench import measure  # its neighbour: bench/ heads sys.path

        session = _session(server)
        session.headers["Authorization"] = f"Bearer {token}"
        try:
            return measure(session, server, self.args.instance, self.args.upload_mb,
                           lambda pid: _status_kb(pid, "VmHWM"))
        finally:
            session.close()

    def multipart(self, server: Server, token: str) -> dict:
        """The same size as `upload` sent as a multipart upload, 4 parts at once (`--multipart-parallel`), from
        initiate to the completed object, against the plain write+MD5 loop: bench/multipart_bench.py."""
        from multipart_bench import measure  # its neighbour: bench/ heads sys.path

        session = _session(server)
        session.headers["Authorization"] = f"Bearer {token}"
        try:
            return measure(session, server, self.args.instance, self.args.upload_mb, max(1, self.args.upload_mb // 16),
                           self.args.multipart_parallel, lambda pid: _status_kb(pid, "VmHWM"))
        finally:
            session.close()

    def publish(self, server: Server, token: str) -> dict:
        """Publish -> searchable, a few runs: bench/publish_bench.py."""
        from publish_bench import measure  # its neighbour: bench/ heads sys.path

        session = _session(server)
        session.headers["Authorization"] = f"Bearer {token}"
        try:
            return measure(session, server, self.args.publish_runs)
        finally:
            session.close()

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

    def engines(self, sample: dict) -> dict:
        """The search targets and a reindex on the embedded engine and on an OpenSearch node, a server each, in
        turn: bench/engines_bench.py."""
        from engines_bench import measure  # its neighbour: bench/ heads sys.path

        return measure(self, Server, sample, PUBLIC_BASE, self.args.opensearch_url,
                       lambda line: print(line, file=sys.stderr, flush=True))

    def archive(self, server: Server, token: str) -> dict:
        """A record's files as one zip (`files-archive`) against reading them from disk: bench/archive_bench.py."""
        from archive_bench import measure  # its neighbour: bench/ heads sys.path

        session = _session(server)
        session.headers["Authorization"] = f"Bearer {token}"
        try:
            # The same archive also from a server behind a proxy (plain HTTP), against the bare disk read.
            with Server(self.args.instance, server.setup, self.args.out, label="-behind-proxy",
                        behind_proxy=True) as plain:
                return measure(session, server, self.args.instance, self.args.archive_files, self.args.archive_mb,
                               5, lambda pid: _status_kb(pid, "VmHWM"), plain)
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
        if "engines" in parts:
            self.results["engines"] = self.phase("search engines side by side (embedded, OpenSearch)",
                                                 self.engines, sample)
        self.results["meta"]["finished"] = datetime.now(UTC).isoformat(timespec="seconds")
        from report import verdicts  # its neighbour: bench/ heads sys.path

        self.results["verdicts"] = verdicts(self.results)
        self.save()
        return self.results


def _git_commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


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
    parser.add_argument("--multipart-parallel", type=int, default=4,
                        help="parts of the multipart upload sent at once (default 4, issue 20's figure; 1: a client "
                             "that sends its parts one at a time)")
    parser.add_argument("--publish-runs", type=int, default=None)
    parser.add_argument("--archive-files", type=int, default=None,
                        help="files of the archived record (default 4; quick 3)")
    parser.add_argument("--archive-mb", type=int, default=None, help="MiB per archived file (default 256; quick 16)")
    parser.add_argument("--harvest-limit", type=int, default=0, help="stop a harvest after N records (0: all)")
    parser.add_argument("--parts",
                        default="reindex,ratelimit,http,oai,upload,multipart,publish,archive,pages,mix,compare,engines",
                        help="what to measure (default: everything)")
    parser.add_argument("--targets", default="", help="regular expression: measure only the matching requests")
    parser.add_argument("--opensearch-url", default=None,
                        help="`--parts engines` against this running OpenSearch (default: start the tests' node)")
    parser.add_argument("--python-load", action="store_true", help="use the Python load generator even with wrk")
    parser.add_argument("--loadgen", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.loadgen:
        from load import generate  # its neighbour: bench/ heads sys.path

        generate(json.loads(sys.stdin.read() if args.loadgen == "-" else args.loadgen))
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
    from report import failures, table  # its neighbour: bench/ heads sys.path

    print(table(results))
    print(f"\nreport: {results['meta']['report']}")
    problems = failures(results)
    for problem in problems:
        print(f"FAILED {problem}", file=sys.stderr)
    if problems:  # what the servers answered and logged as errors: a temporary instance's logs go with it
        for path in sorted(glob.glob(os.path.join(args.out, "server-*.log"))):
            statuses = error_statuses(path)
            if statuses:
                print(f"{os.path.basename(path)}: error responses (status, bytes sent, route: count; a 500 of 0 bytes "
                      f"is also what a request whose client left is logged as): {statuses}", file=sys.stderr)
            for block in server_errors(path):
                print(f"{os.path.basename(path)}: {block}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
