"""Table previews: a CSV copied once into its own SQLite database, then paged, filtered and sorted."""

from __future__ import annotations

import csv
import os
import sqlite3
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import closing
from pathlib import Path
from typing import Any, TextIO

import sqlite_utils

from ..errors import BadRequest, UnprocessableEntity, field_error
from .tables import MISSING_VALUES

MAX_LIMIT = 1000
DEFAULT_LIMIT = 20
TABLE = "rows"
COLUMNS_TABLE = "_columns"
ROW_KEY = "_row"  # internal row number; a CSV column of that name is renamed

# A preview is one SQLite table: SQLite allows 2,000 columns, and a line is read whole before it is split.
MAX_COLUMNS = 1000
MAX_LINE_CHARS = 1_000_000
# A preview is built on the first request, anonymous ones included: it holds the first rows only (about 2 s of
# work), and says when the file has more. The whole file is downloaded, or validated in the background.
MAX_ROWS = 100_000
INT64_MAX = 2**63 - 1  # SQLite's integers (and orjson's) are 64-bit
INFO_TABLE = "_info"

_PYTHON_TYPES: dict[str, type] = {"integer": int, "number": float}
_MISSING = frozenset(MISSING_VALUES)
_BATCH = 2000


def _column_names(header: list[str]) -> list[str]:
    """Header labels made usable as distinct column names (blank -> column_N, repeats -> name_2)."""
    seen = {ROW_KEY.casefold()}
    names = []
    for position, label in enumerate(header, start=1):
        base = label.replace("\x00", "").strip() or f"column_{position}"  # SQL names cannot hold NUL
        name, suffix = base, 2
        while name.casefold() in seen:
            name, suffix = f"{base}_{suffix}", suffix + 1
        seen.add(name.casefold())
        names.append(name)
    return names


def _convert(value: str, kind: type | None) -> Any:
    """A cell as stored: missing markers -> NULL, numbers parsed; text that does not parse is kept as is."""
    if value in _MISSING:
        return None
    if kind is None:
        return value
    try:
        return kind(value)
    except ValueError:
        return value


def _rows(
    reader: Iterator[list[str]], names: list[str], kinds: list[type | None], more: list[bool]
) -> Iterator[dict[str, Any]]:
    """The first MAX_ROWS rows as dicts; `more` gets True when the file has further rows."""
    width = len(names)
    for number, cells in enumerate(reader, start=1):
        if number > MAX_ROWS:
            more.append(True)
            return
        cells = (cells + [""] * width)[:width]
        row = {name: _convert(cell, kind) for name, cell, kind in zip(names, cells, kinds, strict=True)}
        row[ROW_KEY] = number
        yield row


def _lines(text: TextIO) -> Iterator[str]:
    """The lines of `text`, refusing (422) one longer than MAX_LINE_CHARS before reading the rest of it."""
    while line := text.readline(MAX_LINE_CHARS + 1):
        if len(line) > MAX_LINE_CHARS:
            raise UnprocessableEntity(f"The file cannot be previewed: a line is longer than {MAX_LINE_CHARS:,} characters.")
        yield line


def build_preview_db(
    csv_path: Path | str, db_path: Path | str, field_types: Mapping[str, str] | None = None, delimiter: str = ","
) -> None:
    """Copy a CSV (or, with `delimiter`, a TSV) into a new SQLite database at db_path, streaming;
    UnprocessableEntity if it cannot be read."""
    field_types = field_types or {}
    db_path = Path(db_path)
    db_path.parent.mkdir(parents=True, exist_ok=True)
    # Built under a temporary name and renamed, so a reader never sees half a database.
    handle, tmp_name = tempfile.mkstemp(dir=db_path.parent, prefix=db_path.name, suffix=".tmp")
    os.close(handle)
    try:
        with open(csv_path, encoding="utf-8-sig", errors="replace", newline="") as text:
            reader = csv.reader(_lines(text), delimiter=delimiter)
            header = next(reader, [])
            if len(header) > MAX_COLUMNS:
                raise UnprocessableEntity(
                    f"The file cannot be previewed: it has {len(header):,} columns, previews show at most {MAX_COLUMNS:,}."
                )
            names = _column_names(header)
            types = [field_types.get(label.strip(), "string") for label in header]
            with closing(sqlite3.connect(tmp_name)) as conn:
                db = sqlite_utils.Database(conn)
                columns: dict[str, Any] = {ROW_KEY: int}
                columns.update({n: _PYTHON_TYPES.get(t, str) for n, t in zip(names, types, strict=True)})
                db.table(TABLE).create(columns, pk=ROW_KEY)
                db.table(COLUMNS_TABLE).create({"position": int, "name": str, "type": str}, pk="position")
                db.table(COLUMNS_TABLE).insert_all(
                    {"position": i, "name": n, "type": t}
                    for i, (n, t) in enumerate(zip(names, types, strict=True))
                )
                kinds = [_PYTHON_TYPES.get(t) for t in types]
                more: list[bool] = []
                db.table(TABLE).insert_all(_rows(reader, names, kinds, more), batch_size=_BATCH)
                db.table(INFO_TABLE).insert({"truncated": bool(more)})
                for name in names[:16]:
                    db.table(TABLE).create_index([name])  # filters and sorts on a large table stay fast
                conn.commit()
        os.replace(tmp_name, db_path)
    except (csv.Error, UnicodeError) as exc:
        raise UnprocessableEntity(f"The file cannot be previewed: {exc}") from exc
    finally:
        if os.path.exists(tmp_name):
            os.unlink(tmp_name)


