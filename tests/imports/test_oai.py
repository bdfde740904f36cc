"""`repository-admin import oai`: recorded answers of Zenodo and DSpace, served on loopback, become published
metadata-only records with the source's DOIs; a rerun changes nothing; garbage, a page cut short, a repeated token,
duplicates and metadata that fail are reported with the source identifier and the reason while the rest goes on,
and a rerun picks up exactly what is missing."""

from __future__ import annotations

import pytest
from helpers.clock import Clock
from helpers.recorded_source import RecordedSource, fixture, token_of
from sqlalchemy import func, select

from repository.cli import COMMANDS, invoke
from repository.config import Settings
from repository.imports.harvest import Fetcher
from repository.imports.oai import Source, import_oai
from repository.storage.tables.imports import import_sources, imported_records
from repository.storage.tables.outbox import outbox
from repository.storage.tables.records import records

ZENODO = ("zenodo_oai_dc_page1.xml", "zenodo_oai_dc_page2.xml", "zenodo_oai_dc_page3.xml")


def run(settings: Settings, source: RecordedSource, *extra: str, prefix: str = "oai_dc") -> int:
    return invoke(COMMANDS["import"], ["oai", source.url, "--prefix", prefix, "--owner", "harvest@example.org",
                                       "--backoff", "0", "--quiet", *extra], settings)


def count(app, table) -> int:  # type: ignore[no-untyped-def]
    with app.extensions["repository"].db.read() as conn:
        return conn.execute(select(func.count()).select_from(table)).scalar_one()


def test_three_zenodo_pages_become_published_metadata_only_records(app, client, settings, source, capsys) -> None:
    source.chain(*ZENODO)
    assert run(settings, source) == 0
    out = capsys.readouterr().out
    assert "imported 8, skipped 1, failed 0" in out
    assert "skipped: oai:zenodo.org:8433364: deleted at the source" in out
    assert [r["path"] for r in source.received] == ["/oai"] * 3
    assert source.received[1]["resumptionToken"] == token_of(fixture(ZENODO[0]))
    found = client.get("/api/records/", query_string={"q": "PocketCoffea"}).json["hits"]["hits"]
    assert len(found) == 1
    record = found[0]
    assert record["doi"] == "10.5281/zenodo.8435696"  # the source's DOI, kept
    assert record["files"] == [] and record["metadata"]["files"] == {"enabled": False}
    assert record["metadata"]["creators"] == [{"name": "Marchegiani, Matteo"}]
    assert record["metadata"]["access_right"] == "open"
    assert record["metadata"]["license"]["id"] == "cc-by"  # from the legal code URL, through the licenses' aliases
    # Never registered under this service's prefix: no registration queued, the records count as integrated.
    with app.extensions["repository"].db.read() as conn:
        assert not conn.execute(select(outbox.c.id).where(outbox.c.kind == "register_doi")).first()
        assert all(conn.execute(select(records.c.doi_external, records.c.integrated)).all())
    assert "not mapped: oai:zenodo.org:8435696: " in out and "source: PyHEP 2023 Workshop" in out


def test_a_rerun_changes_nothing_and_harvests_from_the_last_harvest(app, settings, source, capsys) -> None:
    source.chain(*ZENODO)
    assert run(settings, source) == 0
    capsys.readouterr()
    assert run(settings, source) == 0
    assert "imported 0, skipped 9, failed 0" in capsys.readouterr().out
    assert count(app, records) == 8 and count(app, imported_records) == 8
    # The second harvest asked for what changed since the first one's answer (its responseDate's day).
    assert source.received[3]["from"] == "2026-08-13"
    with app.extensions["repository"].db.read() as conn:
        assert conn.execute(select(import_sources.c.last_harvest)).scalar() == "2026-08-13"


def test_an_explicit_from_is_sent_and_no_records_match_is_an_empty_harvest(settings, source, capsys) -> None:
    source.answers["first"] = [(422, fixture("zenodo_no_records_match.xml"))]
    assert run(settings, source, "--from", "2030-01-01") == 0
    assert "imported 0, skipped 0, failed 0" in capsys.readouterr().out
    assert source.received[0]["from"] == "2030-01-01"


def test_dublin_core_of_dspace_is_mapped_with_a_report_of_what_is_not(client, settings, source, capsys) -> None:
    source.chain("dspace_helda_oai_dc.xml")
    assert run(settings, source) == 0
    out = capsys.readouterr().out
    assert "not mapped: oai:helda.helsinki.fi:1975/7634: identifier: 1796-6361; relation:" in out
    assert "description: none at the source; the title stands in" in out
    hit = client.get("/api/records/", query_string={"q": "Perunan"}).json["hits"]["hits"][0]
    meta = hit["metadata"]
    assert meta["resource_type"] == {"type": "publication", "subtype": "book", "title": "Book"}
    assert meta["language"] == "fin" and meta["publication_date"] == "2007-01-01"
    link = meta["related_identifiers"][0]
    assert (link["identifier"], link["relation"]) == ("1975/7634", "isIdenticalTo")  # normalised as a Handle
    assert meta["creators"] == [{"name": "Tall, Anna"}]


