"""`repository-admin import dump`: an export loaded into a new, empty instance gives the same records (ids, concept
ids, versions, DOIs never registered again, metadata), searchable; a rerun changes nothing; a wrong checksum and an
instance that is not empty are refused with nothing written."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import orjson
import pytest
from helpers.databases import drop_database, empty_database
from helpers.exports import export, jsonl, latest
from helpers.http import https_client
from sqlalchemy import func, select

from app import create_app
from repository.cli import COMMANDS, invoke
from repository.config import Settings
from repository.exports import folder
from repository.storage.tables.outbox import outbox
from repository.storage.tables.records import records

KEPT = ("id", "conceptrecid", "doi", "conceptdoi", "revision", "created", "updated", "metadata")


@pytest.fixture
def target(make_settings, tmp_path) -> Iterator[Settings]:  # type: ignore[no-untyped-def]
    """The settings of a new instance with an empty database (migrated when the import starts)."""
    url = empty_database(tmp_path, "target")
    yield make_settings(INSTANCE_PATH=str(tmp_path / "target"), DATABASE_URL=url, AUTO_MIGRATE="true")
    drop_database(url)


@pytest.fixture
def exported(settings, corpus, tmp_path) -> str:  # type: ignore[no-untyped-def]
    """The folder of an export of the corpus."""
    assert export(settings, str(tmp_path / "out")) == 0
    return latest(str(tmp_path / "out"))


def load(settings: Settings, path: str) -> int:
    return invoke(COMMANDS["import"], ["dump", path, "--owner", "migrated@example.org", "--quiet"], settings)


def count(app, table) -> int:  # type: ignore[no-untyped-def]
    with app.extensions["repository"].db.read() as conn:
        return conn.execute(select(func.count()).select_from(table)).scalar_one()


@pytest.mark.slow
def test_the_round_trip_gives_the_same_records(exported, target, capsys) -> None:
    lines = jsonl(exported)
    assert load(target, exported) == 0
    assert f"loaded {len(lines)} records, 0 already there, 0 failed" in capsys.readouterr().out
    app = create_app(target)
    try:
        client = https_client(app)
        for line in lines:
            answer = client.get(f"/api/records/{line['id']}")
            assert answer.status_code == 200
            assert {key: answer.json.get(key) for key in KEPT} == {key: line.get(key) for key in KEPT}
            assert answer.json["links"]["doi"] == line["links"]["doi"]
        found = client.get("/api/records/", query_string={"all_versions": "true", "size": 100}).json["hits"]
        assert sorted(hit["id"] for hit in found["hits"]) == sorted(line["id"] for line in lines)
        concept = lines[0]["conceptrecid"]
        assert client.get(f"/api/records/{concept}").status_code in (301, 302)  # the concept id leads to its latest
        # Never registered again: no DOI work queued, every record integrated (editable at once).
        assert count(app, outbox) == 0 or _no_doi_rows(app)
        with app.extensions["repository"].db.read() as conn:
            assert all(conn.execute(select(records.c.integrated, records.c.doi_external)).all())
    finally:
        app.extensions["repository"].db.engine.dispose()
    # The new instance's own export holds the same records.
    out = os.path.join(os.path.dirname(exported), "again")
    assert export(target, out) == 0
    again = {line["id"]: line for line in jsonl(latest(out))}
    assert {i: {k: line.get(k) for k in KEPT} for i, line in again.items()} == {
        line["id"]: {k: line.get(k) for k in KEPT} for line in lines}


def _no_doi_rows(app) -> bool:  # type: ignore[no-untyped-def]
    with app.extensions["repository"].db.read() as conn:
        kinds = set(conn.execute(select(outbox.c.kind)).scalars())
    return not kinds & {"register_doi", "hide_doi"}


@pytest.mark.slow
def test_a_second_run_changes_nothing(exported, target, capsys) -> None:
    assert load(target, exported) == 0
    capsys.readouterr()
    assert load(target, os.path.join(exported, folder.MANIFEST)) == 0  # the manifest's path works too
    assert f"loaded 0 records, {len(jsonl(exported))} already there, 0 failed" in capsys.readouterr().out


@pytest.mark.slow
def test_a_wrong_checksum_is_refused_and_nothing_loaded(exported, target, tmp_path, capsys) -> None:
    altered = str(tmp_path / "altered")
    shutil.copytree(exported, altered)
    path = os.path.join(altered, folder.MANIFEST)
    with open(path, "rb") as handle:
        manifest = orjson.loads(handle.read())
    manifest["files"][folder.JSONL]["sha256"] = "0" * 64
    with open(path, "wb") as handle:
        handle.write(orjson.dumps(manifest))
    assert load(target, altered) == 2
    assert "does not match the manifest's SHA-256" in capsys.readouterr().err
    app = create_app(target)
    try:
        assert count(app, records) == 0
    finally:
        app.extensions["repository"].db.engine.dispose()


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["truncated", "no manifest", "not json"])
def test_a_damaged_export_is_refused(exported, target, tmp_path, capsys, damage) -> None:
    broken = str(tmp_path / "broken")
    shutil.copytree(exported, broken)
    if damage == "truncated":
        with open(os.path.join(broken, folder.JSONL), "r+b") as handle:
            handle.truncate(40)
    elif damage == "no manifest":
        os.remove(os.path.join(broken, folder.MANIFEST))
    else:
        with open(os.path.join(broken, folder.MANIFEST), "w") as handle:
            handle.write("{not json")
    assert load(target, broken) == 2
    assert "error:" in capsys.readouterr().err


@pytest.mark.slow
def test_an_instance_holding_other_records_is_refused(exported, settings, capsys) -> None:
    # The source instance itself holds the taken-down record, which the export leaves out.
    assert load(settings, exported) == 2
    assert "not an empty instance" in capsys.readouterr().err
