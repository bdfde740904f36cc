#!/usr/bin/env python
"""`repository-admin import oai` against the plain harvest loop of the same answers, in one run and one process:
records/s of each and their ratio (docs/operators/migration.md#importing-from-oai-pmh).

    python bench/oai_import_bench.py [--records 5000] [--rounds 2]     # writes bench/results/oai-import-<time>.json
    python bench/oai_import_bench.py --write bench/results/oai-import-<time>.json   # its table into the docs

The answers are Zenodo's recorded DataCite page (tests/imports/fixtures/zenodo_datacite_page1.xml) repeated under
new identifiers and DOIs into pages of 50, chained by resumption tokens and served from a local HTTP server. The
plain loop fetches and parses every page and walks its records (what a harvest costs without importing); the
import does the same, maps each record and publishes it as a metadata-only record in a new embedded instance
(SQLite, tantivy), batch by batch as the command does, each batch indexed right after its commit. Each side is
timed by the clock and by the process's CPU time (a machine shared with other work slows the clock, not the CPU
time), and the import's time is split into its phases (`ImportReport.phases`). No figure is asserted; the issue's
target is 500 records/s."""

from __future__ import annotations

import argparse
import copy
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the project's root
sys.path.append(os.path.dirname(os.path.abspath(__file__)))  # after the root: `bench` stays the package
import import_report  # noqa: E402 - its neighbour

FIXTURE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                       "tests", "imports", "fixtures", "zenodo_datacite_page1.xml")
OAI = "{http://www.openarchives.org/OAI/2.0/}"
KERNEL = "{http://datacite.org/schema/kernel-4}"


def make_pages(total: int, tag: str) -> dict[str, bytes]:
    """Pages of 50 records by token (`first` for the first), every record with an identifier and DOI of its own."""
    from lxml import etree

    template = etree.parse(FIXTURE).getroot()
    listing = template.find(f"{OAI}ListRecords")
    originals = listing.findall(f"{OAI}record")
    for child in list(listing):
        listing.remove(child)
    pages: dict[str, bytes] = {}
    count = (total + len(originals) - 1) // len(originals)
    for number in range(count):
        root = copy.deepcopy(template)
        page = root.find(f"{OAI}ListRecords")
        for index, original in enumerate(originals):
            if number * len(originals) + index >= total:
                break
            record = copy.deepcopy(original)
            record.find(f"{OAI}header/{OAI}identifier").text = f"oai:bench:{tag}:{number}:{index}"
            doi = record.find(f".//{KERNEL}identifier")
            if doi is not None:
                doi.text = f"10.80002/bench.{tag}.{number}.{index}"
            page.append(record)
        if number + 1 < count:
            etree.SubElement(page, f"{OAI}resumptionToken").text = f"page-{number + 1}"
        pages["first" if number == 0 else f"page-{number}"] = etree.tostring(root, xml_declaration=True,
                                                                             encoding="UTF-8")
    return pages


def serve(pages: dict[str, bytes]) -> tuple[ThreadingHTTPServer, str]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            query = {k: v[-1] for k, v in parse_qs(urlsplit(self.path).query).items()}
            body = pages.get(query.get("resumptionToken", "first"), b"")
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "text/xml")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/oai"


def plain_loop(url: str) -> int:
    """Every page fetched and parsed, every record's header and metadata looked at; returns how many records."""
    from repository.imports.harvest import Fetcher, pages

    count = 0
    for page in pages(Fetcher(url, backoff=0), "datacite"):
        count += sum(1 for record in page.records if record.metadata is not None)
    return count


def import_round(url: str, tag: str) -> dict:
    from repository.accounts.tokens import create_user
    from repository.config import Settings
    from repository.imports.harvest import Fetcher
    from repository.imports.oai import Source, import_oai
    from repository.services import build_services

    instance = tempfile.mkdtemp(prefix="oai-import-bench-")
    settings = Settings.build(INSTANCE_PATH=instance, BASE_URL="https://127.0.0.1:5000", BACKGROUND_WORKER=False,
                              SECRET_KEY="bench-secret", DOI_PREFIX="10.80001")
    services = build_services(settings)
    try:
        with services.db.write() as conn:
            owner = create_user(conn, "bench@example.org")
        started, cpu = time.perf_counter(), time.process_time()
        report = import_oai(services.db, settings, owner, Source(url, "datacite"), Fetcher(url, backoff=0))
        while services.indexer.apply_index_rows():
            pass
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        done = len(report.imported) + len(report.failed) + len(report.skipped)
        return {"records": done, "imported": len(report.imported), "failed": len(report.failed),
                "seconds": round(seconds, 2), "rate": round(done / seconds), "cpu_seconds": round(cpu, 2),
                "cpu_rate": round(done / cpu), "phases": {k: round(v, 2) for k, v in report.phases.items()}}
    finally:
        services.db.dispose()
        shutil.rmtree(instance, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path, help="the report (default: bench/results/oai-import-<time>.json)")
    parser.add_argument("--write", type=Path, metavar="REPORT", help="write REPORT's table into docs/performance.md")
    args = parser.parse_args(argv)
    if args.write:
        import_report.write_table(args.write)
        return 0
    result: dict = {**import_report.start(), "records": args.records, "rounds": []}
    for number in range(args.rounds):  # alternated, so that drift hits both
        server, url = serve(make_pages(args.records, f"r{number}"))
        try:
            started, cpu = time.perf_counter(), time.process_time()
            plain = plain_loop(url)
            plain_seconds, plain_cpu = time.perf_counter() - started, time.process_time() - cpu
            imported = import_round(url, f"r{number}")
        finally:
            server.shutdown()
            server.server_close()
        phases = imported.pop("phases")
        result["rounds"].append({"plain_records": plain, "plain_seconds": round(plain_seconds, 2),
                                 "plain_rate": round(plain / plain_seconds), "plain_cpu_rate": round(plain / plain_cpu),
                                 **{f"import_{k}": v for k, v in imported.items()},
                                 "ratio": round(imported["rate"] / (plain / plain_seconds), 3), "phases": phases})
        print(json.dumps(result["rounds"][-1]), flush=True)
    best = max(result["rounds"], key=lambda r: r["import_rate"])
    result["verdict"] = "meets" if best["import_rate"] >= 500 else "below"
    print(f"report: {import_report.finish('oai-import', result, args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
