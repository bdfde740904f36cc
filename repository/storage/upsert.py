"""INSERT ... ON CONFLICT DO UPDATE, which SQLite and PostgreSQL spell alike but SQLAlchemy builds per dialect;
the key of a row just inserted."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import Connection, CursorResult, Table
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert


def upsert(conn: Connection, table: Table, rows: Sequence[dict], keys: Sequence[str],
           replace_if: Callable[[Any, Any], Any] | None = None) -> None:
    """Insert `rows`; a row whose `keys` exist already replaces that row's other columns (only where
    `replace_if(stored columns, proposed columns)` holds, when given)."""
    if not rows:
        return
    insert = sqlite_insert if conn.dialect.name == "sqlite" else postgresql_insert
    query = insert(table)
    others = {column.name: query.excluded[column.name] for column in table.columns if column.name not in keys}
    where = replace_if(table.c, query.excluded) if replace_if is not None else None
    conn.execute(query.on_conflict_do_update(index_elements=list(keys), set_=others, where=where), list(rows))


def inserted_id(result: CursorResult[Any]) -> Any:
    """The primary key of the one row an `insert(table).values(...)` wrote. SQLAlchemy types
    `inserted_primary_key` as optional: it is None only for statements that are not such an insert."""
    key = result.inserted_primary_key
    if key is None:
        raise TypeError("not the result of a single-row INSERT")
    return key[0]
