"""Registry shape, OAI prefixes, JSON shapes, CSL keys and citation styles."""

from __future__ import annotations

import orjson
import pytest
from lxml import etree

from repository.errors import library_errors
from serializers import OAI_FORMATS, REGISTRY, RenderContext, by_media_type, oai_format
from serializers.errors import UnusableParameter
from serializers.jsonformats import render_v1_search

SPEC_METADATA_KEYS = set(
    "upload_type publication_type image_type publication_date title creators description access_right license "
    "embargo_date access_conditions doi prereserve_doi keywords notes related_identifiers contributors references "
    "communities grants journal_title journal_volume journal_issue journal_pages conference_title conference_acronym "
    "conference_dates conference_place conference_url conference_session conference_session_part imprint_publisher "
    "imprint_isbn imprint_place partof_title partof_pages thesis_supervisors thesis_university subjects version "
    "language locations dates method".split()
)


def test_media_types_are_unique_and_resolve():
    seen = [media for s in REGISTRY.values() for media in s.media_types]
    assert len(seen) == len(set(seen))
    for serializer in REGISTRY.values():
        for media in serializer.media_types:
            assert by_media_type(media.upper()) is serializer
    assert by_media_type("text/html") is None


@pytest.mark.parametrize(
    ("prefix", "canonical"),
    [("oai_datacite", "oai_registry"), ("oai_datacite3", "oai_registry3"), ("oai_datacite4", "oai_registry4"),
     ("datacite", "registry"), ("datacite3", "registry3"), ("datacite4", "registry"), ("marcxml", "marc21"),
     ("oai_dc", "oai_dc"), ("marc21", "marc21")],
)
def test_oai_prefix_aliases(prefix, canonical):
    assert oai_format(prefix) is OAI_FORMATS[canonical]
    assert oai_format("nope") is None


def test_oai_registry_wrapper(records, ctx):
    element = oai_format("oai_registry").element(records["dataset"], ctx)
    ns = {"w": "http://schema.datacite.org/oai/oai-1.0/", "d": "http://datacite.org/schema/kernel-4"}
    assert element.findtext("w:schemaVersion", namespaces=ns) == "4.5"
    assert element.findtext("w:datacentreSymbol", namespaces=ns) == "REPO.TEST"
    assert element.findtext("w:payload/d:resource/d:identifier", namespaces=ns) == records["dataset"]["doi"]
    three = oai_format("oai_registry3").element(records["dataset"], ctx)
    assert three.findtext("w:schemaVersion", namespaces=ns) == "3.1"


def test_every_format_but_v1_has_a_page_form(records, ctx):
    page = [records[name] for name in ("article", "patent", "dataset", "software")]  # one each format describes
    for serializer in REGISTRY.values():
        if serializer.name == "v1":
            assert serializer.render_page is None
            continue
        assert serializer.render_page(page, ctx)
        assert serializer.render_page([], ctx) is not None


def test_v1_drops_file_ids_and_keeps_the_rest(records, ctx):
    record = records["article"]
    body = orjson.loads(REGISTRY["v1"].render(record, ctx))
    assert all("id" not in f for f in body["files"])
    assert body["metadata"] == record["metadata"] and body["id"] == 1001
    assert "id" in record["files"][0], "the input must not be changed"
    envelope = orjson.loads(render_v1_search([record], 7, {"self": "x"}, {}))
    assert envelope["hits"]["total"] == 7 and "id" not in envelope["hits"]["hits"][0]["files"][0]


def test_legacy_shape(records, ctx):
    body = orjson.loads(REGISTRY["json"].render(records["article"], ctx))
    assert body["state"] == "done" and body["submitted"] is True and body["record_id"] == 1001
    assert body["owner"] == 7 and body["doi_url"] == "https://doi.org/10.5281/repo.1001"
    item = body["files"][0]
    assert item["id"] == records["article"]["files"][0]["id"]
    assert item["checksum"] == "5d41402abc4b2a76b9719d911017c592" and item["filename"] == "paper.pdf"
    assert item["links"]["self"].endswith(f"/api/deposit/depositions/1001/files/{item['id']}")
    md = body["metadata"]
    assert set(md) <= SPEC_METADATA_KEYS
    assert md["upload_type"] == "publication" and md["publication_type"] == "article"
    assert md["license"] == "CC-BY-4.0" and md["journal_title"] == "Journal of Reproducible Results"
    assert md["grants"][0] == {"id": "10.13039/501100000780::654321"}
    assert md["communities"] == [{"identifier": "open-science"}, {"identifier": "physics"}]
    assert all(r["relation"] != "isVersionOf" for r in md["related_identifiers"])
    page = orjson.loads(REGISTRY["json"].render_page(list(records.values()), ctx))
    assert isinstance(page, list) and len(page) == len(records)


