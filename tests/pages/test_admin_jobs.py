"""The jobs page and its API (docs/operators/administration.md#jobs): a failing outbox entry shows with its last
error, an administrator retries it (applied at once) or drops it, each audited; the sizes and counts are those of
/metrics; the last reindex check and fixity run show with their findings; anyone else gets 403."""

from __future__ import annotations

import re

import pytest
from helpers.factories import published
from helpers.http import https_client
from helpers.pages import post_form, signed_in

from repository.accounts import admin, audit
from repository.accounts.audit import Actor
from repository.accounts.tokens import create_token, get_user_by_email
from repository.cli import COMMANDS, invoke
from repository.storage.tables.outbox import outbox
from repository.worker import jobs

PASSWORD = "correct horse battery"


def _admin(app, client, email: str = "root@example.org", role: str = "admin") -> dict[str, str]:
    """Sign `email` in with `role`; the headers of an admin-scoped token of theirs."""
    signed_in(client, app, email, PASSWORD)
    with app.extensions["repository"].db.write() as conn:
        user = get_user_by_email(conn, email)
        assert user is not None
        admin.set_role(conn, Actor.operator(), user["id"], role)
        token = create_token(conn, user["id"], ["admin"] if role == "admin" else ["deposit:write"])[1]
    return {"Authorization": f"Bearer {token}"}


def _failing_entry(app, client, auth, monkeypatch) -> tuple[int, int]:
    """A record whose indexing failed (the search engine refused it): (its id, the outbox entry's id)."""
    services = app.extensions["repository"]

    def refuse(*_args, **_kwargs):  # type: ignore[no-untyped-def]
        raise ConnectionError("the search engine refused the connection")

    monkeypatch.setattr(services.search, "index_documents", refuse)
    recid = published(client, auth)["id"]
    services.indexer.registrations.wait_idle()
    monkeypatch.undo()
    with services.db.read() as conn:
        entry_id = conn.execute(outbox.select().where(outbox.c.recid == recid, outbox.c.kind == "index",
                                                      outbox.c.done.is_(None))).mappings().one()["id"]
    return recid, entry_id


def _searchable(client, recid: int) -> bool:
    hits = client.get("/api/records/", query_string={"q": f"recid:{recid}"}).get_json()["hits"]["hits"]
    return [h["id"] for h in hits] == [recid]


def test_an_admin_retries_a_failing_outbox_entry_on_the_page(app, client, auth, monkeypatch):
    _admin(app, client)
    recid, entry_id = _failing_entry(app, client, auth, monkeypatch)
    assert not _searchable(client, recid)
    page = client.get("/admin/jobs/").get_data(as_text=True)
    assert f"Entry {entry_id}: index of record" in page
    assert "the search engine refused the connection" in page
    assert re.search(r"1 pending, 1 failing", page)
    answer = post_form(client, f"/admin/jobs/outbox/{entry_id}/retry", {}, page="/admin/jobs/")
    assert answer.status_code == 303
    assert _searchable(client, recid)  # applied right after the click
    page = client.get("/admin/jobs/").get_data(as_text=True)
    assert f"Entry {entry_id} is being tried again." in page and f"Entry {entry_id}:" not in page
    with app.extensions["repository"].db.read() as conn:
        entry = audit.search(conn, action="outbox.retry")[0][0]
    assert entry["target_id"] == str(entry_id)
    assert entry["detail"]["last_error"].endswith("the search engine refused the connection")


def test_the_api_lists_retries_and_drops_entries(app, client, auth, monkeypatch):
    root = _admin(app, client)
    recid, entry_id = _failing_entry(app, client, auth, monkeypatch)
    facts = client.get("/api/admin/jobs", headers=root).get_json()
    assert facts["outbox"]["pending"] == 1 and facts["outbox"]["failing"] == 1
    (entry,) = facts["outbox"]["entries"]
    assert entry["id"] == entry_id and entry["recid"] == recid and entry["attempts"] == 1
    assert "refused the connection" in entry["last_error"]
    assert facts["database_bytes"] > 0 and facts["disk_free_bytes"] > 0
    assert facts["runs"] == {"reindex-check": None, "fixity": None}
    assert client.post(f"/api/admin/jobs/outbox/{entry_id}/drop", headers=root).status_code == 204
    assert client.get("/api/admin/jobs", headers=root).get_json()["outbox"]["pending"] == 0
    assert not _searchable(client, recid)  # never applied
    missing = client.post(f"/api/admin/jobs/outbox/{entry_id}/retry", headers=root)
    assert missing.status_code == 404 and "no pending outbox entry" in missing.get_json()["message"]
    actions = [e["action"] for e in client.get("/api/admin/audit", query_string={"action": "outbox."},
                                               headers=root).get_json()["hits"]["hits"]]
    assert actions == ["outbox.drop"]


@pytest.mark.slow  # 0.4 s and more of work
def test_the_numbers_are_those_of_the_metrics(app, client, auth):
    root = _admin(app, client)
    published(client, auth)
    facts = client.get("/api/admin/jobs", headers=root).get_json()
    services = app.extensions["repository"]
    with services.db.read() as conn:
        now = jobs.readings(conn, services.db, services.files.root)
    # PostgreSQL's size moves with its own housekeeping between two reads; SQLite's pages stay put.
    assert abs(facts["database_bytes"] - now.database_bytes) <= facts["database_bytes"] // 20
    assert facts["outbox"]["pending"] == now.outbox.pending == 0
    from repository.web.metrics import StateCollector

    gauges = {m.name: m.samples[0].value for m in StateCollector(services).collect() if m.samples}
    assert abs(gauges["repository_database_bytes"] - now.database_bytes) <= now.database_bytes // 20
    if services.db.is_sqlite:
        assert gauges["repository_database_bytes"] == now.database_bytes == facts["database_bytes"]
    assert gauges["repository_outbox_pending"] == facts["outbox"]["pending"]
    assert gauges["repository_mail_outbox_pending"] == facts["mail_outbox"]["pending"]
    assert abs(gauges["repository_disk_free_bytes"] - facts["disk_free_bytes"]) < 64 * 1024 * 1024


def test_the_last_checks_show_with_their_findings(app, settings, client, auth, capsys):
    root = _admin(app, client)
    recid = published(client, auth)["id"]
    assert invoke(COMMANDS["reindex"], ["--check"], settings) == 0
    app.extensions["repository"].search.delete([recid], {})
    assert invoke(COMMANDS["reindex"], ["--check"], settings) == 1
    capsys.readouterr()
    run = client.get("/api/admin/jobs", headers=root).get_json()["runs"]["reindex-check"]
    assert run["ok"] is False and run["findings"] == [f"record {recid} is missing from the index"]
    page = client.get("/admin/jobs/").get_data(as_text=True)
    assert "Found problems" in page and f"record {recid} is missing from the index" in page
    assert "Last fixity run" in page and "Never run" in page
    assert invoke(COMMANDS["fixity"], ["--quiet", "--rate", "0"], settings) == 0
    run = client.get("/api/admin/jobs", headers=root).get_json()["runs"]["fixity"]
    assert run["ok"] is True and run["findings"] == []
    assert re.match(r"1 files \(\d+ bytes\) checked, 0 problem\(s\); pass complete", run["summary"]), run


def test_everyone_else_is_refused(app, client):
    _admin(app, client, "mod@example.org", "moderator")
    assert client.get("/admin/jobs/").status_code == 403
    guest = https_client(app)
    assert guest.get("/api/admin/jobs").status_code == 401
