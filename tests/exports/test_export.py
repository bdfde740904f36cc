"""The full public export (`repository-admin export records`, the worker's periodic export): every public record as
the anonymous API answers it, restricted files never, taken-down records not at all, with a manifest whose
checksums hold; written whole or not at all, and pruned to the newest few."""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import os

import orjson
import pytest
from helpers.exports import bundle, export, jsonl, latest
from helpers.xsd import validate

from repository.exports import folder
from repository.exports.periodic import Exporter
from repository.exports.writer import export_records
from repository.search.open import open_from_settings
from serializers import OAI_FORMATS

DATACITE_NS = OAI_FORMATS["registry"].namespace
BROWSER = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"


@pytest.mark.slow
def test_export_holds_what_the_api_answers_for_each_public_record(app, client, settings, corpus, tmp_path) -> None:
    # Counted reads, so that a version's totals differ from its concept's (both are in each record's `stats`).
    services = app.extensions["repository"]
    services.clock = lambda: dt.datetime.now(dt.UTC) - dt.timedelta(hours=2)  # sessions long closed
    for recid in (corpus["open"], corpus["second"]):
        assert client.get(f"/api/records/{recid}", headers={"User-Agent": BROWSER}).status_code == 200
    services.indexer.run_pass()
    out = str(tmp_path / "out")
    assert export(settings, out) == 0
    path = latest(out)
    lines = jsonl(path)
    ids = [line["id"] for line in lines]
    assert ids == sorted(ids)
    assert set(ids) == set(corpus.values()) - {corpus["gone"]}
    for line in lines:
        answer = client.get(f"/api/records/{line['id']}")
        assert answer.status_code == 200
        assert line == answer.json
    by_id = {line["id"]: line for line in lines}
    counted = by_id[corpus["second"]]["stats"]
    assert counted["views"] > counted["version_views"] > 0
    # Files and their links only where anyone may download them.
    for hidden in ("restricted", "closed", "embargoed"):
        assert "files" not in by_id[corpus[hidden]] and "bucket" not in by_id[corpus[hidden]]["links"]
    assert [f["key"] for f in by_id[corpus["open"]]["files"]] == ["data.csv"]
    assert by_id[corpus["second"]]["conceptrecid"] == by_id[corpus["open"]]["conceptrecid"]
    # The DataCite bundle: one resource per record, in the same order, each with the record's DOI.
    resources = bundle(path)
    assert resources.tag == "records"
    dois = [r.findtext(f"{{{DATACITE_NS}}}identifier") for r in resources]
    assert dois == [line["doi"] for line in lines]
    for resource in resources:
        validate(resource, "datacite4")  # each against the official DataCite schema


@pytest.mark.slow
def test_manifest_counts_and_checksums_hold(settings, corpus, tmp_path) -> None:
    out = str(tmp_path / "out")
    assert export(settings, out) == 0
    path = latest(out)
    with open(os.path.join(path, folder.MANIFEST), "rb") as handle:
        manifest = orjson.loads(handle.read())
    assert manifest["records"] == len(corpus) - 1
    assert manifest["export_format"] == 1 and manifest["id"] == os.path.basename(path)
    assert set(manifest["files"]) == {folder.JSONL, folder.DATACITE}
    for name, about in manifest["files"].items():
        with open(os.path.join(path, name), "rb") as handle:
            data = handle.read()
        assert about["sha256"] == hashlib.sha256(data).hexdigest() and about["size"] == len(data)
        assert about["records"] == manifest["records"]
        gzip.decompress(data)  # whole gzip members
    assert manifest["files"][folder.JSONL]["format"] == "v1"
    assert manifest["files"][folder.DATACITE]["schema"].endswith(".xsd")


def test_an_export_of_an_empty_instance_is_empty_but_whole(settings, tmp_path) -> None:
    out = str(tmp_path / "out")
    assert export(settings, out) == 0
    path = latest(out)
    assert jsonl(path) == [] and len(bundle(path)) == 0


@pytest.mark.slow
def test_a_failure_mid_export_leaves_no_listed_export_and_keeps_the_previous(app, settings, corpus,
                                                                               tmp_path) -> None:
    out = str(tmp_path / "out")
    services = app.extensions["repository"]
    search = services.search
    first = export_records(services.db, settings, search, out, now=dt.datetime(2026, 1, 1))

    def crash(count: int) -> None:
        if count >= 2:
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        export_records(services.db, settings, search, out, now=dt.datetime(2026, 1, 2), batch=1, progress=crash)
    assert folder.names(out) == [first["id"]]
    assert [entry for entry in os.listdir(out) if entry.startswith(folder.PARTIAL)] == []


def test_old_exports_are_pruned_to_the_newest(app, settings, tmp_path) -> None:
    out = str(tmp_path / "out")
    services = app.extensions["repository"]
    for day in range(1, 5):
        export_records(services.db, settings, services.search, out, now=dt.datetime(2026, 1, day), keep=2)
    assert folder.names(out) == ["20260104T000000Z", "20260103T000000Z"]
    assert sorted(os.listdir(out)) == [".lock", "20260103T000000Z", "20260104T000000Z"]


def test_the_command_refuses_a_bad_keep(settings, tmp_path, capsys) -> None:
    assert export(settings, str(tmp_path / "out"), "--keep", "0") == 2
    assert "--keep must be at least 1" in capsys.readouterr().err
    assert not os.path.exists(tmp_path / "out")


def test_the_worker_exports_when_due_by_the_clock(make_settings, tmp_path) -> None:
    from repository.services import build_services

    settings = make_settings(EXPORT_INTERVAL=3600, EXPORT_KEEP=2)
    services = build_services(settings)
    try:
        now = {"value": dt.datetime(2026, 3, 1, 12)}
        exporter = Exporter(services.db, settings, open_from_settings(settings), lambda: now["value"])
        assert exporter() == 0 and folder.names(settings.EXPORTS_ROOT) == ["20260301T120000Z"]
        now["value"] += dt.timedelta(minutes=30)
        assert exporter() == 0 and len(folder.names(settings.EXPORTS_ROOT)) == 1  # not due yet
        now["value"] += dt.timedelta(minutes=31)
        exporter()
        assert folder.names(settings.EXPORTS_ROOT) == ["20260301T130100Z", "20260301T120000Z"]
        # The worker's pass runs it too.
        services.clock = lambda: now["value"] + dt.timedelta(hours=2)
        services.indexer.run_pass()
        assert folder.names(settings.EXPORTS_ROOT)[0] == "20260301T150100Z"
        assert len(folder.names(settings.EXPORTS_ROOT)) == 2
    finally:
        services.db.engine.dispose()
