"""The two search engines side by side (`--parts engines` of bench/bench.py): the same corpus and the same search
requests against the embedded engine (tantivy) and a real OpenSearch node on this machine, in one run.

The node is the tests' one (tests/opensearch_node: OpenSearch from Maven Central in one JVM, no security plugin, no
TLS), started here unless `--opensearch-url` names a running one. The corpus is indexed into it by the reindex the
service runs (a new index bulk loaded from the stored copies, then the alias swapped), timed against the same
reindex into the embedded engine. Then one server at a time answers the search targets of bench.py, each alternated
with the ceiling endpoint of that same server, so every figure is also a ratio of the ceiling measured next to it:

- `embedded`: the shipped default, repeated searches answered from the result cache until the next index commit;
- `embedded_computed`: the same engine with the result cache off (`SEARCH_CACHE_ENTRIES=0`): every search computed;
- `opensearch`: `SEARCH_URL` at the node. The service keeps no result cache of its own in front of OpenSearch; it
  asks for the node's shard request cache (`request_cache=true`), which keeps a search's query phase until the
  next refresh, as the result cache does embedded. The fetch of the page's stored records runs every time.

No figure is asserted: the page shows the table (bench/results_table.py).
"""

from __future__ import annotations

import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
INDEX_PREFIX = "bench"
NODE_HEAP = "1g"  # the test node's bound; the compose image gives OpenSearch 1 GB too
ENGINES = (  # label -> the server's settings
    ("embedded", {}),
    ("embedded_computed", {"SEARCH_CACHE_ENTRIES": "0"}),
    ("opensearch", None),  # SEARCH_URL and SEARCH_INDEX_PREFIX of the node
)


def start_node(out: str) -> Any:
    """A one-node OpenSearch in one JVM, its data under `out` (tests/helpers/opensearch_node.py)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from helpers.opensearch_node import OpenSearchCluster, java_available

    if not java_available():
        raise RuntimeError("the OpenSearch node needs java and mvn on PATH (or pass --opensearch-url)")
    return OpenSearchCluster.start(Path(tempfile.mkdtemp(prefix="opensearch-", dir=out)), heap=NODE_HEAP)


def drop_indices(url: str, prefix: str) -> None:
    """Remove what the run put into a node it did not start (its index, alias and template)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from helpers.opensearch_node import drop_indices as drop

    drop(url, prefix)


def measure(bench: Any, server_class: Callable[..., Any], sample: dict, public: str,
            opensearch_url: str | None = None, say: Callable[[str], None] = print) -> dict:
    """Reindex into both engines, then the search targets on a server per engine; returns the report's part."""
    from reindex_bench import measure as reindex  # its neighbour: bench/ heads sys.path

    args = bench.args
    node = None if opensearch_url else start_node(args.out)
    url = opensearch_url or node.url
    prefix = f"{INDEX_PREFIX}{int(time.time())}"
    search_env = {"SEARCH_URL": url, "SEARCH_INDEX_PREFIX": prefix}
    result: dict = {"opensearch_url_given": bool(opensearch_url), "node_heap": None if opensearch_url else NODE_HEAP}
    try:
        result["reindex"] = {"embedded": reindex(args.instance, public),
                             "opensearch": reindex(args.instance, public, search_env)}
        for name in ("embedded", "opensearch"):
            one = result["reindex"][name]
            say(f"  reindex {name:<12} {one['rate']:>9.0f} records/s  ({one['records']} records, parity problems: "
                f"{one['parity_problems']})")
        setup = args.setups.split(",")[0]
        result["setup"] = setup
        for label, env in ENGINES:
            say(f"  server on {label}")
            with server_class(args.instance, setup, args.out, search_env if env is None else env,
                              f"-{label}") as server:
                targets = [t for t in bench.targets(server, sample) if t[0].startswith("search_")]
                if args.targets:
                    targets = [t for t in targets if re.search(args.targets, t[0])]
                for _name, paths in targets:  # each request's code path run hot first (the JVM's JIT, caches)
                    bench.load(server, paths)
                result[label] = bench.alternate(server, targets, args.ceiling_every)
        if node is not None:
            rss = node.rss_bytes()
            result["node_rss_mib"] = None if rss is None else round(rss / 2**20)
    finally:
        if node is not None:
            node.close()
        else:
            drop_indices(url, prefix)
    return result


def summary(result: dict) -> list[tuple[str, dict | None, dict | None, dict | None]]:
    """(target, embedded row, embedded_computed row, opensearch row) for each measured request."""
    by_engine = {label: {row["name"]: row for row in result.get(label) or []} for label, _env in ENGINES}
    names = [row["name"] for row in result.get("embedded") or []]
    return [(name, by_engine["embedded"].get(name), by_engine["embedded_computed"].get(name),
             by_engine["opensearch"].get(name)) for name in names]

