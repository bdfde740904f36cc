#!/usr/bin/env python
"""The full public export (`repository-admin export records`) against a plain loop reading the same rows, in one run
and one process: records/s of each, their ratio, and the process's memory at every batch of the export (resident
set size), to show it flat whatever the number of records.

    python bench/export_bench.py --instance /work/inst-60k [--rounds 2]

The plain loop is the export's own keyset scan over the records and their stored copies (`built_records`), each copy
unpacked and nothing else: what reading the rows costs, without building, rendering or compressing. The instance is
one of bench/generate_corpus.py. No figure is asserted; the issue's target is 5,000 records/s at a million records."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the project's root
PUBLIC_BASE = "https://127.0.0.1:5000"  # the corpus's BASE_URL (bench/bench.py's)


def _rss_kb() -> int:
    with open("/proc/self/status") as handle:
        return next(int(line.split()[1]) for line in handle if line.startswith("VmRSS:"))


def plain_loop(db, batch: int) -> int:  # type: ignore[no-untyped-def]
    """Every live record's stored copy read and unpacked by the export's keyset scan; returns how many."""
    from sqlalchemy import LargeBinary, select, type_coerce

    from repository.storage import packing
    from repository.storage.tables.derived import built_records
    from repository.storage.tables.records import records

    r = records.c
    query = (select(r.id, type_coerce(built_records.c.record, LargeBinary))
             .select_from(records.outerjoin(built_records, built_records.c.record_id == r.id))
             .where(r.deleted.is_(None)).order_by(r.id).limit(batch))
    dialect, last, count = db.engine.dialect, 0, 0
    while True:
        with db.scan() as conn:
            rows = conn.execute(query.where(r.id > last)).all()
        if not rows:
            return count
        for _recid, packed in rows:
            if packed is not None:
                packing.unpack(packed, dialect)
        count += len(rows)
        last = rows[-1][0]


def measure(instance: str, rounds: int) -> dict:
    from repository.config import Settings
    from repository.exports.reader import BATCH
    from repository.exports.writer import export_records
    from repository.search.open import open_from_settings
    from repository.storage import open_database

    settings = Settings.build(INSTANCE_PATH=instance, BASE_URL=PUBLIC_BASE, BACKGROUND_WORKER=False,
                              SECRET_KEY="bench-secret")
    db = open_database(settings.DATABASE_URL)
    search = open_from_settings(settings)
    out = tempfile.mkdtemp(prefix="export-bench-")
    result: dict = {"rounds": []}
    try:
        for _ in range(rounds):  # alternated, so that drift (the page cache, the other users of the machine) hits both
            started = time.perf_counter()
            plain = plain_loop(db, BATCH)
            plain_seconds = time.perf_counter() - started
            rss: list[int] = []
            started = time.perf_counter()
            manifest = export_records(db, settings, search, out, keep=1, progress=lambda _n, rss=rss: rss.append(_rss_kb()))
            export_seconds = time.perf_counter() - started
            result["rounds"].append({
                "records": manifest["records"], "export_seconds": round(export_seconds, 2),
                "export_rate": round(manifest["records"] / export_seconds), "plain_records": plain,
                "plain_seconds": round(plain_seconds, 2), "plain_rate": round(plain / plain_seconds),
                "ratio": round((manifest["records"] / export_seconds) / (plain / plain_seconds), 3),
                "rss_first_batch_kb": rss[0] if rss else 0, "rss_peak_kb": max(rss, default=0),
                "rss_last_batch_kb": rss[-1] if rss else 0, "batches": len(rss),
                "bytes": {name: about["size"] for name, about in manifest["files"].items()}})
        best = max(result["rounds"], key=lambda r: r["export_rate"])
        result.update(records=best["records"], export_rate=best["export_rate"], plain_rate=best["plain_rate"],
                      ratio=best["ratio"])
    finally:
        shutil.rmtree(out, ignore_errors=True)
        db.engine.dispose()
    return result


def summary(result: dict) -> str:
    """One line for the benchmark's table."""
    last = result["rounds"][-1]
    return (f"export: {result['export_rate']} records/s ({result['records']} records), plain read loop "
            f"{result['plain_rate']} records/s, ratio {result['ratio']}; RSS {last['rss_first_batch_kb'] // 1024} MB "
            f"at the first batch, {last['rss_peak_kb'] // 1024} MB at the peak, over {last['batches']} batches")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--instance", required=True, help="an instance of bench/generate_corpus.py")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", help="also write the result here")
    args = parser.parse_args(argv)
    result = measure(args.instance, args.rounds)
    print(json.dumps(result, indent=2))
    print(summary(result))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(result, handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
