"""`Database.prepared()`: a statement run on a pooled driver connection gives what `Connection.execute` gives (the
same keys, the column types' conversions both ways: datetimes, booleans, packed JSON, NULLs), None for no row, and a
driver error as the same SQLAlchemy exception, which the application's handlers answer (503, 507)."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

import pytest
from sqlalchemy import (
    Column,
    DateTime,
    Float,
    Integer,
    MetaData,
    Table,
    bindparam,
    func,
    insert,
    select,
    text,
    type_coerce,
)
from sqlalchemy.exc import DBAPIError, OperationalError

from repository.storage import open_database
from repository.storage.packing import PackedJSON
from repository.storage.tables.accounts import users

METADATA = PackedJSON("records.metadata")


@pytest.fixture
def db(database_url):  # type: ignore[no-untyped-def]
    database = open_database(database_url)
    with database.write() as conn:
        conn.execute(insert(users), [
            {"email": "a@example.org", "active": True, "created": datetime(2026, 1, 2, 3, 4, 5, 678901)},
            {"email": "b@example.org", "active": False, "created": datetime(2026, 5, 6, 7, 8, 9),
             "email_confirmed": datetime(2026, 5, 7), "roles": "admin"},
        ])  # fmt: skip
    yield database
    database.dispose()


STATEMENT = (
    select(users, (users.c.auth_epoch + 1).label("next_epoch"),
           type_coerce(bindparam("doc", type_=METADATA), METADATA).label("doc"))
    .where(users.c.created >= bindparam("since", type_=DateTime), users.c.email == bindparam("email"))
)  # fmt: skip


@pytest.mark.parametrize("email", ["a@example.org", "b@example.org"])
def test_a_row_is_what_execute_gives(db, email):
    params = {"since": datetime(2025, 12, 31), "email": email, "doc": {"title": "Ünïcode", "n": [1, 2.5, None]}}
    with db.read() as conn:
        expected = dict(conn.execute(STATEMENT, params).mappings().one())
    found = db.prepared(STATEMENT).first(params)
    assert found == expected
    assert isinstance(found["created"], datetime) and isinstance(found["active"], bool)
    assert found["doc"] == {"title": "Ünïcode", "n": [1, 2.5, None]}
    assert db.prepared(STATEMENT) is db.prepared(STATEMENT)  # compiled once


def test_no_row_is_none(db):
    assert db.prepared(STATEMENT).first({"since": datetime(2027, 1, 1), "email": "a@example.org", "doc": {}}) is None


def test_a_driver_error_is_sqlalchemys_exception(db):
    # A table the database does not have: SQLite's OperationalError, PostgreSQL's ProgrammingError, each raised by
    # the prepared read as Connection.execute raises it.
    missing = Table("no_such_table", MetaData(), Column("id", Integer))
    statement = select(missing.c.id).where(missing.c.id == bindparam("id"))
    with db.read() as conn, pytest.raises(DBAPIError) as by_execute:
        conn.execute(statement, {"id": 1})
    with pytest.raises(DBAPIError) as by_prepared:
        db.prepared(statement).first({"id": 1})
    assert type(by_prepared.value) is type(by_execute.value)
    assert type(by_prepared.value.orig) is type(by_execute.value.orig)
    # The connection went back to the pool in order (PostgreSQL's failed transaction rolled back): reads go on.
    for _ in range(8):
        assert db.prepared(STATEMENT).first({"since": datetime(2025, 1, 1), "email": "a@example.org", "doc": {}})


def test_a_connection_lost_mid_read_is_invalidated(db, database_url):
    # PostgreSQL only: its backend is terminated while the read runs (the pool's pre-ping covers a connection that
    # died while idle; this is the one that dies under a query). The read fails as Connection.execute fails, with
    # the connection marked invalidated, and the pool never hands that connection out again.
    if not database_url.startswith("postgresql"):
        pytest.skip("needs a server whose backend can be killed")
    sleeping = db.prepared(select(func.pg_sleep(bindparam("seconds", type_=Float)).label("slept")))
    with ThreadPoolExecutor(1) as pool:
        outcome = pool.submit(sleeping.first, {"seconds": 30})
        killed = 0
        with db.engine.connect() as admin:
            for _ in range(200):  # until the read's backend is seen running its statement
                killed = admin.execute(text(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE '%pg_sleep%'"
                )).scalar_one()
                admin.commit()
                if killed:
                    break
                time.sleep(0.05)
        assert killed == 1
        with pytest.raises(OperationalError) as lost:
            outcome.result(timeout=30)
    assert lost.value.connection_invalidated
    for _ in range(8):  # every pooled connection is a live one
        assert db.prepared(STATEMENT).first({"since": datetime(2025, 1, 1), "email": "a@example.org", "doc": {}})


@pytest.mark.slow
def test_threads_reading_through_a_statement_not_yet_compiled_all_get_its_row(db):
    # A worker's first record reads arrive together (a load test, a crawler): each thread found the statement not yet
    # compiled and compiled it, appending the result columns to whichever list the attribute held at that moment, so
    # two compiles at once could leave one list with too many and every later read of that process failing (500s on
    # every record read of one of the three workers, seen under CI's load). Many threads start together on fresh
    # statements, switching as often as the interpreter allows.
    import sys
    import threading

    from repository.storage.prepared import PreparedRead

    params = {"since": datetime(2025, 12, 31), "email": "b@example.org", "doc": {"n": 1}}
    with db.read() as conn:
        expected = dict(conn.execute(STATEMENT, params).mappings().one())
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(100):
            prepared = PreparedRead(db.engine, STATEMENT)
            start = threading.Barrier(8)

            def read(prepared: PreparedRead = prepared, start: threading.Barrier = start) -> dict | None:
                start.wait()
                return prepared.first(params)

            with ThreadPoolExecutor(8) as pool:
                found = [f.result() for f in [pool.submit(read) for _ in range(8)]]
            assert found == [expected] * 8
            assert prepared.first(params) == expected  # and every read after them
    finally:
        sys.setswitchinterval(interval)
