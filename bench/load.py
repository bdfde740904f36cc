"""The load generators of bench/bench.py: wrk over a Lua script that reads the paths in turn, or (without wrk, or
with --python-load) a Python one in a separate process with one keep-alive HTTPS connection per thread. Both give
req/s, p50 and p99 in ms, and the count of requests and errors."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time


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
    out = subprocess.run([sys.executable, os.path.abspath(__file__)], input=spec,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def generate(spec: dict) -> None:
    """Load `spec["base"]` with `spec["paths"]` in turn for `spec["seconds"]` over `spec["connections"]` threads;
    prints the figures as JSON (what run_python_load reads)."""
    import http.client
    import ssl
    from urllib.parse import urlsplit

    parts = urlsplit(spec["base"])
    context = ssl.create_default_context(cafile=spec["cafile"])
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()

    def worker(offset: int) -> None:
        mine, bad, conn = [], 0, None
        paths, i = spec["paths"], offset
        go.wait()
        # Each connection answers at least once: on a starved machine a short run could otherwise end before a
        # thread's first request and report no requests at all.
        while not mine or time.monotonic() < deadline:
            if bad > 100 and not mine:  # the server does not answer: reported as errors, not waited on forever
                break
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

    go = threading.Event()
    threads = [threading.Thread(target=worker, args=(n,)) for n in range(spec["connections"])]
    for t in threads:
        t.start()
    started = time.monotonic()
    deadline = started + spec["seconds"]
    go.set()  # the window opens once every thread is there
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    latencies.sort()

    def pct(p: float) -> float | None:
        return latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000 if latencies else None

    print(json.dumps({"rps": len(latencies) / elapsed, "p50_ms": pct(0.5), "p99_ms": pct(0.99),
                      "requests": len(latencies), "errors": errors[0], "socket_errors": ""}))


if __name__ == "__main__":  # run_python_load's process: the spec on stdin
    generate(json.loads(sys.stdin.read()))
