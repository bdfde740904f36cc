"""scripts/reindex.py rebuilds the index with searches working throughout, and --check catches corruption."""

import json
import threading

import pytest
from helpers.factories import new_version, published
from sqlalchemy import delete, select, update

import scripts.reindex
from repository.records import stored as stored_copies
from repository.records.cache import RecordCache
from repository.search.documents import DOCUMENT_VERSION
from repository.search.embedded.tantivy_query import DISTINCT, PRESENT
from repository.search.mapping import BEFORE_STEMMING
from repository.storage.tables.derived import built_records, renditions
from repository.worker import reindex
from scripts import takedown, worker


@pytest.mark.slow
def test_reindex_and_check(app, client, auth, settings, capsys):
    made = [published(client, auth, title=f"Record {i}", content=f"{i}".encode())["id"] for i in range(3)]
    assert scripts.reindex.main(["--check", "--quiet"], settings) == 0
    assert scripts.reindex.main(["--quiet"], settings) == 0
    out = capsys.readouterr().out
    assert "reindexed 3 records" in out and "index check passed" in out
    search = app.extensions["repository"].search
    assert set(search.get_revisions()) == set(made)  # the server's backend sees the swapped index
    assert sorted(h["id"] for h in client.get("/api/records/").json["hits"]["hits"]) == sorted(made)


@pytest.mark.slow  # 0.4 s and more of work
def test_check_catches_a_corrupted_index(app, client, auth, settings, capsys):
    first = published(client, auth, title="Kept", content=b"1")
    second = published(client, auth, title="Lost", content=b"2")
    search = app.extensions["repository"].search
    search.delete([second["id"]])  # the index loses a record
    docs = search.get_revisions()
    assert second["id"] not in docs
    assert scripts.reindex.main(["--check", "--quiet"], settings) == 1
    out = capsys.readouterr().out
    assert f"record {second['id']} is missing from the index" in out and "FAILED" in out
    # A rebuild repairs it.
    assert scripts.reindex.main(["--quiet"], settings) == 0
    assert set(search.get_revisions()) == {first["id"], second["id"]}


def test_check_catches_a_stale_revision(app, client, auth, settings, capsys):
    dep = published(client, auth)
    url = f"/api/deposit/depositions/{dep['id']}"
    search = app.extensions["repository"].search
    original = search.index_documents
    search.index_documents = lambda entries: None  # the re-publish never reaches the index
    try:
        client.post(f"{url}/actions/edit", headers=auth)
        client.put(url, json={"metadata": {**dep["metadata"], "title": "Changed"}}, headers=auth)
        client.post(f"{url}/actions/publish", headers=auth)
    finally:
        search.index_documents = original
    assert scripts.reindex.main(["--check", "--quiet"], settings) == 1
    assert "revision 1, the database has 2" in capsys.readouterr().out


@pytest.mark.slow
def test_worker_applies_pending_rows(client, auth, monkeypatch, settings, capsys):
    published(client, auth)
    for name in ("INSTANCE_PATH", "DATABASE_URL", "SECRET_KEY", "BASE_URL"):
        monkeypatch.setenv(name, str(getattr(settings, name)))
    assert worker.main(["--once"]) == 0
    assert "applied 0 outbox rows" in capsys.readouterr().out


QUERIES = [{}, {"q": "soil"}, {"q": "keywords:alps"}, {"q": 'title:"river sediments"'}, {"sort": "-mostrecent"},
           {"all_versions": "true", "sort": "version"}, {"type": "image"}, {"bounds": "7,46,8,47"},
           {"q": "_exists_:locations.place"}, {"publication_date": "2019--2021"}, {"q": "creators.name:doe"}]


def answers(client) -> list:  # type: ignore[no-untyped-def]
    """The hits and facets of every query in QUERIES."""
    found = []
    for args in QUERIES:
        response = client.get("/api/records/", query_string=args)
        assert response.status_code == 200, (args, response.json)
        found.append((response.json["hits"], response.json.get("aggregations")))
    return found


