"""`Database.prepared()`: a statement run on a pooled driver connection gives what `Connection.execute` gives (the
same keys, the column types' conversions both ways: datetimes, booleans, packed JSON, NULLs), None for no row, and a
driver error as the same SQLAlchemy exception, which the application's handlers answer (503, 507)."""

from __future__ import annotations

from datetime import datetime

import pytest
from sqlalchemy import Column, DateTime, Integer, MetaData, Table, bindparam, insert, select, type_coerce
from sqlalchemy.exc import DBAPIError

from repository.storage import open_database
from repository.storage.packing import PackedJSON
from repository.storage.tables.core import users

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
