"""Deep pages of `sort=mostrecent`, `sort=mostviewed` and `sort=publication_date` in the embedded engine, found
through integer and date columns instead of the sort key alone.

A page of `sort=<option>` is ordered by the `sort_<option>` keyword column (documents.sort_keys: the option's
values, then the record id, as one string). tantivy collects the first `offset + size` hits of each segment by the
column's term ordinals, then turns every one of them back into its text through the term dictionary, about 0.1 ms a
hit: page 500 of the listing (offset 9,980) took 1.1 s at 100,000 records, page 100 0.3 s, where the same offsets
ordered by an integer column take 1-5 ms.

Where the key is one value that is also an integer column (`created` in whole seconds for mostrecent, the version's
views for mostviewed: COLUMNS), then the record id, a page past DEEP is found in those columns, exactly as the key
orders it (`by_column`):

1. the column's value at the page's first position (`offset`), ordered by that column: `v`, and the total;
2. how many matches come before every match holding `v` (`before`), so the page starts `offset - before` hits into
   the group holding `v`;
3. the group in record id order from there (the key's own tie-break);
4. if the page runs past the group, its rest from the matches after `v`, by the key again (at most a page of hits,
   so a cheap read of it).

A document without the value (its key sorts after every other), one whose date the column cannot hold
(tantivy_query.DATES: left out of the column, and not `PRESENT`) and a negative count (keyed as 0) are not in the
column's order; no published record has any of them, but an index holding one is read the general way.

The publication date's key starts with the day as text, of any year 1-9999, which its date column holds only for
1677-2262 (tantivy_query.KEYED_DATES): there the column only points at the page's day, and the page is read by the
key from that day's first key on (`by_day`), exact whatever the column holds. Version, journal and conference
session keep the general way (text or two values first). A cursor does too: its range over the key column measured
as fast as reading it this way, at 100,000 records and at a million.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import tantivy

from repository.search.documents import UTC_SECONDS, day_keys, mostrecent_key, mostviewed_key
from repository.search.params import SearchRequest
from repository.search.tantivy_query import DATES, PRESENT, hit_count

DEEP = 200  # offsets from which a page is read through the integer columns (tests lower it)
ONE_SECOND = 1_000_000_000  # the date column's nanoseconds


def _at(nanoseconds: int) -> datetime:
    return datetime.fromtimestamp(nanoseconds // ONE_SECOND, UTC)


@dataclass(frozen=True)
class Column:
    """The integer column a sort key starts with, and how the key is made from its value and the record id."""

    field: str
    kind: tantivy.FieldType
    key: Callable[[int, int], str]

    def bound(self, value: int) -> Any:
        return _at(value) if self.kind == tantivy.FieldType.Date else value


COLUMNS = {
    "mostrecent": Column("created", tantivy.FieldType.Date,
                         lambda value, recid: mostrecent_key(_at(value).strftime(UTC_SECONDS), recid)),
    "mostviewed": Column("stats.version_views", tantivy.FieldType.Integer, mostviewed_key),
}


def _range(schema: tantivy.Schema, column: Column, low: int | None, high: int | None, include_low: bool = True,
           include_high: bool = True) -> tantivy.Query:
    return tantivy.Query.range_query(schema, column.field, column.kind,
                                     lower_bound=None if low is None else column.bound(low),
                                     upper_bound=None if high is None else column.bound(high),
                                     include_lower=include_low, include_upper=include_high)


def _both(query: tantivy.Query, restriction: tantivy.Query) -> tantivy.Query:
    return tantivy.Query.boolean_query([(tantivy.Occur.Must, query), (tantivy.Occur.Must, restriction)])


def _count(searcher: tantivy.Searcher, query: tantivy.Query) -> int:
    return hit_count(searcher.search(query, 1))


def by_column(schema: tantivy.Schema, searcher: tantivy.Searcher, query: tantivy.Query,
              req: SearchRequest) -> tuple[list[Any], list[Any] | None, int] | None:
    """The page of `req` (a sort of COLUMNS, a page number past DEEP) as `_by_key` gives it: the hits' addresses,
    the last hit's key for the next cursor, the total. None when it must be read the general way."""
    column = COLUMNS.get(req.sort)
    if column is None or req.after is not None or req.offset < DEEP:
        return None
    if _count(searcher, tantivy.Query.term_query(schema, PRESENT, column.field)) != searcher.num_docs or \
            (column.kind == tantivy.FieldType.Integer and _count(searcher, _range(schema, column, None, -1))):
        return None  # a document without the value, or a count below 0 (its key says 0): not in the column's order
    descending = req.descending
    order = tantivy.Order.Desc if descending else tantivy.Order.Asc
    first = searcher.search(query, 1, count=True, order_by_field=column.field, offset=req.offset, order=order)
    total = hit_count(first)
    if not first.hits:
        return [], None, total
    value = int(first.hits[0][0])
    # Before the group of `value` in this order: larger values (descending) or smaller (ascending); after it, the
    # other way round.
    before = _range(schema, column, value, None, include_low=False) if descending else \
        _range(schema, column, None, value, include_high=False)
    after = _range(schema, column, None, value, include_high=False) if descending else \
        _range(schema, column, value, None, include_low=False)
    skip = req.offset - _count(searcher, _both(query, before))
    group = searcher.search(_both(query, _range(schema, column, value, value)), req.size, count=False,
                            order_by_field="recid", offset=skip, order=order).hits
    page = [(column.key(value, int(recid)), address) for recid, address in group]
    if len(page) < req.size:
        rest = searcher.search(_both(query, after), req.size - len(page), count=False,
                               order_by_field=f"sort_{req.sort}", order=order).hits
        page += [(str(key), address) for key, address in rest]
    return [address for _, address in page], ([page[-1][0]] if page else None), total


