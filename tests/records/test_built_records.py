"""The stored copies of indexed records: written whenever a record is given to the index, dropped when it leaves."""

from datetime import timedelta

import orjson
import pytest
from helpers.factories import new_version, published
from sqlalchemy import delete, select, update

from repository.records import stored as stored_copies
from repository.records.build import build_records, get_record_rows
from repository.records.cache import RecordCache
from repository.records.lookups import DatabaseLookups
from repository.search.documents import to_index_document
from repository.search.embedded.engine import EmbeddedBackend
from repository.storage.tables.derived import built_records
from repository.storage.tables.records import records
from scripts import takedown

API = "/api/deposit/depositions"


def stored(app) -> dict[int, dict]:  # type: ignore[no-untyped-def]
    """record id -> its built_records row, with `record` decoded and `document` as the engine loads it (the
    row keeps it without the record it carries)."""
    search = app.extensions["repository"].search
    with app.extensions["repository"].db.read() as conn:
        return {row.record_id: {**row._asdict(), "record": orjson.loads(row.record),
                                "document": stored_copies.engine_document(search, row.document, row.record)}
                for row in conn.execute(select(built_records))}


def record_row(app, recid: int):  # type: ignore[no-untyped-def]
    with app.extensions["repository"].db.read() as conn:
        return conn.execute(select(records).where(records.c.id == recid)).first()


def test_publish_stores_the_record_as_indexed(app, client, auth):
    dep = published(client, auth, title="Stored on publish")
    row = stored(app)[dep["id"]]
    source = record_row(app, dep["id"])
    assert (row["revision"], row["updated"]) == (source.revision, source.updated)  # the freshness key
    services = app.extensions["repository"]
    with services.db.read() as conn:  # the built record, as the index was given it
        assert row["record"] == build_records(conn, services.settings, DatabaseLookups(conn),
                                                          get_record_rows(conn, [dep["id"]]))[0]
    search = services.search
    # The same document, up to the order of its keys (the stored copy puts the record back last).
    assert orjson.loads(row["document"]) == orjson.loads(search.engine_document(to_index_document(row["record"])))
    assert row["engine"].startswith(search.engine)


@pytest.mark.slow  # 0.4 s and more of work
def test_edit_rewrites_the_row(app, client, auth):
    dep = published(client, auth, title="Before the edit")
    url = f"{API}/{dep['id']}"
    client.post(f"{url}/actions/edit", headers=auth)
    client.put(url, json={"metadata": {**dep["metadata"], "title": "After the edit"}}, headers=auth)
    client.post(f"{url}/actions/publish", headers=auth)
    row = stored(app)[dep["id"]]
    assert row["revision"] == 2 and row["record"]["metadata"]["title"] == "After the edit"
    assert row["updated"] == record_row(app, dep["id"]).updated


@pytest.mark.slow
def test_a_new_version_rewrites_the_older_ones(app, client, auth):
    first = published(client, auth, title="Versioned")
    second = new_version(client, auth, first, b"v2")
    rows = stored(app)
    old = rows[first["id"]]["record"]["metadata"]["relations"]["version"][0]
    assert (old["is_last"], old["count"], old["last_child"]["pid_value"]) == (False, 2, str(second))
    assert rows[first["id"]]["revision"] == 2  # its relations changed: a new revision, stored and indexed
    assert rows[second]["record"]["metadata"]["relations"]["version"][0]["is_last"] is True
    # The engine-ready document: tantivy's holds each value in a list, OpenSearch's the value itself.
    embedded = isinstance(app.extensions["repository"].search, EmbeddedBackend)
    assert orjson.loads(rows[first["id"]]["document"])["relations.version.is_last"] == ([False] if embedded else False)


@pytest.mark.slow  # 0.4 s and more of work
def test_a_record_taken_down_loses_its_row(app, client, auth, settings):
    kept = published(client, auth, title="Kept", content=b"1")
    gone = published(client, auth, title="Gone", content=b"2")
    assert takedown.main(["--recid", str(gone["id"])], settings) == 0
    assert set(stored(app)) == {kept["id"]}


