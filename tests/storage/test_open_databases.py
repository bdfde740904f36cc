"""`close_all()` closes every pooled connection of every database, including a database used again after an earlier
`close_all()` (a module's app between two tests): a connection left open is closed by the garbage collector at some
later moment instead, and psycopg's warning then lands on whichever test is running."""

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
