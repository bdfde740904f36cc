"""Queries whose hits all score alike (`q=*`, a range, one pattern) order by recid under bestmatch, in pages and
in cursor walks, as every other query breaks its ties: the embedded engine reads them in recid order instead of
fetching and sorting every tied hit."""

from __future__ import annotations

import pytest
from helpers.search import ids, run

from .test_contract import LATEST


def _walk(backend, **args) -> list[int]:  # type: ignore[no-untyped-def]
    walked, cursor = [], None
    while True:
        page = run(backend, size=7, **args, **({"cursor": cursor} if cursor else {}))
        walked += ids(page)
        cursor = page.next_cursor
        if cursor is None:
            return walked


@pytest.mark.parametrize(("q", "keep"), [
    ("*", lambda r: True),
    ("recid:[0 TO 9223372036854775807]", lambda r: True),
    ("doi:10.*", lambda r: bool(r.get("doi"))),
    ("title:/.*/", lambda r: bool(r["metadata"].get("title"))),
], ids=["all", "range", "wildcard", "regex"])
def test_constant_score_queries_order_by_recid(loaded, q, keep):
    expected = sorted(r["id"] for r in LATEST if keep(r))
    assert expected
    assert ids(run(loaded, q=q, size=100)) == expected
    assert ids(run(loaded, q=q, sort="-bestmatch", size=100)) == expected[::-1]
    pages = [ids(run(loaded, q=q, size=7, page=p)) for p in range(1, -(-len(expected) // 7) + 1)]
    assert sum(pages, []) == expected
    assert _walk(loaded, q=q) == expected
    assert _walk(loaded, q=q, sort="-bestmatch") == expected[::-1]
