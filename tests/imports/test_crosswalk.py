"""The pieces of the Dublin Core and DataCite mapping that read values (docs/operators/migration.md#what-is-mapped)."""

from __future__ import annotations

import pytest
from helpers.recorded_source import FIXTURES
from lxml import etree

from repository.imports import crosswalk


@pytest.mark.parametrize("given, expected", [
    ("Jane Doe", "Doe, Jane"), ("Doe, Jane", "Doe, Jane"), ("Jane  Q.  Doe", "Doe, Jane Q."),
    ("Meika4", "Meika4"), ("  Tall, Anna ", "Tall, Anna"),
])
def test_names_are_turned_to_family_first(given: str, expected: str) -> None:
    assert crosswalk.person_name(given) == expected


@pytest.mark.parametrize("given, expected", [
    ("2007", "2007-01-01"), ("2023-10", "2023-10-01"), ("2023-10-12", "2023-10-12"),
    ("2023-10-12T14:26:07Z", "2023-10-12"), ("Spring 2007", None), ("", None),
])
def test_dates_are_read_to_their_first_day(given: str, expected: str | None) -> None:
    assert crosswalk.iso_date(given) == expected


@pytest.mark.parametrize("given, expected", [("fi", "fin"), ("eng", "eng"), ("ger", "ger"), ("xx", None),
                                             ("English", None)])
def test_languages_of_two_and_three_letters(given: str, expected: str | None) -> None:
    assert crosswalk.language(given) == expected


def test_types_and_access_rights() -> None:
    assert crosswalk.upload_type(["info:eu-repo/semantics/doctoralThesis"]) == ("publication", "thesis")
    assert crosswalk.upload_type(["Presentation", "Text"]) == ("presentation", None)
    assert crosswalk.upload_type(["NonPeerReviewed"]) is None
    assert crosswalk.access_right("info:eu-repo/semantics/embargoedAccess") == "closed"
    assert crosswalk.access_right("https://creativecommons.org/licenses/by/4.0/") is None


def test_licenses_from_creative_commons_urls_and_ids() -> None:
    known = {"cc-by-nc-4.0": "cc-by-nc-4.0", "mit": "MIT"}.get
    assert crosswalk.license_of("https://creativecommons.org/licenses/by-nc/4.0/legalcode", known) == "cc-by-nc-4.0"
    assert crosswalk.license_of(" mit ", known) == "MIT"
    assert crosswalk.license_of("All rights reserved", known) is None


def test_identifiers_split_into_doi_landing_page_and_the_rest() -> None:
    doi, landing, rest = crosswalk.identifiers(["https://doi.org/10.5281/zenodo.1", "oai:zenodo.org:1",
                                                "https://zenodo.org/records/1", "1796-6361"])
    assert (doi, landing, rest) == ("10.5281/zenodo.1", "https://zenodo.org/records/1", ["oai:zenodo.org:1",
                                                                                          "1796-6361"])


@pytest.mark.parametrize("given, expected", [
    ("Journal (On-line/Unpaginated)", ("publication", "article")), ("Journal (Paginated)", ("publication", "article")),
    ("Book Section", ("publication", "section")), ("Monograph", ("publication", "report")),
    ("Conference or Workshop Item", ("publication", "conferencepaper")), ("Survey data", ("dataset", None)),
    ("info:eu-repo/semantics/article", ("publication", "article")), ("PeerReviewed", None),
    ("Immigration Statistics Finding Aid in Excel Format (.xls)", None), ("Metadata", None),
])
def test_type_names_of_eprints_and_kinds_of_data(given: str, expected: tuple[str, str | None] | None) -> None:
    assert crosswalk.upload_type([given]) == expected


def test_eprints_license_ids() -> None:
    known = {"cc-by-nc-nd": "cc-by-nc-nd", "cc-by": "cc-by"}.get
    assert crosswalk.license_of("cc_by_nc_nd", known) == "cc-by-nc-nd"
    assert crosswalk.license_of(" cc_by ", known) == "cc-by"
    assert crosswalk.license_of("cc_public_domain", known) is None
    assert crosswalk.license_of("all_rights_reserved", known) is None  # not an EPrints Creative Commons id
    assert crosswalk.license_of("https://creativecommons.org/publicdomain/zero/1.0/", {"cc0": "cc-zero"}.get) == (
        "cc-zero")


def test_a_dataverse_datacite_record() -> None:
    # A record of DataverseNO (a Dataverse installation) as a harvester cut it out of its oai_datacite answer
    # (tests/imports/fixtures/SOURCES.md): one record, no answer to serve, so it is read here and not harvested.
    record = etree.parse(FIXTURES / "dataverse_dataverseno_datacite_record.xml").getroot()
    resource = record.find(".//{http://datacite.org/schema/kernel-4}resource")
    assert resource is not None
    mapped, landing = crosswalk.from_datacite(resource, {"cc0": "cc-zero"}.get)
    meta = mapped.metadata
    assert (meta["doi"], meta["title"], meta["version"]) == ("10.18710/41U4VL",
                                                             "TGO Ramfjordmoen Ionosonde Data December 1994", "1.0")
    # An organisation without a nameType keeps its name; persons (Personal, with a family name) are Family, Given.
    assert meta["creators"] == [{"name": "Tromsø Geophysical Observatory",
                                 "affiliation": "UiT The Arctic University of Norway"}]
    assert [(c["name"], c["type"]) for c in meta["contributors"]] == [
        ("Johnsen, Magnar Gulliksen", "ContactPerson"), ("Hall, Chris", "ContactPerson"),
        ("UiT The Arctic University of Norway", "Producer"),
        ("Tromsø Geophysical Observatory, UiT The Arctic University of Norway", "HostingInstitution"),
        ("Tromsø Geophysical Observatory, UiT The Arctic University of Norway", "DataCurator"),
        ("UiT Open Research Data", "Distributor")]
    assert (meta["upload_type"], meta["publication_date"], meta["imprint_publisher"]) == ("dataset", "2019-01-01",
                                                                                          "DataverseNO")
    assert (meta["access_right"], meta["license"]) == ("open", "cc-zero")  # CC0 named by its URI
    assert meta["keywords"][-1] == "SUN-EARTH INTERACTIONS" and len(meta["keywords"]) == 8
    assert meta["description"].startswith("<p>About this dataset: This dataset contains ionosonde data")
    assert landing is None  # Dataverse names no landing page: the DOI resolves to it
    assert mapped.unmapped == ["sizes", "formats", "geoLocations"]
