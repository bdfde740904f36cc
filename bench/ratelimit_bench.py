"""Rate limits on against off of bench/bench.py (`--parts ratelimit`): the ceiling endpoint on two servers of the
same setup, one with the limits as configured by default (counters in the file under INSTANCE_PATH) but high enough
never to refuse, measured in turn so that drift hits both: what the shared counters cost a request. No figure is
asserted."""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable
from typing import Any

# Limits on, as configured by default (counters in the file under INSTANCE_PATH), but high enough never to refuse:
# the ceiling with them against the ceiling without them is what counting costs a request.
RATELIMIT_ON_ENV = {"RATELIMIT_ENABLED": "true", "RATELIMIT_GUEST": "1000000000/minute;1000000000/hour"}


def measure(off: Any, on: Any, session_for: Callable[[Any], Any], load: Callable[[Any, list[str]], dict],
            rounds: int, setup: str) -> dict:
    """`off` and `on` (bench.Server, started with `setup`, the second with RATELIMIT_ON_ENV) in turn, `rounds`
    times; `session_for(server)` opens a session, `load(server, paths)` runs the load generator. `ratio` is on/off
    of the best runs."""
    session = session_for(off)
    limited = session.get(on.base + "/api/_ceiling", verify=on.cert, timeout=30)
    session.close()
    if "X-RateLimit-Remaining" not in limited.headers:
        raise RuntimeError("the server with limits on answered without X-RateLimit headers")
    load(off, ["/api/_ceiling"])  # warm-up runs, not reported
    load(on, ["/api/_ceiling"])
    runs: dict[str, list[dict]] = {"off": [], "on": []}
    for round_ in range(rounds):
        pair = (("off", off), ("on", on))
        for name, server in pair if round_ % 2 == 0 else pair[::-1]:  # neither always goes first
            runs[name].append(load(server, ["/api/_ceiling"]))
            print(f"  ceiling, limits {name:<4} {runs[name][-1]['rps']:>9.1f} req/s", file=sys.stderr, flush=True)
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


def summary(r: dict) -> str:
    """One line for the benchmark's table."""
    return (f"ceiling with rate limits on / off ({r['setup']}, counters {r['storage']}): {r['on_rps']:.0f} / "
            f"{r['off_rps']:.0f} req/s (ratio {r['ratio']:.2f}, {r['cost_us_per_request']:.0f} us per request; "
            f"runs on {r['on_runs']}, off {r['off_runs']}; {r['errors']} errors)")
