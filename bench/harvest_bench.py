"""The OAI-PMH harvest of bench/bench.py (`--parts oai`): a full ListRecords harvest in one metadata format,
following resumption tokens as a harvester does, in records/s. No figure is asserted."""

from __future__ import annotations

import re
import time
from typing import Any


def measure(session: Any, server: Any, prefix: str, limit: int = 0) -> dict:
    """Harvest every record in `prefix` (or stop after `limit` records, 0: all) from `server` over `session`."""
    params = {"verb": "ListRecords", "metadataPrefix": prefix}
    count = pages = 0
    started = time.perf_counter()
    while True:
        response = session.get(server.base + "/oai2d", params=params, timeout=120)
        if response.status_code == 404:
            return {"measured": False, "reason": "no /oai2d endpoint"}
        response.raise_for_status()
        body = response.text
        count += body.count("<record>") + body.count("<record ")
        pages += 1
        token = re.search(r"<resumptionToken[^>]*>([^<]+)</resumptionToken>", body)
        if not token or (limit and count >= limit):
            break
        params = {"verb": "ListRecords", "resumptionToken": token.group(1)}
    elapsed = time.perf_counter() - started
    return {"measured": True, "records": count, "pages": pages, "seconds": round(elapsed, 2),
            "rate": count / elapsed, "complete": not (limit and count >= limit)}


def summary(prefix: str, result: dict) -> str:
    """One line for the benchmark's table."""
    if not result.get("measured"):
        return f"OAI-PMH ListRecords {prefix}: not measured ({result.get('reason')})"
    return (f"OAI-PMH ListRecords {prefix}: {result['rate']:.0f} records/s ({result['records']} records, "
            f"{result['pages']} pages, {result['seconds']} s)")