def _quote(name: str) -> str:
    """A column name as an SQL identifier; only names read from the database ever get here."""
    return '"' + name.replace('"', '""') + '"'


def _filter_value(name: str, kind: str, value: Any) -> Any:
    if value is None or kind not in _PYTHON_TYPES or not isinstance(value, str):
        return value
    try:
        converted = _PYTHON_TYPES[kind](value)
    except ValueError:
        raise BadRequest("Invalid filter.", [field_error(name, f"Not a valid {kind}: {value!r}.")]) from None
    if isinstance(converted, int) and abs(converted) > INT64_MAX:
        raise BadRequest("Invalid filter.", [field_error(name, f"Out of range: {kind}s have at most 64 bits.")])
    return converted


def query_preview(
    db_path: Path | str,
    limit: int = DEFAULT_LIMIT,
    offset: int = 0,
    filters: Mapping[str, Any] | None = None,
    sort: str | None = None,
) -> dict[str, Any]:
    """Rows of a preview database: `{columns, rows, total, limit, offset, truncated}` (`truncated`: the file has
    more than the MAX_ROWS rows a preview holds; `total` counts those); BadRequest names a bad column or value."""
    if limit < 1 or offset < 0:
        raise BadRequest(
            "Invalid page.",
            [field_error("limit" if limit < 1 else "offset", "Must not be negative or zero.")],
        )
    limit = min(limit, MAX_LIMIT)
    with closing(sqlite3.connect(f"file:{Path(db_path)}?mode=ro", uri=True)) as conn:
        columns = [
            {"name": name, "type": kind}
            for name, kind in conn.execute(f"SELECT name, type FROM {COLUMNS_TABLE} ORDER BY position")
        ]
        known = {c["name"]: c["type"] for c in columns}
        where, params = [], []
        for name, value in (filters or {}).items():
            if name not in known:
                raise BadRequest("Unknown column.", [field_error(name, f"Unknown column {name!r}.")])
            value = _filter_value(name, known[name], value)
            where.append(f"{_quote(name)} IS ?")  # IS also matches a NULL filter value
            params.append(value)
        order = ROW_KEY
        if sort:
            name = sort[1:] if sort.startswith("-") else sort
            if name not in known:
                raise BadRequest("Unknown column.", [field_error("sort", f"Unknown column {name!r}.")])
            order = f"{_quote(name)} {'DESC' if sort.startswith('-') else 'ASC'}, {ROW_KEY}"
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        total = conn.execute(f"SELECT count(*) FROM {TABLE}{clause}", params).fetchone()[0]
        names = ", ".join(_quote(c["name"]) for c in columns) or ROW_KEY  # an empty file has no column
        cursor = conn.execute(
            f"SELECT {names} FROM {TABLE}{clause} ORDER BY {order} LIMIT ? OFFSET ?",
            # A preview holds at most MAX_ROWS rows: any offset past them reads nothing, and SQLite refuses one
            # beyond 64 bits (an OverflowError: a 500 before, found by schemathesis on the record page's preview).
            [*params, limit, min(offset, MAX_ROWS)]
        )
        rows = [dict(zip(known, row, strict=False)) for row in cursor]
        has_info = conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", [INFO_TABLE]).fetchone()  # older
        truncated = bool(has_info and conn.execute(f"SELECT truncated FROM {INFO_TABLE}").fetchone()[0])
    return {"columns": columns, "rows": rows, "total": total, "limit": limit, "offset": offset, "truncated": truncated}
