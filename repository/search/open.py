"""`open_search(url)`: the search backend a URL (or the settings) names.

Apart from the protocol (`backend.py`) because it builds the engines, which import the protocol: kept there, it
made `backend` and the engines import each other. The engines are imported when asked for, so a process loads
only the one it uses (opensearch-py is not needed by the embedded engine, tantivy not by OpenSearch).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from repository.config import Settings
from repository.search.backend import SearchBackend


def open_search(url: str, **options: Any) -> SearchBackend:
    """`embedded:///dir` or a plain path -> tantivy; `http(s)://host:9200` -> OpenSearch."""
    parts = urlsplit(url)
    if parts.scheme in ("http", "https"):
        from repository.search.opensearch.engine import OpenSearchBackend

        return OpenSearchBackend(url, **options)
    if parts.scheme in ("embedded", "file"):
        path = parts.path if not parts.netloc else f"{parts.netloc}{parts.path}"
    elif parts.scheme == "" or len(parts.scheme) == 1:  # a plain (possibly Windows drive) path
        path = url
    else:
        raise ValueError(f"Unsupported search URL {url!r}: use embedded:///path or http(s)://host:port")
    from repository.search.embedded.engine import EmbeddedBackend

    return EmbeddedBackend(Path(path), **options)


MAX_BULK_HEAP = 4096 * 1_000_000


def bulk_heap_bytes(megabytes: int = 0) -> int:
    """The bulk writer's memory: `megabytes`, or with 0 a quarter of the machine's memory, at most MAX_BULK_HEAP.
    Why that much: tantivy writes a segment each time a thread's share fills, and merges them (at a million records
    with 1 GB: 58 s of a 187 s rebuild spent waiting for the last merges); with 4 GB each of the two threads here
    keeps its half of a million records to the end, and nothing is merged."""
    if megabytes:
        return megabytes * 1_000_000
    try:
        memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):  # not on every platform
        return 1_000_000_000
    return min(MAX_BULK_HEAP, memory // 4)


def open_from_settings(settings: Settings) -> SearchBackend:
    """The search backend the settings describe (URL, index prefix and TLS options for OpenSearch)."""
    options: dict[str, Any] = {}
    if urlsplit(settings.SEARCH_URL).scheme not in ("http", "https"):
        options["cache_entries"] = settings.SEARCH_CACHE_ENTRIES
        options["bulk_heap_size"] = bulk_heap_bytes(settings.SEARCH_BULK_HEAP_MB)
    else:
        options["prefix"] = settings.SEARCH_INDEX_PREFIX
        options["replicas"] = settings.SEARCH_REPLICAS
        if settings.SEARCH_URL.startswith("https"):
            options["use_ssl"] = True
            options["verify_certs"] = settings.SEARCH_VERIFY_CERTS
            if settings.SEARCH_CA_CERTS:
                options["ca_certs"] = settings.SEARCH_CA_CERTS
            if not settings.SEARCH_VERIFY_CERTS:
                options["ssl_show_warn"] = False
    return open_search(settings.SEARCH_URL, **options)
