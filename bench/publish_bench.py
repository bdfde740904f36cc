"""Publish -> searchable of bench/bench.py (`--parts publish`): a new deposit with one small file is published, then
searched for by a word only it holds until the search finds it; the publish call's time and the time until the
record is searchable, over a few runs. No figure is asserted."""

from __future__ import annotations

import statistics
import time
from typing import Any

SEARCHABLE_WITHIN_S = 60


def measure(session: Any, server: Any, runs: int) -> dict:
    """`runs` publishes over `session` (authorized); medians of the publish call and of publish -> searchable (ms),
    and the worst run."""
    calls, searchable = [], []
    for attempt in range(runs):
        word = f"benchpublish{int(time.time() * 1000)}x{attempt}"
        deposit = session.post(server.base + "/api/deposit/depositions", timeout=60, json={"metadata": {
            "title": f"Publish latency {word}", "upload_type": "dataset", "description": f"<p>{word}</p>",
            "creators": [{"name": "Bench, Mark"}]}}).json()
        session.put(server.local(deposit["links"]["bucket"]) + "/data.csv", data=word.encode(),
                    timeout=60).raise_for_status()
        started = time.perf_counter()
        response = session.post(server.local(deposit["links"]["publish"]), timeout=60)
        calls.append((time.perf_counter() - started) * 1000)
        response.raise_for_status()
        while True:
            found = session.get(server.base + "/api/records/", params={"q": word, "size": 1}, timeout=60)
            if found.ok and found.json()["hits"]["total"] == 1:
                break
            if time.perf_counter() - started > SEARCHABLE_WITHIN_S:
                raise RuntimeError(f"a published record was not searchable within {SEARCHABLE_WITHIN_S} s")
        searchable.append((time.perf_counter() - started) * 1000)
    return {"runs": len(searchable), "publish_call_ms_median": statistics.median(calls),
            "searchable_ms_median": statistics.median(searchable), "searchable_ms_max": max(searchable)}


def summary(result: dict) -> str:
    """One line for the benchmark's table."""
    return (f"publish -> searchable: median {result['searchable_ms_median']:.0f} ms, max "
            f"{result['searchable_ms_max']:.0f} ms (publish call {result['publish_call_ms_median']:.0f} ms), "
            f"{result['runs']} runs")
