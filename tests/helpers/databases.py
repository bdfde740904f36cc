"""A second, empty database for a test that fills a new instance (a restore, an import): a SQLite file not yet
made, or a PostgreSQL database beside the test database (TEST_DATABASE_URL), dropped afterwards."""

from __future__ import annotations

import os

from sqlalchemy import create_engine, make_url, text

TEST_DATABASE_URL = os.environ.get("TEST_DATABASE_URL", "")


def empty_database(tmp_path, suffix: str) -> str:  # type: ignore[no-untyped-def]
    """The URL of a new, empty database: `<tmp_path>/<suffix>/repository.db`, or `<test database>_<suffix>`."""
    if not TEST_DATABASE_URL:
        return f"sqlite:///{tmp_path}/{suffix}/repository.db"
    url = make_url(TEST_DATABASE_URL)
    url = url.set(database=f"{url.database}_{suffix}")
    server = create_engine(url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with server.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{url.database}" WITH (FORCE)'))
        conn.execute(text(f'CREATE DATABASE "{url.database}"'))
    server.dispose()
    return url.render_as_string(hide_password=False)


def drop_database(url: str) -> None:
    """Drop a PostgreSQL database of `empty_database` (a SQLite file goes with its folder)."""
    if url.startswith("postgresql"):
        parsed = make_url(url)
        server = create_engine(parsed.set(database="postgres"), isolation_level="AUTOCOMMIT")
        with server.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{parsed.database}" WITH (FORCE)'))
        server.dispose()
