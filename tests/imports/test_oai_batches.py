"""`repository-admin import oai` writes its records in batches (docs/operators/migration.md#bulk-writes): what a
batch writes is what the deposit state machine writes record by record (the same rows, ids in source order, audit
entries, outbox rows and moderation), a record only the state machine can make (no DOI of its own) is made by it
in its place, and a DOI given twice within a batch fails the second record as it would one by one."""

from __future__ import annotations

import gc
import json
import re
from typing import Any

import pytest
from helpers.recorded_source import OAI, fixture
from lxml import etree
from sqlalchemy import select

from repository.accounts.audit import Actor
from repository.accounts.tokens import create_user
from repository.cli import COMMANDS, invoke
from repository.config import Settings
from repository.imports.harvest import Fetcher
from repository.imports.oai import Source, import_oai
from repository.records import screening
from repository.storage.tables.audit import audit_log
from repository.storage.tables.deposits import deposits
from repository.storage.tables.imports import imported_records
from repository.storage.tables.outbox import outbox
from repository.storage.tables.records import concepts, records

from .conftest import OWN_PREFIX

DATACITE = "zenodo_datacite_page1.xml"  # 50 records, 2 of which fail the publish rules
COPY = ".copy"


def run(settings: Settings, url: str, prefix: str = "datacite") -> int:
    return invoke(COMMANDS["import"], ["oai", url, "--prefix", prefix, "--owner", "harvest@example.org",
                                       "--backoff", "0", "--quiet"], settings)


def copied(body: bytes) -> bytes:
    """The same page under other identifiers and DOIs (each DOI with a suffix of its own)."""
    return re.sub(rb'(identifierType="DOI">[^<]+)<', rb"\1" + COPY.encode() + b"<", body.replace(
        b"<identifier>oai:zenodo.org:", b"<identifier>oai:zenodo.org:copy-"))


def one_page(*parts: tuple[str, list[int]]) -> bytes:
    """One page without a token holding the records at the given positions of the recorded pages, in order."""
    root = etree.fromstring(fixture(parts[0][0]))
    listing = root.find(f"{OAI}ListRecords")
    assert listing is not None
    for child in list(listing):
        listing.remove(child)
    for name, positions in parts:
        found = etree.fromstring(fixture(name)).findall(f"{OAI}ListRecords/{OAI}record")
        for position in positions:
            listing.append(found[position])
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


def written(db: Any, ids: list[int]) -> list[dict[str, Any]]:
    """What the import wrote for each record, without what differs between two imports of the same metadata
    (ids, buckets, times; the DOI's suffix)."""
    out = []
    with db.read() as conn:
        for recid in ids:
            record = dict(conn.execute(select(records).where(records.c.id == recid)).mappings().one())
            deposit = dict(conn.execute(select(deposits).where(deposits.c.id == recid)).mappings().one())
            concept = dict(conn.execute(select(concepts).where(concepts.c.id == record["conceptrecid"]))
                           .mappings().one())
            assert record["conceptrecid"] == recid - 1  # the concept's id taken first, then the record's
            audit = [(row.action, json.loads(row.detail)) for row in conn.execute(
                select(audit_log).where(audit_log.c.target_id == str(recid)))]
            queued = sorted(conn.execute(select(outbox.c.kind).where(outbox.c.recid == recid)).scalars())
            for row in (record, deposit, concept):
                for key in ("id", "conceptrecid", "bucket_id", "created", "updated", "modified"):
                    row.pop(key, None)
            out.append(json.loads(json.dumps({"record": record, "deposit": deposit, "concept": concept,
                                              "audit": audit, "outbox": queued}, default=str)
                                  .replace(COPY, "")))
    return out


def imported_ids(db: Any, copies: bool) -> list[int]:
    copy = imported_records.c.source_id.like("oai:zenodo.org:copy-%")
    with db.read() as conn:
        return sorted(conn.execute(select(imported_records.c.record_id).where(copy if copies else ~copy)).scalars())


@pytest.mark.slow  # 0.4 s and more of work
def test_a_batch_writes_what_the_deposit_state_machine_writes(app, make_settings, source, capsys) -> None:
    # An order-dependent moderation rule that holds nothing here makes the import go record by record.
    one_by_one = make_settings(DOI_PREFIX=OWN_PREFIX, MODERATION_BURST_RECORDS=1000)
    body = fixture(DATACITE)
    source.answers["first"] = [(200, body)]
    assert run(one_by_one, source.url) == 1
    first = capsys.readouterr().out
    source.answers["first"] = [(200, copied(body))]
    assert run(make_settings(DOI_PREFIX=OWN_PREFIX), source.url) == 1
    second = capsys.readouterr().out
    assert "imported 48, skipped 0, failed 2" in first and "imported 48, skipped 0, failed 2" in second
    # The same reasons for the same records.
    failures = [line for line in first.splitlines() if line.startswith("failed:")]
    assert [line.replace("oai:zenodo.org:", "oai:zenodo.org:copy-") for line in failures] == [
        line for line in second.splitlines() if line.startswith("failed:")]
    db = app.extensions["repository"].db
    before, after = imported_ids(db, False), imported_ids(db, True)
    assert len(before) == len(after) == 48 and max(before) < min(after)
    assert written(db, after) == written(db, before)


