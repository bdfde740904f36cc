"""Pages against the API (`bench/bench.py --parts pages`): what the HTML costs over the JSON it shows, over real
HTTP on the running server. Two pairs, each measured in turn for a few rounds (the order alternating so that drift
hits both), the best run of each kept (load from outside only ever lowers a run):

- `record`: `GET /records/<id>` (the record page) against `GET /api/records/<id>` (the record's v1 JSON), over the
  same open records in turn;
- `search`: `GET /search?q=<common term>` against `GET /api/records/?q=<common term>` (the v1 envelope with its
  aggregations, which the page's facets show), the same page size for both.

The figure is `cost_ratio`, the page's cost per request over the API's (API req/s / page req/s); issue 18's target:
at most 1.5 for both. A page that does not answer 200 is reported as not measured, with its status.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlencode

COST_TARGET = 1.5
PAGE_SIZE = "20"


def pairs(sample: dict) -> dict[str, tuple[list[str], list[str]]]:
    """Pair name -> (page paths, API paths), read in turn by the load generator."""
    ids = sample["recids"][:50]
    query = {"q": sample["common"], "size": PAGE_SIZE}
    return {
        "record": ([f"/records/{recid}" for recid in ids], [f"/api/records/{recid}" for recid in ids]),
        "search": ([f"/search?{urlencode(query)}"], [f"/api/records/?{urlencode(query)}"]),
    }


def measure_pair(load: Callable[[list[str]], dict], status: Callable[[str], int], page: list[str], api: list[str],
                 rounds: int) -> dict:
    """One pair: the best page and API runs of `rounds` each, and the page's cost over the API's."""
    for path in (page[0], api[0]):
        answered = status(path)
        if answered != 200:
            return {"measured": False, "reason": f"{path} answered {answered}", "path": page[0]}
    load(page)  # warm-up runs (templates compiled, caches filled), not reported
    load(api)
    runs: dict[str, list[dict]] = {"page": [], "api": []}
    for round_ in range(rounds):
        order = (("page", page), ("api", api))
        for name, paths in order if round_ % 2 == 0 else order[::-1]:
            runs[name].append(load(paths))
    best = {name: max(results, key=lambda r: r["rps"]) for name, results in runs.items()}
    page_rps, api_rps = best["page"]["rps"], best["api"]["rps"]
    cost = api_rps / page_rps if page_rps else None
    return {"measured": True, "path": page[0], "api_path": api[0], "page_rps": page_rps, "api_rps": api_rps,
            "page_p50_ms": best["page"]["p50_ms"], "api_p50_ms": best["api"]["p50_ms"],
            "page_p99_ms": best["page"]["p99_ms"], "api_p99_ms": best["api"]["p99_ms"],
            "cost_ratio": cost, "throughput_ratio": page_rps / api_rps if api_rps else None,
            "page_runs": [round(r["rps"], 1) for r in runs["page"]], "api_runs": [round(r["rps"], 1) for r in runs["api"]],
            "errors": sum(r["errors"] for r in runs["page"] + runs["api"]),
            "met": cost is not None and cost <= COST_TARGET}


def measure(load: Callable[[list[str]], dict], status: Callable[[str], int], sample: dict, rounds: int,
            log: Callable[[str], None]) -> dict:
    """Both pairs; `load(paths)` runs the load generator over `paths`, `status(path)` GETs one."""
    out = {}
    for name, (page, api) in pairs(sample).items():
        out[name] = result = measure_pair(load, status, page, api, rounds)
        if result["measured"]:
            log(f"  {name} page {result['page_rps']:>8.1f} req/s, API {result['api_rps']:>8.1f} req/s: page cost "
                f"x{result['cost_ratio']:.2f} of the API's")
        else:
            log(f"  {name}: not measured ({result['reason']})")
    return out


def summary(result: dict) -> str:
    """One line for the benchmark's table."""
    parts = []
    for name in ("record", "search"):
        row = result.get(name, {})
        if row.get("measured"):
            parts.append(f"{name} page {row['page_rps']:.0f} req/s vs API {row['api_rps']:.0f} req/s (page cost "
                         f"x{row['cost_ratio']:.2f}, p50 {row['page_p50_ms'] or 0:.1f} / {row['api_p50_ms'] or 0:.1f} ms)")
        else:
            parts.append(f"{name}: not measured ({row.get('reason', 'not run')})")
    return "pages vs API: " + "; ".join(parts)