# Sorts whose key starts with a day that a date column also holds (documents.sort_keys): the column finds the day at a
# deep page's position, and the page is read from the key column past that day's first key.
DAY_COLUMNS = {"publication_date": "publication_date"}


def by_day(index: tantivy.Index, searcher: tantivy.Searcher, query: tantivy.Query,
           req: SearchRequest) -> tuple[list[Any], list[Any] | None, int] | None:
    """A deep page of a sort of DAY_COLUMNS as `_by_key` gives it, or None for the general way.

    The key orders by the day's text, which the date column cannot always follow (it holds 1677-2262 only,
    tantivy_query.KEYED_DATES), so the column only points at the page: the day `d` at the page's first position,
    then the matches whose key is past the keys before `d`'s (before them in a descending order), read by the key
    from `offset` minus how many keys those are. Exact whatever the column says; fast when it says right, the page
    then starting within its day's keys (tantivy turns each hit it skips back into text: 0.1 ms apiece)."""
    field = DAY_COLUMNS.get(req.sort)
    if field is None or req.after is not None or req.offset < DEEP:
        return None
    order = tantivy.Order.Desc if req.descending else tantivy.Order.Asc
    key = f"sort_{req.sort}"
    # The days the column cannot hold come first by the key (before 1677 ascending, after 2262 descending) and last
    # in the column (without a value): the page's first position in the column is that many earlier.
    held = day_keys(DATES[0].date(), DATES[1].date())
    outside = f"{key}:[{held[1]} TO *]" if req.descending else f"{key}:[* TO {held[0]}}}"
    position = req.offset - _count(searcher, _both(query, index.parse_query(outside, [key])))
    if position < 0:
        return None  # the page starts among them: the general way
    first = searcher.search(query, 1, count=True, order_by_field=field, offset=position, order=order)
    if not first.hits or first.hits[0][0] is None:
        return None  # past the matches, or among those the column has no day of
    day = _at(int(first.hits[0][0])).date()
    low, high = day_keys(day, day)  # the day's keys: [low, high)
    if req.descending:  # the keys from the day's last on, descending
        before, rest = f"{key}:[{high} TO *]", f"{key}:[* TO {high}}}"
    else:
        before, rest = f"{key}:[* TO {low}}}", f"{key}:[{low} TO *]"
    skip = req.offset - _count(searcher, _both(query, index.parse_query(before, [key])))
    if skip < 0:
        return None  # the column put the page before its day: the general way
    hits = searcher.search(_both(query, index.parse_query(rest, [key])), req.size, count=False, order_by_field=key,
                           offset=skip, order=order).hits
    return [address for _, address in hits], ([str(hits[-1][0])] if hits else None), hit_count(first)
