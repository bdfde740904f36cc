"""Deep pages of `sort=mostrecent` and `sort=mostviewed` read through the `created` or views column and the `recid`
column (repository.search.embedded.deep_pages) are the pages the sort key gives: every page of every size in both
directions, with records created in the same second or viewed as often (ties the record id breaks), in several
segments, with and without a query, and the next cursor each carries."""

from __future__ import annotations

import random

import pytest
from helpers.search import ids, run

from repository.search.documents import _utc, sort_keys, to_index_document
from repository.search.embedded import deep_pages
from repository.search.open import open_search

from .factories import make_record

SECONDS = ["2019-05-01T10:00:00+00:00", "2019-05-01T10:00:01+00:00", "2020-01-02T03:04:05+00:00",
           "2021-07-08T09:10:11+00:00", "2021-07-08T09:10:12+00:00"]


def _records() -> list[dict]:
    rng = random.Random(20)
    recids = rng.sample(range(100, 1000), 70)
    # Mostly a few seconds shared by many records (a bulk import's), some on their own.
    return [make_record(recid, created=rng.choice(SECONDS) if i % 5 else f"2018-0{1 + i % 9}-01T00:00:{i % 60:02d}Z",
                        stats={"views": 0, "version_views": rng.choice([0, 0, 0, 3, 7, 7, i]), "downloads": 0},
                        metadata={"title": f"{'ocean' if i % 3 else 'glacier'} record {i}"})
            for i, recid in enumerate(recids)]