def sample(client, auth) -> list[dict]:  # type: ignore[no-untyped-def]
    first = published(client, auth, title="Soil moisture of alpine meadows", keywords=["soil", "alps"],
                      publication_date="2019-05-01", locations=[{"place": "Zermatt", "lat": 46.02, "lon": 7.75}])
    return [
        first,
        published(client, auth, title="Glacier retreat photographs", upload_type="image", image_type="photo",
                  publication_date="2021-03-03", content=b"2"),
        published(client, auth, title="A study of river sediments", upload_type="publication",
                  publication_type="article", keywords=["soil", "river"], access_right="closed", content=b"3"),
        {"id": new_version(client, auth, first, b"v2")},
    ]


@pytest.mark.slow
def test_reindex_from_stored_documents_equals_a_rebuild_from_scratch(client, auth, settings, capsys):
    sample(client, auth)
    live = answers(client)  # as the indexer wrote them, one by one
    assert scripts.reindex.main(["--quiet"], settings) == 0
    assert answers(client) == live
    assert scripts.reindex.main(["--quiet", "--rebuild-all"], settings) == 0
    assert answers(client) == live
    assert capsys.readouterr().out.count("index check passed") == 2


@pytest.mark.slow
def test_stale_and_missing_rows_are_rebuilt(app, client, auth, settings):
    fresh = published(client, auth, title="Fresh copy", content=b"1")
    stale = published(client, auth, title="Stale copy", content=b"2")
    other_form = published(client, auth, title="Copy of another form", content=b"3")
    missing = published(client, auth, title="Missing copy", content=b"4")
    db = app.extensions["repository"].db
    with db.write() as conn:
        bogus = conn.execute(select(built_records.c.document).where(built_records.c.record_id == fresh["id"])).scalar()
        conn.execute(update(built_records).where(built_records.c.record_id == stale["id"])
                     .values(revision=0, document=bogus))  # an older revision: not to be trusted
        conn.execute(update(built_records).where(built_records.c.record_id == other_form["id"])
                     .values(engine="tantivy-0-old", document=b"{}"))
        conn.execute(delete(built_records).where(built_records.c.record_id == missing["id"]))
    assert scripts.reindex.main(["--quiet"], settings) == 0
    for dep in (fresh, stale, other_form, missing):
        assert ids(client, q=f'title:"{dep["title"]}"') == [dep["id"]]
    with db.read() as conn:
        rows = {r.record_id: r for r in conn.execute(select(built_records))}
    assert rows[stale["id"]].revision == 1 and rows[stale["id"]].document != bogus
    assert rows[other_form["id"]].engine == rows[fresh["id"]].engine
    assert missing["id"] in rows


@pytest.mark.slow
def test_writes_during_a_rebuild_reach_the_new_index(app, client, auth, settings):
    services = app.extensions["repository"]
    edited = published(client, auth, title="Title before the rebuild", content=b"1")
    gone = published(client, auth, title="Taken down during the rebuild", content=b"2")
    kept = published(client, auth, title="Untouched", content=b"3")
    during: list[int] = []

    def write_while_loading(count: int) -> None:
        # Called while the bulk writer owns the new index: these writes reach it through its journal.
        if during:
            return
        during.append(published(client, auth, title="Published during the rebuild", content=b"4")["id"])
        url = f"/api/deposit/depositions/{edited['id']}"
        client.post(f"{url}/actions/edit", headers=auth)
        client.put(url, json={"metadata": {**edited["metadata"], "title": "Title during the rebuild"}}, headers=auth)
        client.post(f"{url}/actions/publish", headers=auth)
        assert takedown.main(["--recid", str(gone["id"])], settings) == 0

    search = services.search
    assert reindex.rebuild(services.db, settings, search, write_while_loading) >= 3
    assert during and reindex.check(services.db, search) == []
    assert sorted(ids(client)) == sorted([edited["id"], kept["id"], *during])
    assert sorted(ids(client, q='title:"during the rebuild"')) == sorted([edited["id"], *during])
    assert ids(client, q='title:"before the rebuild"') == []


def ids(client, **args) -> list[int]:  # type: ignore[no-untyped-def]
    return [h["id"] for h in client.get("/api/records/", query_string=args).json["hits"]["hits"]]


