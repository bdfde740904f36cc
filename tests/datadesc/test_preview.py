"""Table previews: a CSV copied into SQLite, then paged, filtered and sorted by known columns only."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from helpers.datadesc_docs import VALID_ROWS, csv_bytes

from repository.datadesc import MAX_LIMIT, build_preview_db, query_preview
from repository.errors import BadRequest

TYPES = {"country": "string", "year": "integer", "value": "number", "notes": "string"}


@pytest.fixture
def preview(tmp_path: Path) -> Path:
    """A preview database built from the valid example rows."""
    (tmp_path / "data.csv").write_bytes(csv_bytes(*VALID_ROWS))
    build_preview_db(tmp_path / "data.csv", tmp_path / "previews" / "data.db", TYPES)
    return tmp_path / "previews" / "data.db"


def test_first_rows_with_column_types(preview: Path) -> None:
    page = query_preview(preview, limit=2)
    assert page["columns"][:3] == [
        {"name": "country", "type": "string"},
        {"name": "year", "type": "integer"},
        {"name": "value", "type": "number"},
    ]
    assert page["columns"][3] == {"name": "indicator", "type": "string"}  # not described: text
    assert page["total"] == len(VALID_ROWS)
    assert page["rows"][0] == {
        "country": "Germany",
        "year": 1990,
        "value": 1.5,
        "indicator": "gdp",
        "source": "World Bank",
        "unit": "USD",
        "notes": "first",
    }
    assert [r["country"] for r in page["rows"]] == ["Germany", "FR"]


def test_missing_values_are_null(preview: Path) -> None:
    [row] = query_preview(preview, filters={"year": "2005"})["rows"]
    assert row == {
        "country": None,
        "year": 2005,
        "value": None,
        "indicator": "gdp",
        "source": None,
        "unit": None,
        "notes": None,
    }


def test_offset(preview: Path) -> None:
    page = query_preview(preview, limit=2, offset=3)
    assert [r["year"] for r in page["rows"]] == [2005, 2010]
    assert query_preview(preview, offset=50)["rows"] == []


def test_filters_compare_typed_values(preview: Path) -> None:
    assert [r["country"] for r in query_preview(preview, filters={"value": "2"})["rows"]] == ["FR"]
    both = query_preview(preview, filters={"indicator": "gdp", "source": "World Bank"})
    assert both["total"] == 2
    assert query_preview(preview, filters={"country": None})["total"] == 1


def test_sort_ascending_and_descending(preview: Path) -> None:
    assert [r["year"] for r in query_preview(preview, sort="year")["rows"]] == [1990, 2001, 2005, 2010, 2030]
    assert [r["year"] for r in query_preview(preview, sort="-year")["rows"]] == [2030, 2010, 2005, 2001, 1990]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"filters": {"nope": "1"}}, "nope"),
        ({"filters": {'year" OR 1=1 --': "1"}}, 'year" OR 1=1 --'),
        ({"sort": "-nope"}, "sort"),
        ({"sort": "year; DROP TABLE rows"}, "sort"),
        ({"filters": {"year": "nineteen"}}, "year"),
        ({"limit": 0}, "limit"),
        ({"offset": -1}, "offset"),
    ],
)
def test_bad_requests_name_the_problem(preview: Path, kwargs: dict, field: str) -> None:
    with pytest.raises(BadRequest) as caught:
        query_preview(preview, **kwargs)
    assert caught.value.status == 400
    assert [e["field"] for e in caught.value.errors] == [field]


def test_values_never_become_sql(preview: Path) -> None:
    assert query_preview(preview, filters={"country": "x' OR '1'='1"})["total"] == 0
    assert query_preview(preview)["total"] == len(VALID_ROWS)


def test_limit_is_capped(tmp_path: Path) -> None:
    rows = [f"DE,{1990 + i % 40},{i},,,," for i in range(MAX_LIMIT + 200)]
    (tmp_path / "big.csv").write_bytes(csv_bytes(*rows))
    build_preview_db(tmp_path / "big.csv", tmp_path / "big.db", TYPES)
    page = query_preview(tmp_path / "big.db", limit=10_000)
    assert page["limit"] == MAX_LIMIT and len(page["rows"]) == MAX_LIMIT
    assert page["total"] == MAX_LIMIT + 200
    assert page["rows"][-1]["value"] == MAX_LIMIT - 1


def test_awkward_headers_and_ragged_rows(tmp_path: Path) -> None:
    (tmp_path / "odd.csv").write_bytes(b'a,,a,_row,"q""uote"\n1,2,3,4,5,6\n7\n')
    build_preview_db(tmp_path / "odd.csv", tmp_path / "odd.db")
    page = query_preview(tmp_path / "odd.db", sort='q"uote')
    assert [c["name"] for c in page["columns"]] == ["a", "column_2", "a_2", "_row_2", 'q"uote']
    assert page["rows"] == [
        {"a": "7", "column_2": None, "a_2": None, "_row_2": None, 'q"uote': None},
        {"a": "1", "column_2": "2", "a_2": "3", "_row_2": "4", 'q"uote': "5"},
    ]


def test_build_replaces_atomically_and_leaves_no_temporary_files(preview: Path) -> None:
    assert sorted(p.name for p in preview.parent.iterdir()) == ["data.db"]
    with sqlite3.connect(preview) as conn:
        assert conn.execute("SELECT count(*) FROM rows").fetchone() == (len(VALID_ROWS),)
    conn.close()


def test_text_that_is_not_utf8_is_still_previewed(tmp_path: Path) -> None:
    (tmp_path / "latin.csv").write_bytes("city,year\nM\u00fcnchen,2001\n".encode("latin-1"))
    build_preview_db(tmp_path / "latin.csv", tmp_path / "latin.db", {"year": "integer"})
    assert query_preview(tmp_path / "latin.db")["rows"] == [{"city": "M\ufffdnchen", "year": 2001}]
