"""`/api/_ceiling`: a fixed 5 KB JSON answer through the whole app (hooks, identity, limiter), registered only
with BENCH_CEILING_ENDPOINT=true. bench/bench.py reports every figure as a ratio of its requests/s."""

from __future__ import annotations

import orjson
from flask import Blueprint, Response

bp = Blueprint("ceiling", __name__)

BODY = orjson.dumps({"hits": [{"id": n, "title": f"Record number {n}", "doi": f"10.5072/bench.{n}",
                               "keywords": ["ceiling", "benchmark", "fixed"], "padding": "x" * 150}
                              for n in range(20)]})


@bp.get("/api/_ceiling")
def ceiling() -> Response:
    """The minimal endpoint: no database, no search, a precomputed body."""
    return Response(BODY, 200, mimetype="application/json")
