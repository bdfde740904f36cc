"""The one after-commit mechanism of `Database.write()`: actions run once the transaction has committed, never after
a rollback (unless asked), a failing one is logged and leaves the committed write standing, and a name reaches the
work wired on the Database."""

from __future__ import annotations

import logging

import pytest
from sqlalchemy import func, insert, select

from repository.storage import open_database
from repository.storage.engine import after_commit
from repository.storage.tables.accounts import users
from repository.timeutil import utcnow


@pytest.fixture
def db(database_url):  # type: ignore[no-untyped-def]
    database = open_database(database_url)
    yield database
    database.dispose()


def _add_user(conn, email: str) -> None:  # type: ignore[no-untyped-def]
    conn.execute(insert(users).values(email=email, active=True, created=utcnow()))


def _count(db) -> int:  # type: ignore[no-untyped-def]
    with db.read() as conn:
        return conn.execute(select(func.count()).select_from(users)).scalar_one()


def test_actions_run_after_the_commit_and_see_it(db):
    seen: list[int] = []
    with db.write() as conn:
        _add_user(conn, "a@example.org")
        after_commit(conn, lambda: seen.append(_count(db)))
        assert seen == []  # not yet: the transaction is open
    assert seen == [1]  # another connection sees the committed row


def test_no_action_runs_after_a_rollback_unless_asked(db):
    ran: list[str] = []
    with pytest.raises(RuntimeError), db.write() as conn:
        _add_user(conn, "a@example.org")
        after_commit(conn, lambda: ran.append("after commit"))
        after_commit(conn, lambda: ran.append("either way"), after_rollback=True)
        raise RuntimeError("the request fails")
    assert ran == ["either way"]
    assert _count(db) == 0


def test_a_failing_action_is_logged_and_the_write_stands(db, caplog):
    ran: list[str] = []

    def broken() -> None:
        raise OSError("the index is down")

    with caplog.at_level(logging.ERROR, logger="repository.storage"), db.write() as conn:
        _add_user(conn, "a@example.org")
        after_commit(conn, broken)
        after_commit(conn, lambda: ran.append("next"))
    assert _count(db) == 1 and ran == ["next"]
    assert "the index is down" in caplog.text


def test_a_name_calls_the_wired_work_once_per_arguments(db):
    calls: list[tuple] = []
    db.wire("work", lambda *args: calls.append(args))
    with db.write() as conn:
        for _ in range(3):
            after_commit(conn, "work")
        after_commit(conn, "work", "bucket-1")
        after_commit(conn, "work", "bucket-1")
        after_commit(conn, "not wired here")  # left to the worker's pass
    assert calls == [(), ("bucket-1",)]


def test_outside_a_write_a_callable_runs_at_once_and_a_name_waits_for_the_worker(db):
    ran: list[str] = []
    db.wire("work", lambda: ran.append("wired"))
    with db.read() as conn:
        after_commit(conn, lambda: ran.append("callable"))
        after_commit(conn, "work")
    assert ran == ["callable"]