def test_datacite_answers_are_mapped_and_a_token_the_source_refuses_stops_the_harvest(client, settings, source,
                                                                                     capsys) -> None:
    source.chain("zenodo_datacite_page1.xml", then=(422, fixture("zenodo_bad_resumption_token.xml")))
    assert run(settings, source, prefix="datacite") == 1
    out = capsys.readouterr().out
    assert "imported 48, skipped 0, failed 2" in out  # two of Zenodo's records have a description of one character
    assert "failed: oai:zenodo.org:8436799: metadata.description: Shorter than minimum length 3." in out
    assert "stopped: OAI-PMH error badResumptionToken: The value of the resumptionToken argument is invalid" in out
    hit = client.get("/api/records/", query_string={"q": "flake scar"}).json["hits"]["hits"][0]
    assert hit["doi"] == "10.5281/zenodo.8433301"
    assert hit["metadata"]["creators"][0] == {"name": "Lin, Sam", "orcid": "0000-0001-6834-2646",
                                              "affiliation": "University of Wollongong"}
    assert hit["metadata"]["resource_type"]["type"] == "dataset"
    assert "relatedIdentifier (IsVersionOf): 10.5281/zenodo.8433300" in out


def test_garbage_is_retried_and_then_the_harvest_goes_on(app, settings, source, capsys) -> None:
    source.chain(*ZENODO)
    page = source.answers["first"][0]
    source.answers["first"] = [(200, b"<html><body>502 Bad Gateway</body></html>"), (503, b"busy"), page]
    assert run(settings, source) == 0
    assert "imported 8" in capsys.readouterr().out
    assert len(source.received) == 5  # two failed tries of the first page, then the three pages


def test_backoff_doubles_between_tries_and_gives_up_with_the_reason(app, settings, source) -> None:
    source.answers["first"] = [(200, b"<OAI-PMH>not the namespace</OAI-PMH>")]
    clock = Clock()
    fetcher = Fetcher(source.url, retries=3, backoff=2.0, sleep=clock.advance)
    services = app.extensions["repository"]
    report = import_oai(services.db, settings, 1, Source(source.url, "oai_dc"), fetcher)
    assert clock.offset.total_seconds() == 2 + 4 + 8
    assert len(source.received) == 4
    assert report.stopped == ("an answer that is not OAI-PMH (root element OAI-PMH) for the first page, "
                              "after 4 tries")


def test_a_page_cut_short_stops_the_harvest_and_a_rerun_picks_up_what_is_missing(app, settings, source,
                                                                               capsys) -> None:
    source.chain(*ZENODO)
    second = token_of(fixture(ZENODO[0]))
    assert second is not None
    whole = source.answers[second]
    source.answers[second] = [(200, whole[0][1][: len(whole[0][1]) // 2])]
    assert run(settings, source, "--retries", "1") == 1
    out = capsys.readouterr().out
    assert "imported 3, skipped 0, failed 0" in out
    assert "stopped: an answer that is not XML, or cut short" in out and "after 2 tries" in out
    assert count(app, records) == 3  # the first page's records, whole; nothing of the cut page
    with app.extensions["repository"].db.read() as conn:
        assert conn.execute(select(import_sources.c.last_harvest)).scalar() is None  # not a complete harvest
    source.answers[second] = whole
    assert run(settings, source) == 0
    assert "imported 5, skipped 4, failed 0" in capsys.readouterr().out  # 3 already there, 1 deleted at the source
    assert count(app, records) == 8


def test_a_repeated_token_stops_the_loop_and_duplicates_are_skipped(app, settings, source, capsys) -> None:
    body = fixture(ZENODO[0])
    source.answers["first"] = [(200, body)]
    source.answers[token_of(body) or ""] = [(200, body)]  # the same page under the token it hands out again
    assert run(settings, source) == 1
    out = capsys.readouterr().out
    assert "imported 3, skipped 3, failed 0" in out
    assert "skipped: oai:zenodo.org:8435696: a duplicate: it came earlier in this harvest" in out
    assert "a second time (a loop)" in out
    assert count(app, records) == 3


def test_records_whose_metadata_fail_are_reported_and_the_others_imported(app, make_settings, source,
                                                                         capsys) -> None:
    # An instance whose own prefix is the source's: those DOIs are administrated here, not external ones.
    settings = make_settings(DOI_PREFIX="10.5281")
    source.chain("zenodo_oai_dc_page3.xml")
    assert run(settings, source) == 1
    out = capsys.readouterr().out
    assert "imported 0, skipped 0, failed 3" in out
    assert "failed: oai:zenodo.org:" in out and "metadata.doi: The prefix 10.5281 is administrated locally." in out
    assert count(app, records) == 0 and count(app, imported_records) == 0
    source.chain("dspace_helda_oai_dc.xml")
    assert run(settings, source) == 0  # no DOI of its own: imported


@pytest.mark.parametrize("argv", [["oai", "ftp://example.org/oai", "--prefix", "oai_dc", "--owner", "a@b.org"],
                                  ["oai", "http://127.0.0.1:9/oai", "--prefix", "oai_dc", "--owner", "a@b.org",
                                   "--retries", "-1"]])
def test_bad_arguments_are_refused(settings, argv, capsys) -> None:
    assert invoke(COMMANDS["import"], argv, settings) == 2
    assert "error:" in capsys.readouterr().err


def test_an_unknown_source_is_a_usage_error(settings) -> None:
    with pytest.raises(SystemExit) as exited:
        invoke(COMMANDS["import"], ["nowhere", "x"], settings)
    assert exited.value.code == 2
