"""One engine per process; SQLite gets WAL, foreign keys and write transactions that take the lock up front."""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

from sqlalchemy import Connection, Engine, Select, create_engine, event, text
from sqlalchemy.engine import make_url

from repository.storage import packing
from repository.storage.prepared import PreparedRead

BUSY_TIMEOUT_MS = 30_000  # how long a SQLite writer queues for the lock
# Asked for a scan: SQLite maps at most the file and its build's cap (often 2 GB) and reads the rest as usual.
SCAN_MMAP_BYTES = 1 << 34

log = logging.getLogger("repository.storage")

_AFTER_COMMIT = "repository.after_commit"  # key in Connection.info of the actions waiting for the commit
# Strong references: a pool must be closed explicitly, or its connections warn when garbage-collected.
_OPEN: set[Database] = set()
_POOL_KEY = "repository.pool"  # key in a pooled connection's record.info of the pool that made it


class Database:
    """The source of truth. `read()` gives a connection for queries, `write()` one transaction."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.is_sqlite = engine.dialect.name == "sqlite"
        # Work that code inside a transaction asks for by name (`after_commit(conn, name)`), wired once at start-up
        # by the object that does it (the indexer applies the outbox), so the domain needs no handle on it.
        self.hooks: dict[str, Callable[..., object]] = {}
        self._prepared: dict[int, PreparedRead] = {}  # by the id of the statement (which each keeps)
        packing.attach(engine)  # its packed columns use its own zstd dictionaries
        _OPEN.add(self)
        event.listen(engine, "connect", self._on_connect)
        event.listen(engine, "checkin", self._on_checkin)

    def _on_connect(self, _dbapi_connection: object, record: Any) -> None:
        # Known again as soon as it opens a connection after close_all() let go of it (a long-lived app whose pool
        # was closed between two uses): otherwise that connection would be left to the garbage collector.
        _OPEN.add(self)
        record.info[_POOL_KEY] = self.engine.pool

    def _on_checkin(self, dbapi_connection: Any, record: Any) -> None:
        # A connection in use while dispose() replaced the pool (a thread's, mid-transaction) comes back to the old
        # pool, which nothing will close: it is closed now rather than by the garbage collector, later and anywhere.
        if dbapi_connection is not None and record.info.get(_POOL_KEY) is not self.engine.pool:
            dbapi_connection.close()

    def wire(self, name: str, action: Callable[..., object]) -> None:
        """Make the after-commit work `name` call `action` in this process (the last wiring wins); unwired, the
        work is left to the background worker's pass."""
        self.hooks[name] = action

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A connection for reads; any implicit transaction is rolled back on exit."""
        with self.engine.connect() as conn:
            yield conn

    def prepared(self, statement: Select) -> PreparedRead:
        """`statement` compiled once for this database and run without a Connection around it (storage/prepared.py):
        for the busiest reads that one statement answers (a record's row, counts and stored copy)."""
        found = self._prepared.get(id(statement))
        if found is None or found.statement is not statement:
            found = self._prepared[id(statement)] = PreparedRead(self.engine, statement)
        return found

    @contextmanager
    def scan(self) -> Iterator[Connection]:
        """A connection for long sequential reads (a reindex): SQLite maps the file into memory for it rather than
        copying every page through a read call (half the time for rows of large blobs)."""
        with self.engine.connect() as conn:
            if not self.is_sqlite:
                yield conn
                return
            conn.exec_driver_sql(f"PRAGMA mmap_size={SCAN_MMAP_BYTES}")
            try:
                yield conn
            finally:
                conn.rollback()
                conn.exec_driver_sql("PRAGMA mmap_size=0")

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """One transaction: committed when the block ends, rolled back if it raises; then, with the connection
        back in the pool, the actions registered with `after_commit` run (after a rollback only those that asked
        for it)."""
        pending: list[_Pending] = []
        try:
            with self.engine.connect() as conn:
                conn = conn.execution_options(write=True)
                conn.info[_AFTER_COMMIT] = pending
                try:
                    with conn.begin():
                        yield conn
                finally:
                    conn.info.pop(_AFTER_COMMIT, None)  # the info lives with the pooled connection
        except BaseException:
            self._run([entry for entry in pending if entry.after_rollback])
            raise
        self._run(pending)

    def _run(self, pending: list[_Pending]) -> None:
        """Run each action once; a failure is logged and the others still run: the transaction is over, so its
        caller must not see an error (what the action failed to do, the worker's pass does)."""
        for entry in pending:
            action = self.hooks.get(entry.action) if isinstance(entry.action, str) else entry.action
            if action is None:
                continue  # not wired in this process: the worker's pass does it
            try:
                action(*entry.args)
            except Exception:  # noqa: BLE001 - see the docstring
                log.exception("after-commit action %r%r failed", entry.action, entry.args)

    @contextmanager
    def brief_write(self, wait_ms: int = 250) -> Iterator[Connection]:
        """One transaction that waits at most `wait_ms` for a lock, then raises OperationalError: for writes
        that may be lost (caches), which should not hold up a reader behind a long writer."""
        with self.engine.connect() as conn:
            if not self.is_sqlite:
                with conn.begin():
                    conn.execute(text(f"SET LOCAL lock_timeout = {int(wait_ms)}"))
                    yield conn
                return
            # Outside any transaction (the driver is in autocommit mode), so the pragma takes effect at BEGIN.
            raw: Any = conn.connection.driver_connection  # the sqlite3 connection (None only once it is closed)
            raw.execute(f"PRAGMA busy_timeout={int(wait_ms)}")
            try:
                with conn.execution_options(write=True).begin():
                    yield conn
            finally:
                raw.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")

    def dispose(self) -> None:
        packing.detach(self.engine)
        self.engine.dispose()


class _Pending(NamedTuple):
    action: Callable[..., object] | str  # a name: the work wired on the Database under it
    args: tuple[Hashable, ...]
    after_rollback: bool


def after_commit(conn: Connection, action: Callable[..., object] | str, *args: Hashable,
                 after_rollback: bool = False) -> None:
    """Run `action(*args)` once the `Database.write()` transaction of `conn` has committed, never after a rollback
    unless `after_rollback` (work that reads the state left either way). The one way to act after a commit: for
    effects no rollback could undo (removing a file whose row the transaction deletes) and for work other
    transactions must see committed (applying the outbox). `action` may name work wired with `Database.wire`;
    asking twice for the same action and arguments runs it once. Outside a `write()` there is no commit to wait
    for: a callable runs at once, a name is left to the worker's pass."""
    pending: list[_Pending] | None = conn.info.get(_AFTER_COMMIT)
    if pending is None:
        if not isinstance(action, str):
            action(*args)
        return
    entry = _Pending(action, args, after_rollback)
    for i, known in enumerate(pending):
        if (known.action, known.args) == (action, args):
            pending[i] = entry if after_rollback else known
            return
    pending.append(entry)


def close_all() -> None:
    """Close the pooled connections of every open database (at shutdown, and between tests)."""
    while _OPEN:
        _OPEN.pop().dispose()


def _sqlite_events(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def on_connect(dbapi_connection: sqlite3.Connection, _record: object) -> None:
        # Take transaction control from the driver so BEGIN is emitted by us (see on_begin).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def on_begin(conn: Connection) -> None:
        # A write transaction takes the write lock at BEGIN: two writers then queue on busy_timeout instead of
        # one failing with "database is locked" when it upgrades a read lock mid-transaction.
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("write") else "BEGIN")


def _owner_only_once_created(engine: Engine, path: str) -> None:
    """Make the SQLite file this engine creates (at its first connection) readable by its owner only: SQLite
    creates it as the umask says, usually world-readable, and it holds password hashes and token digests (its
    WAL and shared-memory files take the database file's permissions)."""

    @event.listens_for(engine, "connect", once=True)
    def restrict(_dbapi_connection: sqlite3.Connection, _record: object) -> None:
        if os.path.exists(path):
            os.chmod(path, 0o600)


def open_database(url: str) -> Database:
    """Create the engine for `url` (sqlite:///… or postgresql+psycopg://…)."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            os.makedirs(os.path.dirname(os.path.abspath(parsed.database)), mode=0o700, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
        _sqlite_events(engine)
        if parsed.database and parsed.database != ":memory:" and not os.path.exists(parsed.database):
            _owner_only_once_created(engine, parsed.database)
    else:
        engine = create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=10)
    return Database(engine)
