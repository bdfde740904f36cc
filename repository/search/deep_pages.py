"""Deep pages of `sort=mostrecent` in the embedded engine, read through integer columns instead of the sort key.

A page of `sort=<option>` is ordered by the `sort_<option>` keyword column (documents.sort_keys: the option's
values, then the record id, as one string). tantivy collects the first `offset + size` hits of each segment by the
column's term ordinals, then turns every one of them back into its text through the term dictionary, about 0.1 ms a
hit: page 500 of the listing (offset 9,980) took 1.1 s at 100,000 records, page 50 0.15 s, where the same offsets
ordered by an integer column take 1-5 ms.

`mostrecent` is the listing's order, and its key is `created` (whole seconds, UTC) then the record id, both of which
are integer columns too. So a page past DEEP is found in them, exactly as the key orders it:

1. the `created` value at the page's first position (`offset`), ordered by that column: `v`, and the total;
2. how many matches come before every match created at `v` (`before`), so the page starts `offset - before` hits
   into the group created at `v`;
3. the group in record id order from there (the key's own tie-break);
4. if the page runs past the group, its rest from the matches after `v`, by the key again (at most a page of hits,
   so a cheap read of it).

A cursor is left to the general way: its range over the key column measured no slower than this at 100,000 records.

A document without `created` has a key that sorts after every dated one; no published record lacks it, but an
index holding one is read the general way.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import tantivy

from repository.search.documents import mostrecent_key
from repository.search.params import SearchRequest
from repository.search.tantivy_query import PRESENT, hit_count

DEEP = 200  # offsets from which a mostrecent page is read through the integer columns (tests lower it)
CREATED = "created"
ONE_SECOND = 1_000_000_000  # the date column's nanoseconds


def _at(nanoseconds: int) -> datetime:
    return datetime.fromtimestamp(nanoseconds // ONE_SECOND, UTC)


def _created(schema: tantivy.Schema, low: int | None, high: int | None, include_low: bool = True,
             include_high: bool = True) -> tantivy.Query:
    return tantivy.Query.range_query(schema, CREATED, tantivy.FieldType.Date,
                                     lower_bound=None if low is None else _at(low),
                                     upper_bound=None if high is None else _at(high),
                                     include_lower=include_low, include_upper=include_high)


def _both(query: tantivy.Query, restriction: tantivy.Query) -> tantivy.Query:
    return tantivy.Query.boolean_query([(tantivy.Occur.Must, query), (tantivy.Occur.Must, restriction)])


def _count(searcher: tantivy.Searcher, query: tantivy.Query) -> int:
    return hit_count(searcher.search(query, 1))


def by_created(schema: tantivy.Schema, searcher: tantivy.Searcher, query: tantivy.Query,
               req: SearchRequest) -> tuple[list[Any], list[Any] | None, int] | None:
    """The page of `req` (sort=mostrecent, a page number past DEEP) as `_by_key` gives it: the hits' addresses,
    the last hit's key for the next cursor, the total. None when it must be read the general way."""
    if req.sort != "mostrecent" or req.after is not None or req.offset < DEEP:
        return None
    if _count(searcher, tantivy.Query.term_query(schema, PRESENT, CREATED)) != searcher.num_docs:
        return None  # an undated document: its key's place is not in the column
    order = tantivy.Order.Desc if req.descending else tantivy.Order.Asc
    first = searcher.search(query, 1, count=True, order_by_field=CREATED, offset=req.offset, order=order)
    total = hit_count(first)
    if not first.hits:
        return [], None, total
    moment = int(first.hits[0][0])
    # Before the group of `moment` in this order: created later (descending) or earlier (ascending); after it, the
    # other way round.
    before = _created(schema, moment, None, include_low=False) if req.descending else \
        _created(schema, None, moment, include_high=False)
    after = _created(schema, None, moment, include_high=False) if req.descending else \
        _created(schema, moment, None, include_low=False)
    skip = req.offset - _count(searcher, _both(query, before))
    group = searcher.search(_both(query, _created(schema, moment, moment)), req.size, count=False,
                            order_by_field="recid", offset=skip, order=order).hits
    page = [(mostrecent_key(_at(moment), int(recid)), address) for recid, address in group]
    if len(page) < req.size:
        rest = searcher.search(_both(query, after), req.size - len(page), count=False,
                               order_by_field="sort_mostrecent", order=order).hits
        page += [(str(key), address) for key, address in rest]
    return [address for _, address in page], ([page[-1][0]] if page else None), total
