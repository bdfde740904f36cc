"""What the operator watches in the database: the queues' depth and age, the database's size and whether it is
there at all (readiness checks and metrics, repository/web/health.py and metrics.py)."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

from sqlalchemy import Connection, Table, func, select, text

from repository.storage.engine import Database
from repository.storage.tables.mail import mail_outbox
from repository.storage.tables.outbox import outbox
from repository.timeutil import utcnow


@dataclass(frozen=True)
class Queue:
    """The pending entries of a queue: how many, the oldest one's age, and how many have failed at least once."""

    pending: int
    oldest_seconds: float  # 0 when nothing is pending
    failing: int


def _queue(conn: Connection, table: Table, pending_column: str) -> Queue:
    pending = table.c[pending_column].is_(None)
    count, oldest, failing = conn.execute(
        select(func.count(), func.min(table.c.created), func.count(table.c.last_error)).where(pending)
    ).one()
    age = max(0.0, (utcnow() - oldest).total_seconds()) if oldest is not None else 0.0
    return Queue(int(count), age, int(failing))


def index_outbox(conn: Connection) -> Queue:
    """The record outbox (indexing, DOI registration): rows not yet applied."""
    return _queue(conn, outbox, "done")


def mail_queue(conn: Connection) -> Queue:
    """The mail outbox: messages not yet sent."""
    return _queue(conn, mail_outbox, "sent")


def database_bytes(conn: Connection) -> int:
    """The database's size on disk: SQLite's pages (the write-ahead log left out), PostgreSQL's database."""
    if conn.dialect.name == "sqlite":
        pages = conn.exec_driver_sql("PRAGMA page_count").scalar_one()
        size = conn.exec_driver_sql("PRAGMA page_size").scalar_one()
        return int(pages) * int(size)
    return int(conn.execute(text("SELECT pg_database_size(current_database())")).scalar_one())


def check_database(db: Database) -> None:
    """Raise unless the database answers a query over its own schema; for SQLite, also unless its file is still
    where the settings say (pooled connections keep reading a deleted file, whose writes are then lost)."""
    path = sqlite_path(db)
    if path is not None and not os.path.isfile(path):
        raise FileNotFoundError(f"the database file {path} is gone")
    with db.read() as conn:
        conn.execute(select(outbox.c.id).limit(1)).all()


def sqlite_path(db: Database) -> str | None:
    """The SQLite database's file, or None (PostgreSQL, or SQLite in memory)."""
    name = db.engine.url.database
    if not db.is_sqlite or not name or name == ":memory:":
        return None
    return os.path.abspath(name)


def disk_free_bytes(db: Database, files_root: str) -> int | None:
    """The free bytes of the fullest disk among those of the files (FILES_ROOT) and of a SQLite database; None when
    neither folder exists."""
    database = sqlite_path(db)
    paths = [path for path in (files_root, database and os.path.dirname(database)) if path and os.path.isdir(path)]
    return min(shutil.disk_usage(path).free for path in paths) if paths else None
