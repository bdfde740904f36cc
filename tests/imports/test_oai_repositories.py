"""`repository-admin import oai` from the recorded answers of a Dataverse and of two EPrints repositories
(tests/imports/fixtures/SOURCES.md), served on loopback: every record is checked field by field against the
answer it came from, and the report names what the mapping left out (docs/operators/migration.md#what-is-mapped)."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.recorded_source import OAI, RecordedSource, fixture, token_of
from lxml import etree
from sqlalchemy import select

from repository.cli import COMMANDS, invoke
from repository.config import Settings
from repository.storage.tables.imports import imported_records

DC = "{http://purl.org/dc/elements/1.1/}"
DATAVERSE = ("dataverse_scholarsportal_oai_dc_page1.xml", "dataverse_scholarsportal_oai_dc_page2.xml")
COGPRINTS = "eprints_cogprints_oai_dc.xml"
LSHTM = "eprints_lshtm_oai_dc.xml"


def run(settings: Settings, source: RecordedSource) -> int:
    return invoke(COMMANDS["import"], ["oai", source.url, "--prefix", "oai_dc", "--owner", "harvest@example.org",
                                       "--backoff", "0", "--quiet"], settings)


def source_records(*names: str) -> dict[str, etree._Element]:
    """The Dublin Core of each record (not deleted) of the recorded answers `names`, by source identifier."""
    found = {}
    for name in names:
        for record in etree.fromstring(fixture(name)).iter(f"{OAI}record"):
            header = record.find(f"{OAI}header")
            assert header is not None
            if header.get("status") != "deleted":
                found[header.findtext(f"{OAI}identifier", "")] = record.find(f"{OAI}metadata")[0]  # type: ignore[index]
    return found


def imported(app, client) -> dict[str, dict[str, Any]]:  # type: ignore[no-untyped-def]
    """Each imported record as the API's search shows it, by its source identifier."""
    with app.extensions["repository"].db.read() as conn:
        ledger = dict(conn.execute(select(imported_records.c.record_id, imported_records.c.source_id)).all())
    hits = client.get("/api/records/", query_string={"size": 100}).json["hits"]["hits"]
    assert sorted(hit["id"] for hit in hits) == sorted(ledger)
    return {ledger[hit["id"]]: hit for hit in hits}


def texts(dc: etree._Element, name: str) -> list[str]:
    return [" ".join((el.text or "").split()) for el in dc.iter(f"{DC}{name}")]


def report_of(out: str, source_id: str) -> str:
    """What the report says the mapping left out of `source_id` (items joined by `; `)."""
    line = next(line for line in out.splitlines() if line.startswith(f"not mapped: {source_id}: "))
    return line.removeprefix(f"not mapped: {source_id}: ")


def assert_dublin_core_kept(record: dict[str, Any], dc: etree._Element) -> None:
    """What every Dublin Core record keeps whatever its source: title, creators, keywords, publisher, date."""
    meta = record["metadata"]
    assert meta["title"] == texts(dc, "title")[0]
    assert [c["name"] for c in meta["creators"]] == list(dict.fromkeys(texts(dc, "creator")))
    assert meta.get("keywords", []) == list(dict.fromkeys(texts(dc, "subject")))
    assert meta.get("imprint", {}).get("publisher") == next(iter(texts(dc, "publisher")), None)
    if dates := texts(dc, "date"):
        assert meta["publication_date"].startswith(dates[0])
    assert record["files"] == [] and meta["access_right"] == "open"


def test_a_dataverse_harvest_of_two_pages(app, client, settings, source, capsys) -> None:
    source.chain(*DATAVERSE)
    assert run(settings, source) == 0
    out = capsys.readouterr().out
    assert "imported 4, skipped 15, failed 0" in out  # fifteen datasets deleted at the source
    assert "skipped: hdl:10864/10820: deleted at the source" in out
    assert source.received[1]["resumptionToken"] == token_of(fixture(DATAVERSE[0]))
    dcs, records = source_records(*DATAVERSE), imported(app, client)
    assert sorted(records) == sorted(dcs) == ["hdl:10864/10535", "hdl:10864/10936", "hdl:10864/10949",
                                              "hdl:10864/10952"]
    for source_id, record in records.items():
        assert_dublin_core_kept(record, dcs[source_id])
        landing = record["metadata"]["related_identifiers"][0]
        assert landing == {"identifier": source_id.removeprefix("hdl:"), "relation": "isIdenticalTo", "scheme": "handle"}
        # The description without the citation Dataverse adds as a second one; the citation is reported.
        description, citation = texts(dcs[source_id], "description")
        assert record["metadata"]["description"] == description
        assert f"citation: {citation.removeprefix('Citation: ')}" in report_of(out, source_id)
    survey = records["hdl:10864/10949"]["metadata"]
    assert survey["resource_type"]["type"] == "dataset"  # dc:type "Survey data", a kind of data
    assert survey["keywords"] == ["labour", "work", "employment"]
    assert "; ".join([
        "relation: Statistics Canada. Labour Force Information (71-001-X)",
        "relation: Statistics Canada. CANSIM Table 282-0088. Labour force survey estimates (LFS), employment by "
        "North American Industry Classification System (NAICS), seasonally adjusted and unadjusted",
        "relation: Employment Insurance Statistics - Monthly (EIS); Survey of Employment, Payrolls and Hours (SEPH); "
        "Job Vacancy Statistics (JVS); Job Vacancy and Wage Survey (JVWS)",
        "coverage: Time Period Covered: 2015-03"]) in report_of(out, "hdl:10864/10949")
    finding_aid = report_of(out, "hdl:10864/10952")
    assert "type: Immigration Statistics Finding Aid in Excel Format (.xls)" in finding_aid
    assert "type: none the mapping knows; taken as other" in finding_aid
    assert records["hdl:10864/10952"]["metadata"]["resource_type"]["type"] == "other"


