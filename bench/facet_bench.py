#!/usr/bin/env python
"""What the default facets add to cold searches of the embedded engine, in one process (no HTTP, no result cache).

    python bench/facet_bench.py --instance bench-results/instance-200k [--rounds 9]

For each search of the benchmark (bench/bench.py's terms) it times the search without facets and with the default
facets, alternately, and prints the best of `--rounds` of each: facets = with - without. The clock is this process's
CPU time (the engine answers in the calling thread), which a machine shared with other work disturbs less than
wall time. Run it at two commits against the same instance to compare them (the index is only read).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from generate_corpus import COMMON_TERM, PHRASE, rare_term  # noqa: E402 - its neighbour, as in bench.py
from werkzeug.datastructures import MultiDict  # noqa: E402

from repository.search.embedded.engine import EmbeddedBackend  # noqa: E402
from repository.search.params import parse_search_args  # noqa: E402

SEARCHES: dict[str, dict[str, str]] = {
    "listing": {},
    "common": {"q": COMMON_TERM},
    "rare": {"q": rare_term()},
    "phrase": {"q": f'"{PHRASE}"'},
    "filtered": {"q": COMMON_TERM, "type": "dataset", "access_right": "open"},
    "sorted": {"q": COMMON_TERM, "sort": "mostrecent"},
}


def best_of(rounds: int, *calls: Any) -> list[float]:
    """The best time (ms) of each call over `rounds` rounds, the calls alternating within a round."""
    best = [float("inf")] * len(calls)
    for _ in range(rounds):
        for i, call in enumerate(calls):
            started = time.process_time()
            call()
            best[i] = min(best[i], (time.process_time() - started) * 1000)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instance", required=True)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args(argv)
    backend = EmbeddedBackend(os.path.join(args.instance, "index"), cache_entries=0)
    rows = []
    for name, query in SEARCHES.items():
        req = parse_search_args(MultiDict({"size": "20", **query}))
        bare = dataclasses.replace(req, facets=())
        total = backend.search(bare).total
        alone, with_facets = best_of(args.rounds, lambda b=bare: backend.search(b), lambda r=req: backend.search(r))
        facets = max(with_facets - alone, 0.0)
        rows.append({"search": name, "total": total, "search_ms": round(alone, 2),
                     "with_facets_ms": round(with_facets, 2), "facets_ms": round(facets, 2),
                     "facets_per_search": round(facets / alone, 2)})
        print(f"{name:10} {total:>8} matches  search {alone:8.2f} ms  + facets {with_facets:8.2f} ms  "
              f"(facets {facets:7.2f} ms, x{facets / alone:.2f} of the search)", flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(rows, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
