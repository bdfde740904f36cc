"""Deep pages of `sort=mostrecent`, `mostviewed`, `publication_date` and `version` in the embedded engine, found
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
1677-2262 (tantivy_query.KEYED_DATES), and the version's with the concept, then the version: there the column only
points at the page's first value, and the page is read by the key from that value's first key on
(`by_first_part`), exact whatever the column holds. Journal and conference session keep the general way (text
first). A cursor does too: its range over the key column measured as fast as reading it this way, at 100,000
records and at a million.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import tantivy

from repository.search.documents import (
    MISSING_KEY,
    UTC_SECONDS,
    day_keys,
    mostrecent_key,
    mostviewed_key,
    number_keys,
)
from repository.search.embedded.tantivy_query import DATES, PRESENT, hit_count, key_range
from repository.search.params import SearchRequest

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


@dataclass(frozen=True)
class Pointer:
    """A column holding the first part of a sort's key (`by_first_part`): `keys` gives the [lower, upper) keys that
    start with one of its values (None: open); `first` the [lower, upper) keys that come first in an ascending and in
    a descending order, yet last in the column's (it has no value for them), None when there are none."""

    field: str
    keys: Callable[[Any], tuple[str | None, str | None]]
    first: tuple[tuple[str | None, str | None] | None, tuple[str | None, str | None] | None]


def _day_keys(nanoseconds: Any) -> tuple[str | None, str | None]:
    day = _at(int(nanoseconds)).date()
    return day_keys(day, day)


_HELD_DAYS = day_keys(DATES[0].date(), DATES[1].date())
# Sorts whose key starts with a value that a column also holds: a day (of the years 1-9999, which the date column
# holds for 1677-2262 only, tantivy_query.KEYED_DATES), a concept (then the version, then the record).
POINTERS = {
    "publication_date": Pointer("publication_date", _day_keys, ((None, _HELD_DAYS[0]), (_HELD_DAYS[1], None))),
    "version": Pointer("conceptrecid", lambda value: number_keys(int(value)), (None, (MISSING_KEY, None))),
}


def by_first_part(index: tantivy.Index, searcher: tantivy.Searcher, query: tantivy.Query,
                  req: SearchRequest) -> tuple[list[Any], list[Any] | None, int] | None:
    """A deep page of a sort of POINTERS as `_by_key` gives it, or None for the general way.

    The column only points at the page: the value `v` at the page's first position (past the matches the key puts
    first and the column last), then the matches whose key is past the keys before `v`'s (in a descending order,
    before the keys after them), read by the key from `offset` minus how many keys those are. Exact whatever the
    column holds; fast when it holds the key's order, the page then starting within `v`'s keys (tantivy turns each
    hit it skips back into text: 0.1 ms apiece)."""
    pointer = POINTERS.get(req.sort)
    if pointer is None or req.after is not None or req.offset < DEEP:
        return None
    order = tantivy.Order.Desc if req.descending else tantivy.Order.Asc
    key = f"sort_{req.sort}"
    first = pointer.first[req.descending]
    position = req.offset - (_count(searcher, _both(query, key_range(index, key, *first))) if first else 0)
    if position < 0:
        return None  # the page starts among those: the general way
    found = searcher.search(query, 1, count=True, order_by_field=pointer.field, offset=position, order=order)
    if not found.hits or found.hits[0][0] is None:
        return None  # past the matches, or among those the column has no value for
    lower, upper = pointer.keys(found.hits[0][0])
    before, rest = ((upper, None), (None, upper)) if req.descending else ((None, lower), (lower, None))
    skip = req.offset - _count(searcher, _both(query, key_range(index, key, *before)))
    if skip < 0:
        return None  # the column put the page before its value: the general way
    hits = searcher.search(_both(query, key_range(index, key, *rest)), req.size, count=False, order_by_field=key,
                           offset=skip, order=order).hits
    return [address for _, address in hits], ([str(hits[-1][0])] if hits else None), hit_count(found)
