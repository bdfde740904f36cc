"""The memory a rebuild's index writer is given (SEARCH_BULK_HEAP_MB): enough that a large rebuild writes few
segments and merges none, bounded by the machine's memory."""

from __future__ import annotations

import os

from repository.config import Settings
from repository.search.open import MAX_BULK_HEAP, bulk_heap_bytes, open_from_settings


def test_the_setting_wins_and_zero_takes_a_quarter_of_the_memory_at_most_4096_mb(monkeypatch):
    assert bulk_heap_bytes(1500) == 1_500_000_000
    memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert bulk_heap_bytes(0) == min(MAX_BULK_HEAP, memory // 4)
    pages = {"SC_PHYS_PAGES": 2 * 1024**3 // 4096, "SC_PAGE_SIZE": 4096}  # a machine of 2 GiB
    monkeypatch.setattr(os, "sysconf", pages.__getitem__)
    assert bulk_heap_bytes(0) == 512 * 1024**2


def test_the_embedded_engine_is_opened_with_it(tmp_path):
    settings = Settings.build(INSTANCE_PATH=str(tmp_path), SEARCH_BULK_HEAP_MB=300)
    assert open_from_settings(settings).bulk_heap_size == 300_000_000  # type: ignore[attr-defined]