def test_csl_uses_hyphenated_keys(records, ctx):
    for name in ("article", "section", "conferencepaper", "book"):
        item = orjson.loads(REGISTRY["csl"].render(records[name], ctx))
        assert not [key for key in item if "_" in key], name
    item = orjson.loads(REGISTRY["csl"].render(records["article"], ctx))
    assert item["container-title"] == "Journal of Reproducible Results"
    assert item["issued"] == {"date-parts": [[2024, 2, 29]]} and item["type"] == "article-journal"


def test_citation_styles_and_errors(records, ctx):
    apa = REGISTRY["citation"].render(records["article"], ctx).decode()
    assert apa.startswith("Müller-Lüdenscheidt, Z. Å.") and "https://doi.org/10.5281/repo.1001" in apa
    ieee = REGISTRY["citation"].render(records["article"], RenderContext(style="ieee")).decode()
    assert ieee != apa and ieee.startswith("[1]")
    harvard = RenderContext(style="harvard-cite-them-right")
    english = REGISTRY["citation"].render(records["article"], harvard).decode()
    german = REGISTRY["citation"].render(records["article"], RenderContext(style=harvard.style, locale="de-DE"))
    assert "Available at" in english and "Available at" not in german.decode()
    with pytest.raises(UnusableParameter, match="no-such-style") as info:
        REGISTRY["citation"].render(records["article"], RenderContext(style="no-such-style"))
    assert (info.value.field, info.value.detail) == ("style", "Unknown style.")
    error = library_errors()[UnusableParameter](info.value)  # how the API answers it
    assert error.status == 400 and error.body()["errors"] == [{"field": "style", "message": "Unknown style."}]
    with pytest.raises(UnusableParameter, match="xx-YY") as info:
        REGISTRY["citation"].render(records["article"], RenderContext(locale="xx-YY"))
    assert info.value.field == "locale"


def test_jsonld_types(records, ctx):
    types = {n: orjson.loads(REGISTRY["jsonld"].render(records[n], ctx))["@type"] for n in records}
    assert types["dataset"] == "Dataset" and types["software"] == "SoftwareSourceCode"
    assert types["article"] == "ScholarlyArticle" and types["photo"] == "Photograph"
    dataset = orjson.loads(REGISTRY["jsonld"].render(records["dataset"], ctx))
    assert dataset["distribution"][0]["contentUrl"] == records["dataset"]["files"][0]["links"]["self"]


def test_external_doi_and_closed_access(records, ctx):
    ns = {"d": "http://datacite.org/schema/kernel-4"}
    section = etree.fromstring(REGISTRY["datacite"].render(records["section"], ctx))
    assert section.findtext("d:identifier", namespaces=ns) == "10.1000/external.chapter.7"
    assert section.findtext("d:publisher", namespaces=ns) == "Springer"
    photo = etree.fromstring(REGISTRY["datacite"].render(records["photo"], ctx))
    rights = [r.get("rightsURI") for r in photo.iterfind("d:rightsList/d:rights", namespaces=ns)]
    assert rights == ["info:eu-repo/semantics/closedAccess"]
    thesis = etree.fromstring(REGISTRY["datacite"].render(records["thesis"], ctx))
    dates = {d.get("dateType"): d.text for d in thesis.iterfind("d:dates/d:date", namespaces=ns)}
    assert dates["Available"] == "2027-01-01" and dates["Accepted"] == "2022-10-01"


def test_fixtures_cover_every_upload_type_and_field(records):
    kinds = {(r["metadata"]["resource_type"]["type"], r["metadata"]["resource_type"].get("subtype"))
             for r in records.values()}
    assert {k for k, _ in kinds} == set(
        "publication poster presentation dataset image video software lesson physicalobject other".split())
    subtypes = {s for _, s in kinds if s}
    assert {"patent", "thesis", "book", "section", "conferencepaper", "article", "photo", "figure"} <= subtypes
    used = {key for r in records.values() for key in r["metadata"]}
    assert set(
        "title publication_date description resource_type access_right access_right_category license embargo_date "
        "access_conditions doi creators contributors thesis keywords subjects communities grants journal meeting "
        "imprint part_of related_identifiers relations references notes method version language dates "
        "locations".split()
    ) <= used