@pytest.mark.slow  # 0.4 s and more of work
def test_records_built_again_by_a_rebuild_get_their_renditions(app, client, auth, settings):
    dep = published(client, auth, title="Rendered on rebuild")
    db = app.extensions["repository"].db
    with db.write() as conn:  # as after a release: no stored copy, no rendition
        conn.execute(delete(renditions))
        conn.execute(delete(built_records))
    assert scripts.reindex.main(["--quiet"], settings) == 0
    with db.read() as conn:
        kept = set(conn.execute(select(renditions.c.record_id, renditions.c.format)).all())
    assert kept == {(dep["id"], "oai:oai_dc"), (dep["id"], "oai:oai_registry")}


def test_read_ahead_gives_every_item_in_order_and_raises_the_readers_error():
    assert list(reindex.read_ahead(iter(range(100)), 2)) == list(range(100))

    def failing():  # type: ignore[no-untyped-def]
        yield 1
        raise ValueError("the database went away")

    got = []
    with pytest.raises(ValueError, match="went away"):
        for item in reindex.read_ahead(failing(), 2):
            got.append(item)
    assert got == [1]


def test_leaving_a_read_ahead_early_stops_its_thread_and_closes_the_source():
    closed = threading.Event()

    def endless():  # type: ignore[no-untyped-def]
        try:
            n = 0
            while True:
                n += 1
                yield n
        finally:
            closed.set()

    items = reindex.read_ahead(endless(), 2)
    assert [next(items) for _ in range(3)] == [1, 2, 3]
    items.close()  # the consumer failed (the engine refused a document) or stopped
    assert closed.is_set()
    assert not any(t.name == "read-ahead" for t in threading.enumerate())


@pytest.mark.slow
def test_documents_stored_before_the_distinct_counts_are_upgraded_not_built_again(app, client, auth, settings,
                                                                                   monkeypatch):
    # As after upgrading from a release whose documents lacked the per-record distinct-term counts (form d1): the
    # stored copies stay valid (reads keep using them) and a reindex adds the counts from each document's own terms.
    deps = sample(client, auth)
    live = answers(client)
    services = app.extensions["repository"]
    search, db = services.search, services.db
    if not search.engine.startswith("tantivy"):
        pytest.skip("only the embedded engine has older stored forms that need more than loading as they are")
    # The oldest form: before the distinct counts (d0) and before the text fields' companions (BEFORE_STEMMING).
    older = stored_copies.form(settings, search, f"tantivy-{DOCUMENT_VERSION}-{BEFORE_STEMMING}")
    assert older in stored_copies.upgradable(settings, search)
    companions = {f.exact for f in search.fields.values() if f.exact}
    with db.read() as conn:
        before = {r.record_id: r for r in conn.execute(select(built_records))}
    with db.write() as conn:
        for row in before.values():
            document = json.loads(row.document[1:])
            assert any(name in document for name in DISTINCT.values()) or "keywords" not in document
            for name in (*DISTINCT.values(), *companions):
                document.pop(name, None)
            document[PRESENT] = [n for n in document.get(PRESENT, []) if n not in companions]
            marked = {**json.loads(row.record)}
            marked["metadata"] = {**marked["metadata"], "title": "Marked copy"}
            conn.execute(update(built_records).where(built_records.c.record_id == row.record_id).values(
                engine=older, record=json.dumps(marked).encode(),
                document=row.document[:1] + json.dumps(document, separators=(",", ":")).encode()))
    services.record_cache = RecordCache()
    assert client.get(f"/api/records/{deps[0]['id']}").json["metadata"]["title"] == "Marked copy"  # still read
    with db.write() as conn:  # the records as they were (only the documents' form is older now)
        for row in before.values():
            conn.execute(update(built_records).where(built_records.c.record_id == row.record_id)
                         .values(record=row.record))
    def build(*args: object) -> None:
        raise AssertionError("a record was built again")

    monkeypatch.setattr(stored_copies, "_rebuild", build)
    assert scripts.reindex.main(["--quiet"], settings) == 0
    assert answers(client) == live  # facets included: the counts the upgrade added are the build's
    with db.read() as conn:
        after = {r.record_id: r for r in conn.execute(select(built_records))}
    assert after.keys() == before.keys()
    for recid, row in after.items():
        assert row.engine == before[recid].engine != older
        # What a build gives, up to the order of the keys.
        assert json.loads(stored_copies.engine_document(search, row.document, row.record)) == json.loads(
            stored_copies.engine_document(search, before[recid].document, before[recid].record))
