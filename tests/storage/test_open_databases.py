"""`close_all()` closes every pooled connection of every database, including a database used again after an earlier
`close_all()` (a module's app between two tests): a connection left open is closed by the garbage collector at some
later moment instead, and psycopg's warning then lands on whichever test is running."""

import pytest
from sqlalchemy import text

from repository.storage import open_database
from repository.storage.engine import close_all


def _use(db) -> None:  # type: ignore[no-untyped-def]
    with db.read() as conn:
        assert conn.execute(text("SELECT 1")).scalar_one() == 1


def test_close_all_closes_a_database_used_again_after_the_last_close_all(database_url: str) -> None:
    db = open_database(database_url)
    _use(db)
    close_all()
    _use(db)  # a new connection in the pool that replaced the closed one
    pool = db.engine.pool
    assert pool.checkedin() == 1
    close_all()
    assert pool.checkedin() == 0


def test_close_all_closes_what_a_database_opened_and_leaves_it_usable(database_url: str) -> None:
    db = open_database(database_url)
    _use(db)
    pool = db.engine.pool
    close_all()
    assert pool.checkedin() == 0
    _use(db)
    db.dispose()


def test_a_connection_in_use_while_its_pool_is_closed_is_closed_when_given_back(database_url: str) -> None:
    """A thread mid-transaction while the app's pool is closed (dispose) gives its connection back to a pool nothing
    will close any more: it is closed then, not left open for the garbage collector."""
    db = open_database(database_url)
    conn = db.engine.connect()
    raw = conn.connection.dbapi_connection
    assert conn.execute(text("SELECT 1")).scalar_one() == 1
    db.dispose()
    conn.close()
    with pytest.raises(Exception):  # noqa: B017, PT011 - sqlite3 and psycopg name a closed connection differently
        raw.cursor().execute("SELECT 1")
    _use(db)  # the database itself goes on with its new pool
    pool = db.engine.pool
    assert pool.checkedin() == 1  # and gives its connections back there, open, as usual
    db.dispose()
