"""`bench/bench.py --quick --parts pages` (bench/pages_bench.py): the record and search pages measured against the
API over real HTTP on the server the benchmark starts. It runs and writes its report; no figure is asserted
(timings belong to the benchmark, never to the test suite)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.e2e
def test_bench_quick_pages_runs_and_reports_both_pairs(tmp_path) -> None:  # type: ignore[no-untyped-def]
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "SEARCH_URL", "INSTANCE_PATH")}
    done = subprocess.run([sys.executable, "bench/bench.py", "--quick", "--parts", "pages", "--setups", "gthread-3x4",
                           "--out", str(tmp_path)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-8000:]
    [report] = [json.loads(p.read_text()) for p in tmp_path.glob("bench-*.json")]
    pages = report["pages"]
    assert set(pages) == {"record", "search"}
    for name, pair in pages.items():
        assert pair["path"].startswith("/records/" if name == "record" else "/search?")
        if pair["measured"]:
            assert pair["page_rps"] > 0 and pair["api_rps"] > 0 and pair["errors"] == 0
            assert pair["cost_ratio"] == pytest.approx(pair["api_rps"] / pair["page_rps"])
            assert len(pair["page_runs"]) == len(pair["api_runs"]) == 2
        else:
            assert "answered" in pair["reason"]
    assert pages["record"]["measured"]  # the record page exists: it is always measured
    verdicts = {v["name"]: v for v in report["verdicts"]}
    assert verdicts["record_page"]["value"] == pytest.approx(pages["record"]["throughput_ratio"])
    assert "pages vs API: record page" in done.stdout
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("instance-")]  # the temporary instance is gone
