"""Prepared reads: a SELECT compiled once for the engine's dialect and run on a pooled DBAPI connection, its row
converted by the column types' own result processors (the packed columns' unpacking, SQLite's datetimes).

That is what `Connection.execute` does, without what it adds at every execution: a Connection object, an
execution context, the compiled cache's key, a result object with its metadata, a transaction of ours. On the
busiest read of the service (a record's row with its counts and stored copy, `records/read.py`) those cost
~215 µs of ~350 µs of CPU per read (20,000 records, a loaded machine: 344-360 µs, prepared 129-134). Driver errors are
raised as SQLAlchemy's own exceptions (`OperationalError` and the rest), so the application's handlers (503 while
the database is down, 507 when it is full) answer them as they answer any other query's; a lost connection is
invalidated in the pool as `Connection.execute` would. Only for statements that one execution answers: a
single statement runs as its own transaction (SQLite's autocommit; PostgreSQL's implicit transaction, rolled
back when the connection goes back to the pool)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, Select
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql.compiler import SQLCompiler

_Processor = Callable[[Any], Any] | None


@dataclass(frozen=True)
class _Compiled:
    """A statement compiled for one dialect, with what each execution needs of it."""

    compiled: SQLCompiler
    sql: str
    order: Sequence[str] | None
    bind: dict[str, Callable[[Any], Any]]
    columns: list[tuple[str, _Processor]]


class PreparedRead:
    """`statement` prepared for `engine`: `first(params)` is its first row as a dict keyed by the statement's
    column keys (what `conn.execute(statement, params).mappings().first()` gives), or None."""

    def __init__(self, engine: Engine, statement: Select) -> None:
        self.statement = statement
        self._engine = engine
        self._error = engine.dialect.loaded_dbapi.Error
        self._lock = threading.Lock()
        self._compiled: _Compiled | None = None  # at the first execution, once the pool has initialised the dialect

    def _compile(self) -> _Compiled:
        """The statement compiled, once: threads of a fresh process asking at once wait for the first, and what the
        compile gives is published whole. Two compiles filling the same attributes at once could interleave (one's
        columns appended to the other's list), and every later read of the process then failed."""
        with self._lock:
            if self._compiled is not None:
                return self._compiled
            dialect = self._engine.dialect
            compiled = self.statement.compile(dialect=dialect)
            assert isinstance(compiled, SQLCompiler)  # noqa: S101 - a SELECT compiles to one
            columns: list[tuple[str, _Processor]] = []
            for column in self.statement.selected_columns:
                if column.key is None:
                    raise ValueError(f"every column of a prepared read needs a name: {column!r}")
                columns.append((column.key, column.type.dialect_impl(dialect).result_processor(dialect, None)))
            self._compiled = _Compiled(
                compiled, compiled.string,
                compiled.positiontup,  # the parameters' names in order (qmark), None for a named style
                {name: processor for name, bind in compiled.binds.items()
                 if (processor := bind.type.dialect_impl(dialect).bind_processor(dialect)) is not None},
                columns)
            return self._compiled

    def first(self, params: Mapping[str, Any]) -> dict[str, Any] | None:
        dialect = self._engine.dialect
        try:
            connection = self._engine.raw_connection()  # the pool's checkout (and its pre-ping, where configured)
        except self._error as exc:  # as Engine.connect() raises it: the database is down or refuses us
            raise DBAPIError.instance(None, None, exc, self._error, dialect=dialect,
                                      connection_invalidated=dialect.is_disconnect(exc, None, None)) from exc
        try:
            prepared = self._compiled or self._compile()
            values = prepared.compiled.construct_params(params)  # with the statement's own literals, and checked
            for name, processor in prepared.bind.items():
                values[name] = processor(values[name])
            arguments: Any = values if prepared.order is None else [values[name] for name in prepared.order]
            cursor = connection.cursor()
            try:
                cursor.execute(prepared.sql, arguments)
                row = cursor.fetchone()
            except self._error as exc:
                lost = dialect.is_disconnect(exc, connection.dbapi_connection, cursor)
                if lost:
                    connection.invalidate(exc)
                raise DBAPIError.instance(prepared.sql, arguments, exc, self._error, dialect=dialect,
                                          connection_invalidated=lost) from exc
            finally:
                cursor.close()
        finally:
            connection.close()
        if row is None:
            return None
        return {key: processor(value) if processor is not None else value
                for (key, processor), value in zip(prepared.columns, row, strict=True)}