@pytest.fixture(scope="module")
def dated(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    # No result cache: each page is read again under the other way.
    backend = open_search(f"embedded://{tmp_path_factory.mktemp('deep')}", cache_entries=0)
    records = _records()
    for start in range(0, len(records), 9):  # one commit each: several segments
        backend.index([to_index_document(r) for r in records[start:start + 9]])
    return backend, records


def _expected(records: list[dict], keep, sort: str) -> list[int]:  # type: ignore[no-untyped-def]
    """The records `keep` chooses in the order of `sort`: their value (timestamps as indexed), then their id."""
    value = (lambda r: _utc(r["created"])) if sort.endswith("mostrecent") else \
        (lambda r: r["stats"]["version_views"])
    chosen = [(value(r), r["id"]) for r in records if keep(r)]
    return [recid for _, recid in sorted(chosen, reverse=not sort.startswith("-"))]


@pytest.mark.slow
@pytest.mark.parametrize("sort", ["mostrecent", "-mostrecent", "mostviewed", "-mostviewed"])
@pytest.mark.parametrize(("args", "keep"), [
    ({}, lambda r: True),
    ({"q": "ocean"}, lambda r: r["metadata"]["title"].startswith("ocean")),
], ids=["all", "query"])
def test_every_page_read_through_the_columns_is_the_keys_page(dated, monkeypatch, sort, args, keep):
    backend, records = dated
    _every_page_is_the_keys_page(backend, monkeypatch, sort, args, _expected(records, keep, sort))


def _every_page_is_the_keys_page(backend, monkeypatch, sort, args, expected):  # type: ignore[no-untyped-def]
    """Every page of every size, read past DEEP and the general way, is the page of `expected` (the ids in the
    key's order), with the same total and next cursor."""
    for size in (1, 4, 7, 20):
        pages = -(-len(expected) // size)
        monkeypatch.setattr(deep_pages, "DEEP", 10**9)
        general = [run(backend, sort=sort, size=size, page=page, **args) for page in range(1, pages + 2)]
        monkeypatch.setattr(deep_pages, "DEEP", 0)
        for page, before in zip(range(1, pages + 2), general, strict=True):
            found = run(backend, sort=sort, size=size, page=page, **args)
            assert ids(found) == expected[(page - 1) * size:page * size] == ids(before), (size, page)
            assert found.total == len(expected) == before.total
            assert found.next_cursor == before.next_cursor, (size, page)


def test_an_undated_document_leaves_pages_to_the_key(tmp_path, monkeypatch):
    backend = open_search(f"embedded://{tmp_path}", cache_entries=0)
    records = _records()[:12]
    docs = [to_index_document(r) for r in records]
    del docs[3]["created"]
    docs[3].update(sort_keys(docs[3]))  # its key sorts after every dated record's
    backend.index(docs)
    monkeypatch.setattr(deep_pages, "DEEP", 0)
    walked = sum((ids(run(backend, sort="-mostrecent", size=5, page=p)) for p in (1, 2, 3)), [])
    assert walked[-1] == records[3]["id"]
    assert sorted(walked) == sorted(r["id"] for r in records)


def test_a_count_below_zero_leaves_pages_to_the_key(tmp_path, monkeypatch):
    """The key holds a negative count as 0 (documents._int_part), the column as it is: such an index is read by the
    key, whose order the pages keep."""
    backend = open_search(f"embedded://{tmp_path}", cache_entries=0)
    views = {101: 0, 102: 2, 103: 0, 104: -5}  # 104 is with the zeros by its key, after them in the column
    backend.index([to_index_document(make_record(recid, stats={"views": 0, "version_views": n, "downloads": 0}))
                   for recid, n in views.items()])
    monkeypatch.setattr(deep_pages, "DEEP", 0)
    assert sum((ids(run(backend, sort="mostviewed", size=1, page=p)) for p in (1, 2, 3, 4)), []) == \
        [102, 104, 103, 101]


def test_a_date_the_column_cannot_hold_leaves_pages_to_the_key(tmp_path, monkeypatch):
    """A creation date before 1677 is left out of the date column (tantivy_query.DATES), not out of the key: such
    an index is read by the key, whose order the pages keep."""
    backend = open_search(f"embedded://{tmp_path}", cache_entries=0)
    records = _records()[:12]
    records[3] = {**records[3], "created": "1600-01-01T00:00:00+00:00"}
    backend.index([to_index_document(r) for r in records])
    monkeypatch.setattr(deep_pages, "DEEP", 0)
    for sort in ("mostrecent", "-mostrecent"):
        walked = sum((ids(run(backend, sort=sort, size=5, page=p)) for p in (1, 2, 3)), [])
        assert walked == _expected(records, lambda r: True, sort)


DAYS = ["1500-01-01", "1677-09-21", "2019-05-01", "2019-05-02", "2020-01-02", "2262-04-12"]


def _concept(i: int) -> str | None:
    return None if i % 11 == 0 else str(10 + i % 9)  # a few concepts of several versions, some records without


@pytest.fixture(scope="module")
def first_parts(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """Records sharing a few publication days (two outside what the date column holds: the key orders them, the
    column leaves them out) and a few concepts (some records without one), written in several commits."""
    backend = open_search(f"embedded://{tmp_path_factory.mktemp('parts')}", cache_entries=0)
    rng = random.Random(21)
    records = [make_record(recid, conceptrecid=_concept(i),
                           metadata={"title": f"{'ocean' if i % 3 else 'glacier'} record {i}",
                                     "publication_date": rng.choice(DAYS[2:5]) if i % 7 else DAYS[i % 2 * 5],
                                     "relations": {"version": [{"index": rng.randint(0, 3), "is_last": True,
                                                                "count": 4}]}})
               for i, recid in enumerate(rng.sample(range(100, 1000), 60))]
    for start in range(0, len(records), 8):
        backend.index([to_index_document(r) for r in records[start:start + 8]])
    return backend, records


def _key_order(sort: str, records: list[dict]) -> list[int]:
    """The record ids in the order of `sort` (publication_date or version, `-` reversing), as its key orders them."""
    def key(r: dict) -> tuple:
        if sort.endswith("publication_date"):
            return r["metadata"]["publication_date"], r["id"]
        concept = r["conceptrecid"]
        return concept is None, int(concept or 0), r["metadata"]["relations"]["version"][0]["index"], r["id"]
    return [r["id"] for r in sorted(records, key=key, reverse=sort.startswith("-"))]


@pytest.mark.slow
@pytest.mark.parametrize("sort", ["publication_date", "-publication_date", "version", "-version"])
@pytest.mark.parametrize(("args", "keep"), [
    ({}, lambda r: True),
    ({"q": "ocean"}, lambda r: r["metadata"]["title"].startswith("ocean")),
], ids=["all", "query"])
def test_every_page_read_from_its_first_part_is_the_keys_page(first_parts, monkeypatch, sort, args, keep):
    backend, records = first_parts
    _every_page_is_the_keys_page(backend, monkeypatch, sort, args, _key_order(sort, [r for r in records if keep(r)]))
