"""zstd dictionaries of the packed columns (storage.dictionaries, migration 0017): values packed with them read as
before, whichever dictionary (or none) packed them and whichever process trained it; the downgrade packs them
without one again, and every answer stays byte for byte the same through training, downgrade and upgrade."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from alembic import command
from helpers.answers import answers
from helpers.factories import edit, published, published_restricted
from helpers.http import https_client
from sqlalchemy import inspect, select

from app import create_app
from repository.cli import COMMANDS, invoke
from repository.config import Settings
from repository.ondemand import wait_all_idle
from repository.storage import dictionaries, open_database, packing
from repository.storage.migrate import alembic_config
from repository.storage.tables.derived import built_records
from repository.worker import reindex

SMALL = 4096  # bytes: a dictionary the few records of a test can fill
UNLIMITED = {"RATELIMIT_GUEST": "1000000/minute", "RATELIMIT_USER": "1000000/minute",
             "RATELIMIT_OAI": "1000000/minute"}  # every answer about a few records, several times over


@pytest.fixture
def settings(make_settings: Callable[..., Settings]) -> Settings:
    return make_settings(**UNLIMITED)


def _publish_some(client, auth) -> list[int]:  # type: ignore[no-untyped-def]
    recids = [published(client, auth, content=b"x" * n, title=f"Dictionary record {n}",
                        keywords=[f"word {n}", "shared"])["id"] for n in range(1, 7)]  # fmt: skip
    recids.append(published_restricted(client, auth, title="Dictionary closed")["id"])
    # A deposit being edited: its own metadata is packed (with the records' dictionary) beside its record's.
    edit(client, auth, recids[0], title="Dictionary record, edited")
    return recids


def _train_all(db) -> dict[str, int]:  # type: ignore[no-untyped-def]
    trained = {kind: dictionaries.train(db, kind, min_values=1, size=SMALL) for kind in dictionaries.KINDS}
    assert all(trained.values()), trained
    for kind in dictionaries.KINDS:
        dictionaries.repack(db, kind)
    return trained  # type: ignore[return-value]


def _packed_with(db) -> dict[str, set[int]]:  # type: ignore[no-untyped-def]
    """kind -> the dictionary ids (0: none) its stored values name."""
    found: dict[str, set[int]] = {}
    with db.engine.connect() as conn:
        for place in dictionaries.PLACES:
            values = conn.exec_driver_sql(
                f"SELECT {place.column} FROM {place.table} WHERE {place.column} IS NOT NULL").scalars()
            found.setdefault(place.kind, set()).update(packing.dictionary_id(bytes(v)) for v in values)
    return found


def _fresh_answers(settings, auth, recids: list[int]) -> dict[str, bytes]:  # type: ignore[no-untyped-def]
    """The answers of a new app (nothing kept in its per-process caches), after a reindex from the stored copies."""
    app = create_app(settings)
    services = app.extensions["repository"]
    try:
        assert reindex.rebuild(services.db, settings, services.search, lambda n: None) == len(recids)
        assert reindex.check(services.db, services.search) == []
        return answers(https_client(app), auth, recids)
    finally:
        wait_all_idle()  # every background thread's connection back in the pool before the pool goes
        services.db.dispose()


@pytest.mark.slow
def test_values_packed_with_dictionaries_give_every_answer_as_before_and_the_downgrade_unpacks_them(
        app, client, auth, settings):  # fmt: skip
    recids = _publish_some(client, auth)
    before = answers(client, auth, recids)
    db = app.extensions["repository"].db
    assert _packed_with(db) == {kind: {0} for kind in dictionaries.KINDS}  # no dictionary yet

    trained = _train_all(db)
    assert _packed_with(db) == {kind: {trained[kind]} for kind in dictionaries.KINDS}
    assert _fresh_answers(settings, auth, recids) == before
    # Written after training (an edit published again), a value is packed with its kind's dictionary at once.
    assert client.post(f"/api/deposit/depositions/{recids[0]}/actions/publish", headers=auth).status_code == 202
    assert _packed_with(db)["built_records.record"] == {trained["built_records.record"]}
    before = answers(client, auth, recids)
    assert b"Dictionary record, edited" in before[f"/api/records/{recids[0]} {{'Accept': 'application/json'}}"]

    command.downgrade(alembic_config(db), "0016")
    assert "pack_dictionaries" not in inspect(db.engine).get_table_names()
    assert _packed_with(db) == {kind: {0} for kind in dictionaries.KINDS}  # what 0016's code reads
    command.upgrade(alembic_config(db), "head")
    assert _fresh_answers(settings, auth, recids) == before
    assert dictionaries.ensure(db, min_values=100) == {}  # too few values: nothing trained
    _train_all(db)
    assert _fresh_answers(settings, auth, recids) == before


@pytest.mark.slow
def test_a_newer_dictionary_packs_later_values_and_the_older_ones_stay_readable(app, client, auth, settings):
    recids = _publish_some(client, auth)
    db = app.extensions["repository"].db
    first = dictionaries.train(db, "built_records.record", min_values=1, size=SMALL)
    dictionaries.repack(db, "built_records.record")
    with db.read() as conn:
        records_before = dict(conn.execute(select(built_records.c.record_id, built_records.c.record)).all())
    published(client, auth, title="Dictionary record, later", description="<p>Other words entirely.</p>")
    second = dictionaries.train(db, "built_records.record", min_values=1, size=SMALL // 2)
    assert first and second and first != second
    with db.read() as conn:
        assert dictionaries.newest(conn)["built_records.record"] == second
    assert _packed_with(db)["built_records.record"] == {first}  # nothing rewritten by training
    newer = published(client, auth, title="Dictionary record, newest")["id"]
    assert _packed_with(db)["built_records.record"] == {first, second}
    assert dictionaries.repack(db, "built_records.record") == len(recids) + 1
    assert _packed_with(db)["built_records.record"] == {second}
    with db.read() as conn:
        records_after = dict(conn.execute(select(built_records.c.record_id, built_records.c.record)).all())
    assert {k: records_after[k] for k in records_before} == records_before and newer in records_after


@pytest.mark.slow
def test_another_process_reads_and_writes_with_the_dictionaries_one_trained(app, client, auth, settings):
    recids = _publish_some(client, auth)
    db = app.extensions["repository"].db
    trained = _train_all(db)
    packing._KNOWN.clear()  # as in a process that never saw them (the private table: no other way in-process)
    other = open_database(settings.DATABASE_URL)
    try:
        with other.read() as conn:
            records = dict(conn.execute(select(built_records.c.record_id, built_records.c.record)).all())
        assert sorted(records) == sorted(recids) and all(value.startswith(b"{") for value in records.values())
        with other.write() as conn:  # the other process writes with the same dictionary
            conn.execute(built_records.update().where(built_records.c.record_id == recids[1])
                         .values(record=records[recids[1]]))
    finally:
        other.dispose()
    assert _packed_with(db)["built_records.record"] == {trained["built_records.record"]}


@pytest.mark.slow
def test_the_worker_trains_once_there_are_enough_values_then_packs_the_older_ones_a_few_at_a_pass(
        app, client, auth, monkeypatch):  # fmt: skip
    recids = _publish_some(client, auth)
    db = app.extensions["repository"].db
    assert dictionaries.Tending(db, min_values=1000, size=SMALL)() == 0  # too few values
    assert _packed_with(db) == {kind: {0} for kind in dictionaries.KINDS}
    monkeypatch.setattr(dictionaries, "BATCH", 2)
    tending = dictionaries.Tending(db, min_values=1, size=SMALL)
    passes = packed = 0
    while passes == 0 or tending.cursors:
        packed += tending()
        passes += 1
    with db.read() as conn:
        trained = dictionaries.newest(conn)
    assert passes > 1 and packed >= 3 * len(recids)
    assert _packed_with(db) == {kind: {trained[kind]} for kind in dictionaries.KINDS}
    assert tending() == 0  # nothing left until the next check


@pytest.mark.slow
def test_the_command_trains_what_is_missing_and_packs_every_value_with_it(app, client, auth, settings, capsys):
    recids = _publish_some(client, auth)
    before = answers(client, auth, recids)
    assert invoke(COMMANDS["pack-dictionaries"], ["--min-values", "100"], settings) == 0
    assert capsys.readouterr().out.count("no dictionary") == len(dictionaries.KINDS)
    assert invoke(COMMANDS["pack-dictionaries"], ["--min-values", "1"], settings) == 0
    out = capsys.readouterr().out
    db = app.extensions["repository"].db
    with db.read() as conn:
        trained = dictionaries.newest(conn)
    assert f"built_records.record: trained dictionary {trained['built_records.record']}, {len(recids)} values" in out
    assert _packed_with(db) == {kind: {trained[kind]} for kind in dictionaries.KINDS}
    assert _fresh_answers(settings, auth, recids) == before
