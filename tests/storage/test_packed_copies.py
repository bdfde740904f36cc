"""Migration 0016 (packed copies): stored copies are compressed and the index document does not repeat the record;
the downgrade writes the rows of before back, and upgrading those again serves every answer byte for byte as
before (record JSON and exports, OAI-PMH in the prerendered formats, the deposit, search after a reindex)."""

from __future__ import annotations

import json

import orjson
import pytest
from alembic import command
from helpers.answers import answers as _answers
from helpers.factories import edit, published, published_restricted
from helpers.http import https_client
from sqlalchemy import select

from app import create_app
from repository.ondemand import wait_all_idle
from repository.records import stored
from repository.search.documents import to_index_document
from repository.search.mapping import SOURCE_FIELD
from repository.search.opensearch.engine import OpenSearchBackend
from repository.storage.migrate import alembic_config
from repository.storage.packing import MAGIC, pack, unpack
from repository.storage.tables.deposits import deposits
from repository.storage.tables.derived import built_records, renditions
from repository.worker import reindex


@pytest.mark.slow
def test_the_migration_down_and_up_again_keeps_every_answer(app, client, auth, settings):
    recids = [published(client, auth, content=b"x" * n, title=f"Packed record {n}")["id"] for n in (1, 2)]
    recids.append(published_restricted(client, auth, title="Packed closed")["id"])
    # A deposit being edited: its metadata differs from its record's, both must survive.
    edit(client, auth, recids[0], title="Packed record, edited")
    before = _answers(client, auth, recids)
    assert b"Packed record, edited" in before[f"/api/deposit/depositions/{recids[0]} {auth}"]

    db = app.extensions["repository"].db
    with db.engine.connect() as conn:
        stored = conn.execute(select(built_records.c.record, built_records.c.document)).all()
        raw = conn.exec_driver_sql("SELECT record, document FROM built_records").all()
        bodies = conn.exec_driver_sql("SELECT body FROM renditions").all()
        form = conn.exec_driver_sql("SELECT metadata FROM deposits UNION ALL SELECT metadata FROM records").all()
    assert len(stored) == 3 and bodies
    assert all(bytes(value)[:4] == MAGIC for row in raw + bodies + form for value in row if value is not None)
    with db.engine.connect() as conn:  # published deposits not being edited keep their record's metadata once
        own = dict(conn.execute(select(deposits.c.id, deposits.c.metadata)).all())
    assert own[recids[1]] is None and own[recids[2]] is None and own[recids[0]]["title"] == "Packed record, edited"
    for _record, document in stored:
        assert document[:1] == b"S" and SOURCE_FIELD.encode() + b'"' not in document  # the record is kept once

    command.downgrade(alembic_config(db), "0015")
    with db.engine.connect() as conn:
        old = conn.exec_driver_sql("SELECT record, document FROM built_records").all()
        form = conn.exec_driver_sql("SELECT metadata FROM deposits UNION ALL SELECT metadata FROM records").all()
        bodies = conn.exec_driver_sql("SELECT body FROM renditions").all()
    for record, document in old:  # as written before 0016: whole, unpacked, the record inside the document
        assert bytes(record)[:1] == b"{" and b'"record":' in bytes(document)
    assert all(bytes(body)[:1] == b"<" for (body,) in bodies)
    assert all(isinstance(value, dict) or json.loads(value) for (value,) in form)  # no NULL left either

    command.upgrade(alembic_config(db), "head")
    # A new app: nothing kept from before in its per-process caches.
    again = create_app(settings)
    try:
        services = again.extensions["repository"]
        assert reindex.rebuild(services.db, settings, services.search, lambda n: None) == 3
        assert reindex.check(services.db, services.search) == []
        assert _answers(https_client(again), auth, recids) == before
        with services.db.read() as conn:
            assert conn.execute(select(deposits.c.metadata).where(deposits.c.id == recids[0])).scalar_one()[
                "title"] == "Packed record, edited"
            assert len(conn.execute(select(renditions.c.body)).all()) == len(bodies)
    finally:
        wait_all_idle()  # every background thread's connection back in the pool before the pool goes
        services.db.dispose()


def test_values_stored_before_packing_read_as_they_are():
    assert unpack(b'{"a":1}') == b'{"a":1}' and unpack('{"a":1}') == b'{"a":1}'
    assert unpack(pack(b"<x/>")) == b"<x/>"


def test_a_document_without_its_record_gets_it_back_in_either_engine(app):
    record = {"id": 7, "metadata": {"title": "Ünïcode", "access_right": "open"}, "files": []}
    doc = to_index_document(record)
    assert doc[SOURCE_FIELD] is record
    without = {k: v for k, v in doc.items() if k != SOURCE_FIELD}
    for search in (app.extensions["repository"].search, OpenSearchBackend("http://127.0.0.1:9")):
        whole = search.engine_document(doc)
        assert orjson.loads(search.with_source(search.engine_document(without), orjson.dumps(record))) == \
            orjson.loads(whole)
        assert list(orjson.loads(search.with_source(b"{}", orjson.dumps(record)))) == [SOURCE_FIELD]
        kept = stored.stored_document(search, record, orjson.dumps(record), doc)
        assert kept[:1] == stored.WITHOUT_SOURCE
        assert orjson.loads(stored.engine_document(search, kept, orjson.dumps(record))) == orjson.loads(whole)


def test_a_record_the_index_gets_otherwise_keeps_its_whole_document(app):
    """An embargoed record whose embargo ended, without files: search hits show no `files` key, the record does."""
    record = {"id": 8, "metadata": {"access_right": "embargoed"}, "files": [], "links": {"bucket": "b"}}
    doc = to_index_document(record)
    search = app.extensions["repository"].search
    kept = stored.stored_document(search, record, orjson.dumps(record), doc)
    assert kept[:1] == stored.WHOLE
    assert stored.engine_document(search, kept, orjson.dumps(record)) == search.engine_document(doc)
