"""Alembic migrations run programmatically: at start-up in the embedded shape, by scripts/migrate.py at scale."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from alembic import command
from alembic.config import Config

from repository.storage.engine import Database

MIGRATIONS_DIR = os.path.join(os.path.dirname(__file__), "migrations")


def alembic_config(db: Database) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", MIGRATIONS_DIR)
    cfg.attributes["engine"] = db.engine
    return cfg


@contextmanager
def _lock(lock_path: str | None) -> Iterator[None]:
    # Several server processes may start at once on one SQLite file: only one migrates at a time.
    if not lock_path:
        yield
        return
    os.makedirs(os.path.dirname(lock_path), exist_ok=True)
    with open(lock_path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def upgrade(db: Database, lock_path: str | None = None) -> None:
    """Bring the schema to the newest revision (idempotent)."""
    with _lock(lock_path):
        command.upgrade(alembic_config(db), "head")


def current_revision(db: Database) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with db.engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def head_revision() -> str:
    """The newest revision this release knows."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory(MIGRATIONS_DIR).get_current_head()
    assert head is not None, "no migration scripts"
    return head


def pending_revisions(db: Database) -> list[str]:
    """The revisions an upgrade would apply, oldest first (empty when the schema is up to date). ValueError when
    the database is at a revision this release does not know (a newer release migrated it)."""
    from alembic.script import ScriptDirectory

    scripts = ScriptDirectory(MIGRATIONS_DIR)
    current = current_revision(db)
    if current is not None and current not in {script.revision for script in scripts.walk_revisions()}:
        raise ValueError(f"the database is at revision {current}, which this release does not know "
                         "(a newer release migrated it)")
    return [script.revision for script in reversed(list(scripts.iterate_revisions("heads", current or "base")))]


def upgrade_sql(db: Database, output: TextIO) -> None:
    """Write the SQL of the pending migrations to `output` (Alembic's offline mode: nothing is run)."""
    current = current_revision(db)
    cfg = alembic_config(db)
    cfg.attributes["output"] = output
    command.upgrade(cfg, f"{current}:head" if current else "head", sql=True)
