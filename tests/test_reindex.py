"""scripts/reindex.py rebuilds the index with searches working throughout, and --check catches corruption."""

from factories import published

from scripts import reindex, worker


def test_reindex_and_check(app, client, auth, settings, capsys):
    made = [published(client, auth, title=f"Record {i}", content=f"{i}".encode())["id"] for i in range(3)]
    assert reindex.main(["--check", "--quiet"], settings) == 0
    assert reindex.main(["--quiet"], settings) == 0
    out = capsys.readouterr().out
    assert "reindexed 3 records" in out and "index check passed" in out
    search = app.extensions["repository"].extras["search"]
    assert set(search.get_revisions()) == set(made)  # the server's backend sees the swapped index
    assert sorted(h["id"] for h in client.get("/api/records/").json["hits"]["hits"]) == sorted(made)


def test_check_catches_a_corrupted_index(app, client, auth, settings, capsys):
    first = published(client, auth, title="Kept", content=b"1")
    second = published(client, auth, title="Lost", content=b"2")
    search = app.extensions["repository"].extras["search"]
    search.delete([second["id"]])  # the index loses a record
    docs = search.get_revisions()
    assert second["id"] not in docs
    assert reindex.main(["--check", "--quiet"], settings) == 1
    out = capsys.readouterr().out
    assert f"record {second['id']} is missing from the index" in out and "FAILED" in out
    # A rebuild repairs it.
    assert reindex.main(["--quiet"], settings) == 0
    assert set(search.get_revisions()) == {first["id"], second["id"]}


def test_check_catches_a_stale_revision(app, client, auth, settings, capsys):
    dep = published(client, auth)
    url = f"/api/deposit/depositions/{dep['id']}"
    search = app.extensions["repository"].extras["search"]
    original = search.index
    search.index = lambda docs: None  # the re-publish never reaches the index
    try:
        client.post(f"{url}/actions/edit", headers=auth)
        client.put(url, json={"metadata": {**dep["metadata"], "title": "Changed"}}, headers=auth)
        client.post(f"{url}/actions/publish", headers=auth)
    finally:
        search.index = original
    assert reindex.main(["--check", "--quiet"], settings) == 1
    assert "revision 1, the database has 2" in capsys.readouterr().out


def test_worker_applies_pending_rows(client, auth, monkeypatch, settings, capsys):
    published(client, auth)
    for name in ("INSTANCE_PATH", "DATABASE_URL", "SECRET_KEY", "BASE_URL"):
        monkeypatch.setenv(name, str(getattr(settings, name)))
    assert worker.main(["--once"]) == 0
    assert "applied 0 outbox rows" in capsys.readouterr().out