@pytest.mark.slow  # 0.4 s and more of work
def test_records_only_the_state_machine_makes_keep_their_place(app, settings, source, client, capsys) -> None:
    # A DSpace record with no DOI between Zenodo's: it gets a DOI of this service, registered; the others keep theirs.
    source.answers["first"] = [(200, one_page(("zenodo_oai_dc_page1.xml", [0, 1]),
                                              ("dspace_helda_oai_dc.xml", [0]), ("zenodo_oai_dc_page1.xml", [2])))]
    assert run(settings, source.url, "oai_dc") == 0
    assert "imported 4, skipped 0, failed 0" in capsys.readouterr().out
    db = app.extensions["repository"].db
    with db.read() as conn:
        rows = conn.execute(select(imported_records.c.source_id, records.c.id, records.c.doi, records.c.doi_external)
                            .join(records, records.c.id == imported_records.c.record_id)
                            .order_by(records.c.id)).all()
        registered = list(conn.execute(select(outbox.c.recid).where(outbox.c.kind == "register_doi")).scalars())
    assert [row.source_id.split(":")[1] for row in rows] == ["zenodo.org", "zenodo.org", "helda.helsinki.fi",
                                                              "zenodo.org"]  # source order
    assert [row.doi_external for row in rows] == [True, True, False, True]
    assert rows[2].doi.startswith(f"{OWN_PREFIX}/") and rows[2].doi.endswith(f".{rows[2].id}")
    assert registered == [rows[2].id]
    for row in rows:
        assert client.get(f"/api/records/{row.id}").status_code == 200
    assert client.get("/api/records/", query_string={"size": 10}).json["hits"]["total"] == 4


def test_a_doi_given_twice_in_a_batch_fails_the_second_record(app, settings, source, capsys) -> None:
    body = one_page(("zenodo_oai_dc_page1.xml", [0, 1]))
    twice = body.replace(b"<identifier>oai:zenodo.org:8435639</identifier>",
                         b"<identifier>oai:zenodo.org:copy</identifier>").replace(
        b"10.5281/zenodo.8435639", b"10.5281/zenodo.8435696")
    source.answers["first"] = [(200, twice)]
    assert run(settings, source.url, "oai_dc") == 1
    out = capsys.readouterr().out
    assert "imported 1, skipped 0, failed 1" in out
    assert "failed: oai:zenodo.org:copy: metadata.doi: DOI already exists in this repository." in out
    source.answers["first"] = [(200, twice)]
    assert run(settings, source.url, "oai_dc") == 1  # a rerun: the first is there, the second fails again
    assert "imported 0, skipped 1, failed 1" in capsys.readouterr().out


def test_moderation_holds_records_of_a_batch_as_it_holds_a_publish(app, settings, source, client, capsys) -> None:
    db = app.extensions["repository"].db
    with db.write() as conn:
        screening.ban(conn, Actor.operator(), "casino.example")
    body = one_page(("zenodo_oai_dc_page1.xml", [0, 1, 2])).replace(  # the first record links the banned domain
        b"<dc:creator>", b"<dc:description>Win at https://casino.example/win</dc:description><dc:creator>", 1)
    source.answers["first"] = [(200, body)]
    assert run(settings, source.url, "oai_dc") == 0
    assert "imported 3, skipped 0, failed 0" in capsys.readouterr().out
    with db.read() as conn:
        assert list(conn.execute(select(records.c.review).order_by(records.c.id)).scalars()) == ["pending", None, None]
    assert client.get("/api/records/").json["hits"]["total"] == 2


def test_batches_smaller_than_a_page_import_the_same_records_in_source_order(app, settings, source) -> None:
    source.chain("zenodo_oai_dc_page1.xml", "zenodo_oai_dc_page2.xml", "zenodo_oai_dc_page3.xml")
    services = app.extensions["repository"]
    with services.db.write() as conn:
        owner = create_user(conn, "harvest@example.org")
    done: list[int] = []
    thresholds = gc.get_threshold()
    report = import_oai(services.db, settings, owner, Source(source.url, "oai_dc"), Fetcher(source.url, backoff=0),
                        progress=done.append, batch=2)
    assert gc.get_threshold() == thresholds  # the collector as it was before the import
    assert (len(report.imported), len(report.skipped), len(report.failed)) == (8, 1, 0)
    assert done == sorted(done) and done[-1] == 9  # after each batch
    ids = [recid for _source_id, recid in report.imported]
    assert ids == sorted(ids)
    with services.db.read() as conn:
        noted = dict(conn.execute(select(imported_records.c.source_id, imported_records.c.record_id)).all())
    assert noted == dict(report.imported)
