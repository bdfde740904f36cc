"""The reindex of bench/bench.py (`--parts reindex`): scripts/reindex.py's rebuild (a new index bulk loaded from the
stored copies, then the alias swapped) of the whole corpus, in records/s, and its parity check. No figure is
asserted."""

from __future__ import annotations

import time


def measure(instance: str, public: str, overrides: dict[str, str] | None = None) -> dict:
    """Rebuild the index of the instance at `instance` (BASE_URL `public`, the one its corpus was loaded with);
    `overrides` are settings, e.g. the SEARCH_URL of an OpenSearch node to build the index there instead."""
    from repository.config import Settings
    from repository.search.open import open_from_settings
    from repository.storage import open_database
    from repository.storage.engine import close_all
    from repository.worker import reindex

    settings = Settings.build(INSTANCE_PATH=instance, BASE_URL=public, **(overrides or {}))
    db = open_database(settings.DATABASE_URL)
    search = open_from_settings(settings)  # as scripts/reindex.py opens it (SEARCH_BULK_HEAP_MB)
    started = time.perf_counter()
    loaded = reindex.rebuild(db, settings, search, lambda n: None)
    elapsed = time.perf_counter() - started
    problems = reindex.check(db, search)
    close_all()
    return {"records": loaded, "seconds": round(elapsed, 2), "rate": loaded / elapsed,
            "parity_problems": len(problems)}


def summary(result: dict) -> str:
    """One line for the benchmark's table."""
    return (f"reindex: {result['rate']:.0f} records/s ({result['records']} records in {result['seconds']} s, "
            f"parity problems: {result['parity_problems']})")
