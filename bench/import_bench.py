#!/usr/bin/env python
"""`repository-admin import api` from a second local instance over HTTPS, against the plain harvest loop of the same
records in the same run: records/s of each and their ratio.

    python bench/import_bench.py [--records 300] [--versions 2] [--concurrency 4] [--rounds 2]
    python bench/import_bench.py --write bench/results/api-import-<time>.json   # its table into the docs

A source instance is served by scripts/serve.py over TLS (bench/bench.py's `Server`) and filled over HTTP (records
of `--versions` versions, one small CSV file each). The plain harvest loop reads what the import reads (the
search pages, each concept's versions, every file) with the same number of threads, and writes nothing. Each import
goes into a new, empty instance (SQLite, the embedded search engine) and ends with every record indexed, as the
command does. Each side is timed by the clock and by this process's CPU time (the source's server is another
process), and the import's time is split into its phases (`ImportReport.phases`); the report goes to
bench/results/api-import-<time>.json. No figure is asserted; the issue's target is 100 records/s with files."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the project's root
sys.path.append(os.path.dirname(os.path.abspath(__file__)))  # after the root: `bench` stays the package
import import_report  # noqa: E402 - its neighbour

METADATA = {"upload_type": "dataset", "description": "<p>Hourly readings of a sensor.</p>",
            "creators": [{"name": "Doe, Jane", "affiliation": "Example University"}], "keywords": ["sensors"]}


def fill_source(instance: str, base: str, cert: str, records: int, versions: int) -> int:
    """`records` concepts of `versions` versions each, published over HTTP with one file per version, four at a
    time; returns the count."""
    import requests

    from repository.accounts.tokens import SCOPES, create_token, create_user
    from repository.config import Settings
    from repository.storage import open_database

    db = open_database(Settings.build(INSTANCE_PATH=instance).DATABASE_URL)
    with db.write() as conn:
        token = create_token(conn, create_user(conn, "source@example.org"), list(SCOPES))[1]
    db.dispose()
    api = base + "/api/deposit/depositions"

    def concept(number: int) -> int:
        with requests.Session() as http:
            http.verify, http.trust_env = cert, False
            http.headers["Authorization"] = f"Bearer {token}"
            dep_id = http.post(api, json={"metadata": {**METADATA, "title": f"Readings {number}"}}).json()["id"]
            for version in range(versions):
                if version:
                    draft = http.post(f"{api}/{dep_id}/actions/newversion").json()
                    dep_id = int(draft["links"]["latest_draft"].rsplit("/", 1)[1])
                    old = http.get(f"{api}/{dep_id}/files").json()
                    http.delete(f"{api}/{dep_id}/files/{old[0]['id']}")
                content = f"t,v\n{number},{version}\n".encode() * 200  # about 2 KB
                http.post(f"{api}/{dep_id}/files", data={"name": "data.csv"}, files={"file": ("data.csv", content)})
                answer = http.post(f"{api}/{dep_id}/actions/publish")
                assert answer.status_code == 202, answer.text
        return versions

    with ThreadPoolExecutor(4) as pool:
        return sum(pool.map(concept, range(records)))


def plain_harvest(base: str, cert: str, concurrency: int) -> tuple[int, int]:
    """The search pages, each concept's versions (listed when it has more than one) and every file, read and thrown
    away, as the import reads them; (records, files)."""
    import requests

    from repository.imports.source import RECORDS

    session = requests.Session()
    session.verify, session.trust_env = cert, False
    headers = {"Accept": RECORDS}

    def concept(hit: dict) -> tuple[int, int]:
        listed = [hit]  # a concept of one version: the hit is all of it, as the import reads it
        if hit["metadata"]["relations"]["version"][0]["count"] != 1:
            listed = session.get(hit["links"]["versions"], params={"size": 25, "all_versions": "true"},
                                 headers=headers, timeout=60).json()["hits"]["hits"]
        files = 0
        for record in listed:
            for item in record.get("files", []):
                session.get(item["links"]["self"], timeout=60).content  # noqa: B018 - read, thrown away
                files += 1
        return len(listed), files

    url: str | None = base + "/api/records?size=25&sort=mostrecent"  # as the import asks without a token
    hits: list[dict] = []
    while url:
        page = session.get(url, headers=headers, timeout=60).json()
        hits += page["hits"]["hits"]
        url = page["links"].get("next") if page["hits"]["hits"] else None
    with ThreadPoolExecutor(concurrency) as pool:
        counts = list(pool.map(concept, hits))
    session.close()
    return sum(c[0] for c in counts), sum(c[1] for c in counts)


def run_import(base: str, cert: str, concurrency: int) -> tuple[dict, float]:
    """One import into a new instance, indexed at the end; (the report's figures, seconds)."""
    from repository.accounts.tokens import create_user
    from repository.config import Settings
    from repository.imports.api import ApiImport
    from repository.imports.source import Source
    from repository.services import build_services

    target = tempfile.mkdtemp(prefix="import-bench-target-")
    try:
        services = build_services(Settings.build(INSTANCE_PATH=target, BASE_URL="https://127.0.0.1:5001",
                                                 SECRET_KEY="bench-secret", BACKGROUND_WORKER=False))
        with services.db.write() as conn:
            owner = create_user(conn, "import@example.org")
        source = Source(base, verify=cert, connections=concurrency)
        started, cpu = time.perf_counter(), time.process_time()
        report = ApiImport(services.db, services.files, source, owner, concurrency).run()
        while services.indexer.apply_index_rows():
            pass
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        source.close()
        services.db.dispose()
        return {"imported": report.imported, "files": report.files, "failed": len(report.failed),
                "cpu_seconds": round(cpu, 2), "phases": {k: round(v, 2) for k, v in report.phases.items()}}, seconds
    finally:
        shutil.rmtree(target, ignore_errors=True)


def measure(records: int, versions: int, concurrency: int, rounds: int) -> dict:
    from bench.bench import Server

    instance = tempfile.mkdtemp(prefix="import-bench-source-")
    logs = tempfile.mkdtemp(prefix="import-bench-logs-")
    result: dict = {"concurrency": concurrency, "rounds": []}
    try:
        server = Server(instance, "gthread-2x8", logs)
        server.env["BASE_URL"] = server.base  # the links the source hands out are followed
        with server:
            started = time.perf_counter()
            result["records"] = fill_source(instance, server.base, server.cert, records, versions)
            result["fill_seconds"] = round(time.perf_counter() - started, 1)
            for _ in range(rounds):  # alternated, so that drift (the other users of the machine) hits both
                started = time.perf_counter()
                harvested, files = plain_harvest(server.base, server.cert, concurrency)
                plain_seconds = time.perf_counter() - started
                report, import_seconds = run_import(server.base, server.cert, concurrency)
                result["rounds"].append({
                    **report, "import_seconds": round(import_seconds, 2),
                    "import_rate": round(report["imported"] / import_seconds, 1),
                    "import_cpu_rate": round(report["imported"] / report["cpu_seconds"], 1),
                    "plain_records": harvested, "plain_files": files, "plain_seconds": round(plain_seconds, 2),
                    "plain_rate": round(harvested / plain_seconds, 1),
                    "ratio": round((report["imported"] / import_seconds) / (harvested / plain_seconds), 3)})
                print(json.dumps(result["rounds"][-1]), flush=True)
        best = max(result["rounds"], key=lambda r: r["import_rate"])
        result.update(import_rate=best["import_rate"], plain_rate=best["plain_rate"], ratio=best["ratio"])
    finally:
        shutil.rmtree(instance, ignore_errors=True)
        shutil.rmtree(logs, ignore_errors=True)
    return result


def summary(result: dict) -> str:
    """One line for the benchmark's table."""
    return (f"import api: {result['import_rate']} records/s with files ({result['records']} records, concurrency "
            f"{result['concurrency']}), plain harvest loop {result['plain_rate']} records/s, ratio {result['ratio']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--records", type=int, default=300, help="concepts at the source")
    parser.add_argument("--versions", type=int, default=1, help="versions of each")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path, help="the report (default: bench/results/api-import-<time>.json)")
    parser.add_argument("--write", type=Path, metavar="REPORT", help="write REPORT's table into docs/performance.md")
    args = parser.parse_args(argv)
    if args.write:
        import_report.write_table(args.write)
        return 0
    started = import_report.start()
    result = {**started, **measure(args.records, args.versions, args.concurrency, args.rounds),
              "records_note": f" ({args.versions} version(s) each, one file a version, concurrency {args.concurrency})"}
    print(summary(result))
    print(f"report: {import_report.finish('api-import', result, args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
