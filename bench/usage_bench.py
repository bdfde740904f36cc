#!/usr/bin/env python
"""What counting a record read costs, in one process (no HTTP, no TLS, no Flask): `--reads` distinct records read as
`GET /api/records/<id>` reads them (`repository.records.read.read_record`, each a COUNTER investigation buffered by
repository.records.stats), then the worker's pass that aggregates their events, each timed in CPU
(`time.process_time`), per read and per event, `--rounds` times.

    python bench/usage_bench.py --instance /work/inst-20k [--reads 3000] [--rounds 2]

The instance is one of bench/generate_corpus.py; its usage tables keep the events read here (as a live instance's
would). No figure is asserted."""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the project's root
PUBLIC_BASE = "https://127.0.0.1:5000"  # the corpus's BASE_URL (bench/bench.py's)


def measure(instance: str, reads: int, rounds: int) -> dict:
    from sqlalchemy import select

    from repository.config import Settings
    from repository.records.read import read_record
    from repository.records.stats import Visit
    from repository.services import build_services
    from repository.storage.tables.records import records

    settings = Settings.build(INSTANCE_PATH=instance, BASE_URL=PUBLIC_BASE, BACKGROUND_WORKER=False,
                              SECRET_KEY="bench-secret")
    s = build_services(settings)
    with s.db.read() as conn:
        ids = list(conn.execute(select(records.c.id).where(records.c.deleted.is_(None))).scalars())
    random.Random(7).shuffle(ids)
    s.stats.on_pass()  # what earlier runs left
    out: dict = {"reads": reads, "rounds": []}
    for n in range(rounds):
        chosen = ids[n * reads:(n + 1) * reads]
        started = time.process_time()
        for recid in chosen:
            visit = Visit(None, "192.0.2.1", "Mozilla/5.0 (bench) Firefox/120.0", s.clock())
            read_record(s.db, s.settings, s.search, s.record_cache, s.stats, recid, None, visit=visit)
        read_cpu = time.process_time() - started
        s.stats.flush()
        started = time.process_time()
        events = s.stats.on_pass()
        pass_cpu = time.process_time() - started
        out["rounds"].append({"read_us": round(read_cpu / len(chosen) * 1e6), "events": events,
                              "aggregate_us_per_event": round(pass_cpu / max(events, 1) * 1e6)})
    s.db.dispose()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--instance", required=True)
    parser.add_argument("--reads", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    print(json.dumps(measure(os.path.abspath(args.instance), args.reads, args.rounds), indent=1))


if __name__ == "__main__":
    main()