@pytest.mark.slow  # 0.4 s and more of work
def test_taking_the_latest_version_down_rewrites_the_older_ones(app, client, auth, settings):
    first = published(client, auth, title="Versioned")
    second = new_version(client, auth, first, b"v2")
    assert takedown.main(["--recid", str(second)], settings) == 0
    rows = stored(app)
    assert set(rows) == {first["id"]}
    version = rows[first["id"]]["record"]["metadata"]["relations"]["version"][0]
    assert (version["is_last"], version["count"]) == (True, 1)
    hit = client.get(f"/api/records/?q=recid:{first['id']}").json["hits"]["hits"][0]
    assert hit["metadata"]["relations"]["version"][0]["is_last"] is True  # and the index has it so


def _fresh_cache(app) -> None:  # type: ignore[no-untyped-def]
    app.extensions["repository"].record_cache = RecordCache()


def _set_stored_title(app, recid: int, title: str) -> None:  # type: ignore[no-untyped-def]
    row = stored(app)[recid]
    record = row["record"]
    record["metadata"]["title"] = title
    with app.extensions["repository"].db.write() as conn:
        conn.execute(update(built_records).where(built_records.c.record_id == recid)
                     .values(record=orjson.dumps(record)))


def test_a_record_read_uses_the_current_stored_copy_and_answers_the_same(app, client, auth):
    dep = published(client, auth, title="Read from the copy")
    client.get(f"/records/{dep['id']}")  # a view: the counts move after the copy was stored
    _fresh_cache(app)
    from_copy = client.get(f"/api/records/{dep['id']}")
    with app.extensions["repository"].db.write() as conn:
        conn.execute(delete(built_records).where(built_records.c.record_id == dep["id"]))
    _fresh_cache(app)
    built_now = client.get(f"/api/records/{dep['id']}")
    assert from_copy.status_code == built_now.status_code == 200
    assert from_copy.json == built_now.json  # counts included
    assert from_copy.headers["ETag"] == built_now.headers["ETag"]


def test_the_stored_copy_is_what_a_read_serves_while_current(app, client, auth):
    dep = published(client, auth, title="Original")
    _set_stored_title(app, dep["id"], "Marked copy")  # to tell where an answer came from
    _fresh_cache(app)
    assert client.get(f"/api/records/{dep['id']}").json["metadata"]["title"] == "Marked copy"
    with app.extensions["repository"].db.write() as conn:  # the record changed after its copy was stored
        conn.execute(update(records).where(records.c.id == dep["id"]).values(revision=records.c.revision + 1))
    _fresh_cache(app)
    assert client.get(f"/api/records/{dep['id']}").json["metadata"]["title"] == "Original"


def test_a_reader_who_may_see_more_files_gets_a_built_record(app, client, auth):
    dep = published(client, auth, title="Closed", access_right="closed", license=None)
    _set_stored_title(app, dep["id"], "Marked copy")
    _fresh_cache(app)
    public = client.get(f"/api/records/{dep['id']}").json
    assert public["metadata"]["title"] == "Marked copy" and "files" not in public
    own = client.get(f"/api/records/{dep['id']}", headers=auth).json  # the owner sees the files: built now
    assert own["metadata"]["title"] == "Closed" and own["files"]


def test_a_copy_of_another_change_or_form_is_not_served(app, client, auth):
    dep = published(client, auth, title="Original")
    _set_stored_title(app, dep["id"], "Marked copy")
    kept = stored(app)[dep["id"]]
    db = app.extensions["repository"].db
    for changed in ({"updated": kept["updated"] - timedelta(seconds=1)}, {"engine": "another-form"}):
        with db.write() as conn:
            conn.execute(update(built_records).where(built_records.c.record_id == dep["id"])
                         .values({"updated": kept["updated"], "engine": kept["engine"], **changed}))
        _fresh_cache(app)
        assert client.get(f"/api/records/{dep['id']}").json["metadata"]["title"] == "Original", changed
    with db.write() as conn:
        conn.execute(update(built_records).where(built_records.c.record_id == dep["id"])
                     .values(updated=kept["updated"], engine=kept["engine"]))
    _fresh_cache(app)
    assert client.get(f"/api/records/{dep['id']}").json["metadata"]["title"] == "Marked copy"


@pytest.mark.slow
def test_a_read_after_a_take_down_is_gone(app, client, auth, settings):
    dep = published(client, auth, title="Read, then taken down")
    assert client.get(f"/api/records/{dep['id']}").status_code == 200  # now in the per-process cache too
    assert takedown.main(["--recid", str(dep["id"])], settings) == 0
    assert client.get(f"/api/records/{dep['id']}").status_code == 410
