"""`outbox.enqueue` and the apply after the commit: a change is searchable when the request (or the write) that made
it returns, its DOI registered right after in the background (no request waits for the agency), nobody calls the
indexer by hand, a failing apply leaves the committed change standing, and a row whose apply never ran (a crash
after the commit) is applied by the worker's pass."""

from __future__ import annotations

import threading

import pytest
from helpers.factories import make_deposit, publish, published, upload
from sqlalchemy import select
from sqlalchemy.exc import OperationalError

from repository import outbox
from repository.records.takedown import take_down
from repository.storage.tables.outbox import outbox as outbox_table


def _search_ids(client) -> list[int]:  # type: ignore[no-untyped-def]
    return [hit["id"] for hit in client.get("/api/records/").json["hits"]["hits"]]


def _pending(db) -> list[tuple[str, int]]:  # type: ignore[no-untyped-def]
    with db.read() as conn:
        rows = conn.execute(select(outbox_table.c.kind, outbox_table.c.recid).where(outbox_table.c.done.is_(None)))
        return [tuple(row) for row in rows]


def test_a_publish_is_applied_when_its_request_returns(app, client, auth):
    services = app.extensions["repository"]
    dep = published(client, auth)
    assert _search_ids(client) == [dep["id"]]
    services.indexer.registrations.wait_idle()
    assert _pending(services.db) == []  # register_doi too, right after


@pytest.mark.slow  # 0.4 s and more of work
def test_no_request_waits_for_the_doi_agency(app, client, auth, monkeypatch):
    services = app.extensions["repository"]
    answered, release = threading.Event(), threading.Event()
    register = services.registrar.register

    def slow_agency(*args, **kwargs):  # type: ignore[no-untyped-def]
        assert answered.wait(30)  # the publish has answered before the agency does
        assert release.wait(30)
        return register(*args, **kwargs)

    monkeypatch.setattr(services.registrar, "register", slow_agency)
    dep = published(client, auth)
    answered.set()
    assert _search_ids(client) == [dep["id"]]  # indexed before the answer
    assert ("register_doi", dep["id"]) in _pending(services.db)
    release.set()
    # An edit right after waits for the registration under way and finds the record integrated.
    assert client.post(f"/api/deposit/depositions/{dep['id']}/actions/edit", headers=auth).status_code == 201
    assert _pending(services.db) == []


def test_an_edit_right_after_a_publish_registers_the_doi_itself(app, client, auth):
    services = app.extensions["repository"]
    services.db.hooks.pop(outbox.REGISTER)  # the background thread never gets the row
    dep = published(client, auth)
    assert _pending(services.db) == [("register_doi", dep["id"])]
    assert client.post(f"/api/deposit/depositions/{dep['id']}/actions/edit", headers=auth).status_code == 201
    assert _pending(services.db) == []


def test_a_write_outside_a_request_is_applied_when_it_commits(app, client, auth):
    dep = published(client, auth)
    db = app.extensions["repository"].db
    with db.write() as conn:  # as scripts/takedown.py does, with no call of its own to the indexer
        take_down(conn, dep["id"])
        assert _search_ids(client) == [dep["id"]]  # not before the commit
    assert _search_ids(client) == []
    app.extensions["repository"].indexer.registrations.wait_idle()
    assert _pending(db) == []


def test_a_failing_apply_does_not_fail_the_committed_request(app, client, auth, monkeypatch):
    services = app.extensions["repository"]
    dep = make_deposit(client, auth)
    upload(client, auth, dep)

    def database_gone(*_args):  # type: ignore[no-untyped-def]
        raise OperationalError("SELECT", {}, Exception("the database went away"))

    monkeypatch.setattr(outbox, "due", database_gone)
    assert publish(client, auth, dep)["state"] == "done"  # 202: the publish is committed
    services.indexer.registrations.wait_idle()  # its attempt failed too
    monkeypatch.undo()
    assert sorted(_pending(services.db)) == [("index", dep["id"]), ("register_doi", dep["id"])]
    assert services.indexer.run_pass(grace=0.0) == 2  # the worker's retry
    assert _search_ids(client) == [dep["id"]]


@pytest.mark.slow
def test_a_crash_between_commit_and_apply_loses_nothing(app, client, auth):
    services = app.extensions["repository"]
    apply = services.db.hooks.pop(outbox.APPLY)  # the process dies right after the commit
    register = services.db.hooks.pop(outbox.REGISTER)
    dep = published(client, auth)
    assert _search_ids(client) == []
    services.db.wire(outbox.APPLY, apply)  # restarted
    services.db.wire(outbox.REGISTER, register)
    assert services.indexer.run_pass(grace=0.0) == 2
    assert _search_ids(client) == [dep["id"]]
    assert _pending(services.db) == []
