"""A consistent copy of the database while it is in use, and loading one into an empty database.

SQLite: the online backup API copies every page inside one read transaction, so the copy is the database as of
one commit (WAL mode lets writers go on meanwhile); the copy is turned into a single self-contained file (rollback
journal mode, no `-wal` beside it). PostgreSQL: `pg_dump --format=custom` run inside a REPEATABLE READ transaction
whose snapshot it shares (`pg_export_snapshot()`, `--snapshot`), so the caller reads, on the same connection,
exactly the rows the dump holds. Loading is the reverse: the file put in place, or `pg_restore` in one
transaction. The clients pg_dump and pg_restore must be of the server's major version or newer.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import URL, Connection, create_engine, make_url, text

from repository.storage.engine import Database

SQLITE_FILE = "database.sqlite"
POSTGRES_FILE = "database.pgdump"


class DumpError(Exception):
    """The copy or the load failed (a client missing or refusing, a database that is not empty)."""


def dump_file_name(db: Database) -> str:
    """The name of the dump in a backup folder: it says which kind of database it loads into."""
    return SQLITE_FILE if db.is_sqlite else POSTGRES_FILE


@contextmanager
def snapshot(db: Database, dest: Path) -> Iterator[Connection]:
    """Write a consistent copy of `db` to `dest` and yield a connection that reads exactly what the copy holds."""
    if db.is_sqlite:
        _sqlite_copy(_sqlite_path(db.engine.url), dest)
        engine = create_engine(URL.create("sqlite", database=str(dest)))
        try:
            with engine.connect() as conn:
                yield conn
        finally:
            engine.dispose()
        return
    with db.engine.connect() as conn:
        conn = conn.execution_options(isolation_level="REPEATABLE READ")
        with conn.begin():
            snapshot_id = conn.scalar(text("SELECT pg_export_snapshot()"))
            _run(["pg_dump", "--format=custom", "--no-owner", "--no-privileges", f"--snapshot={snapshot_id}",
                  f"--file={dest}"], db.engine.url)
            yield conn


def _sqlite_copy(source: str, dest: Path) -> None:
    src = sqlite3.connect(source, timeout=30)  # not read-only: a WAL reader may have to create the -shm file
    out = sqlite3.connect(dest)
    try:
        src.backup(out)  # all pages in one step: one read transaction, so the copy is one commit's state
        out.execute("PRAGMA journal_mode=DELETE")  # a single file: no -wal to carry beside it
    finally:
        out.close()
        src.close()


def is_empty(url: str) -> bool:
    """Whether the database at `url` holds no table (a SQLite file that does not exist yet is empty)."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        path = _sqlite_path(parsed)
        if not os.path.exists(path) or os.path.getsize(path) == 0:
            return True
        handle = sqlite3.connect(path)
        try:
            return handle.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'").fetchone()[0] == 0
        finally:
            handle.close()
    engine = create_engine(parsed)
    try:
        with engine.connect() as conn:
            count = conn.scalar(text("SELECT count(*) FROM information_schema.tables "
                                     "WHERE table_schema NOT IN ('pg_catalog', 'information_schema')"))
    finally:
        engine.dispose()
    return count == 0


def load(url: str, source: Path) -> None:
    """Load the dump `source` (a SQLite file or a pg_dump archive) into the empty database at `url`."""
    parsed = make_url(url)
    if not is_empty(url):
        raise DumpError(f"the database {parsed.render_as_string(hide_password=True)} is not empty: a restore "
                        "goes into a new, empty database")
    if parsed.get_backend_name() == "sqlite":
        if source.name != SQLITE_FILE:
            raise DumpError(f"{source.name} is a PostgreSQL dump: restore it with a postgresql:// DATABASE_URL")
        path = _sqlite_path(parsed)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        partial = f"{path}.restoring"
        shutil.copyfile(source, partial)
        conn = sqlite3.connect(partial)
        try:
            conn.execute("PRAGMA journal_mode=WAL")  # as the service runs it
        finally:
            conn.close()
        os.replace(partial, path)
        return
    if source.name != POSTGRES_FILE:
        raise DumpError(f"{source.name} is a SQLite database: restore it with a sqlite:/// DATABASE_URL")
    _run(["pg_restore", "--no-owner", "--no-privileges", "--single-transaction", "--exit-on-error", str(source)],
         parsed)


def _sqlite_path(url: URL) -> str:
    return os.path.abspath(url.database or "")


def _run(command: list[str], url: URL) -> None:
    """Run a PostgreSQL client against `url`; the password goes by the environment, never on the command line."""
    if shutil.which(command[0]) is None:
        raise DumpError(f"{command[0]} is not installed (the PostgreSQL client, of the server's major version)")
    env = {**os.environ}
    if url.password is not None:
        env["PGPASSWORD"] = str(url.password)
    libpq = url.set(drivername="postgresql", password=None).render_as_string(hide_password=False)
    done = subprocess.run([*command, f"--dbname={libpq}"], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise DumpError(f"{command[0]} failed: {done.stderr.strip() or done.returncode}")