@pytest.mark.slow  # 0.4 s and more of work
def test_eprints_records_link_their_abstract_page_and_report_the_citation(app, client, settings, source,
                                                                          capsys) -> None:
    source.chain(COGPRINTS)
    assert run(settings, source) == 0
    out = capsys.readouterr().out
    assert "imported 45, skipped 0, failed 0" in out
    dcs, records = source_records(COGPRINTS), imported(app, client)
    assert sorted(records) == sorted(dcs)
    for source_id, record in records.items():
        assert_dublin_core_kept(record, dcs[source_id])
        # The abstract page (a relation) is where the record is held, not the first file named as an identifier.
        page = texts(dcs[source_id], "relation")[0]
        assert record["metadata"]["related_identifiers"][0] == {"identifier": page, "relation": "isIdenticalTo",
                                                                "scheme": "url"}
        files = [i for i in texts(dcs[source_id], "identifier") if i.startswith(page)]
        assert report_of(out, source_id).count("(a file of the record at the source)") == min(len(files), 1)
        assert all(f"identifier: {f}" in report_of(out, source_id) for f in files)
    article = records["oai:cogprints.org:9686"]["metadata"]
    assert article["title"] == ("Two families with quadrupedalism, mental retardation, no speech, and infantile "
                                "hypotonia (Uner Tan Syndrome Type-II); a novel theory for the evolutionary "
                                "emergence of human bipedalism")  # one line, as EPrints' line breaks are not
    assert article["resource_type"] == {"type": "publication", "subtype": "article", "title": "Journal article"}
    assert article["contributors"] == [{"name": "Williams, Dr. J. Michael", "type": "Other"}]
    assert article["publication_date"] == "2014-01-01"
    assert report_of(out, "oai:cogprints.org:9686") == "; ".join([
        "type: PeerReviewed (refereed or not: no place in the deposit metadata)",
        "citation: Tan, Prof. Dr. Uner (2014) Two families with quadrupedalism, mental retardation, no speech, and "
        "infantile hypotonia (Uner Tan Syndrome Type-II); a novel theory for the evolutionary emergence of human "
        "bipedalism. [Journal (On-line/Unpaginated)]",
        "identifier: http://cogprints.org/9686/1/UTS%20ARTICLE%20and%20NEW%20THEORY%20on%20EVOLUTION%20OF"
        "%20BIPEDALISM%202014.pdf (a file of the record at the source)",
        "format: application/pdf",
        "license: none at the source the service knows; the default license applies"])
    assert records["oai:cogprints.org:9751"]["metadata"]["resource_type"]["subtype"] == "preprint"
    assert records["oai:cogprints.org:9725"]["metadata"]["resource_type"]["subtype"] == "conferencepaper"
    assert records["oai:cogprints.org:9748"]["metadata"]["resource_type"]["type"] == "other"  # EPrints' "Other"


@pytest.mark.slow  # 0.4 s and more of work
def test_eprints_licenses_and_the_published_versions_doi(app, client, settings, source, capsys) -> None:
    source.chain(LSHTM)
    assert run(settings, source) == 0
    out = capsys.readouterr().out
    dcs, records = source_records(LSHTM), imported(app, client)
    assert f"imported {len(dcs)}, skipped 1, failed 0" in out and len(dcs) == 97
    licenses = {"cc_by": "cc-by", "cc_by_nc": "cc-by-nc", "cc_by_nc_nd": "cc-by-nc-nd"}
    for source_id, record in records.items():
        assert_dublin_core_kept(record, dcs[source_id])
        meta, rights = record["metadata"], texts(dcs[source_id], "rights")
        assert meta.get("license", {}).get("id") == (licenses[rights[0]] if rights else "cc-by")
        dois = [r for r in texts(dcs[source_id], "relation") if r.startswith("10.")]
        linked = [r["identifier"] for r in meta["related_identifiers"]
                  if r["scheme"] == "doi" and r["relation"] == "isIdenticalTo"]
        assert linked == dois  # the same work under its DOI, never this record's DOI
        assert record["doi"] not in dois
    article = records["oai:researchonline.lshtm.ac.uk:407"]["metadata"]
    assert article["resource_type"]["subtype"] == "article" and article["language"] == "eng"
    assert article["license"]["id"] == "cc-by-nc-nd"
    assert article["related_identifiers"][:2] == [
        {"identifier": "http://researchonline.lshtm.ac.uk/407/", "relation": "isIdenticalTo", "scheme": "url"},
        {"identifier": "10.1517/17425255.2011.598506", "relation": "isIdenticalTo", "scheme": "doi"}]
    books = [r for r in records.values() if r["metadata"]["resource_type"].get("subtype") == "book"]
    assert len(books) == 6  # dc:type Book
    assert "citation: Chico, RM <http://researchonline.lshtm.ac.uk/view/creators/105455.html>;" in out
