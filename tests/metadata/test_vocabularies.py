"""Static vocabularies: resource types, controlled terms, languages and persistent identifiers."""

from __future__ import annotations

import pytest

from repository.errors import ValidationError
from repository.metadata import MetadataLookups, to_record_metadata, validate_draft
from repository.vocabularies import identifiers, languages, resource_types, terms
from serializers.vocabulary import TYPES

# The deposit vocabulary as the specification lists it (service-spec.md, deposit metadata), in its order.
SPEC_UPLOAD_TYPES = ("publication", "poster", "presentation", "dataset", "image", "video", "software", "lesson",
                     "physicalobject", "other")  # fmt: skip
SPEC_PUBLICATION_TYPES = (
    "annotationcollection", "book", "section", "conferencepaper", "datamanagementplan", "article", "patent",
    "preprint", "deliverable", "milestone", "proposal", "report", "softwaredocumentation", "taxonomictreatment",
    "technicalnote", "thesis", "workingpaper", "other",
)  # fmt: skip
SPEC_IMAGE_TYPES = ("figure", "plot", "drawing", "diagram", "photo", "other")
SPEC_TYPE_IDS = (*SPEC_UPLOAD_TYPES, *(f"publication-{sub}" for sub in SPEC_PUBLICATION_TYPES),
                 *(f"image-{sub}" for sub in SPEC_IMAGE_TYPES))  # fmt: skip


def test_upload_types_and_subtypes_follow_the_specification() -> None:
    assert resource_types.UPLOAD_TYPES == SPEC_UPLOAD_TYPES
    assert resource_types.PUBLICATION_TYPES == SPEC_PUBLICATION_TYPES
    assert resource_types.IMAGE_TYPES == SPEC_IMAGE_TYPES


def test_every_upload_type_and_subtype_has_a_row_and_no_row_is_outside_them() -> None:
    missing = [type_id for type_id in SPEC_TYPE_IDS if type_id not in TYPES]
    assert not missing, f"no row in serializers.vocabulary for {missing}"
    assert sorted(TYPES) == sorted(SPEC_TYPE_IDS)


@pytest.mark.parametrize("type_id", SPEC_TYPE_IDS)
def test_each_type_validates_and_becomes_its_rows_resource_type(lookups: MetadataLookups, type_id: str) -> None:
    type_, _, subtype = type_id.partition("-")
    if type_ in resource_types.SUBTYPE_FIELD and not subtype:
        return  # a bare publication or image is a row (OAI set, related identifier type) but no deposit type
    metadata = {"upload_type": type_} | ({resource_types.SUBTYPE_FIELD[type_]: subtype} if subtype else {})
    record = to_record_metadata(validate_draft(metadata, lookups), lookups)
    row = TYPES[type_id]
    assert record["resource_type"] == {"type": row.type, "title": row.title} | (
        {"subtype": subtype} if subtype else {}
    )


@pytest.mark.parametrize(
    "metadata",
    [{"upload_type": "workflow"}, {"upload_type": "publication", "publication_type": "peerreview"},
     {"upload_type": "image", "image_type": "article"}],
)  # fmt: skip
def test_types_outside_the_specification_are_refused(lookups: MetadataLookups, metadata: dict) -> None:
    with pytest.raises(ValidationError):
        validate_draft(metadata, lookups)


@pytest.mark.parametrize(
    ("type_", "subtype", "title"),
    [("publication", "article", "Journal article"), ("publication", "section", "Book section"),
     ("publication", "deliverable", "Project deliverable"), ("video", None, "Video/Audio"),
     ("image", "photo", "Photo"), ("dataset", None, "Dataset")],
)  # fmt: skip
def test_titles(type_: str, subtype: str | None, title: str) -> None:
    entry = resource_types.get_resource_type(type_, subtype)
    assert entry is not None and entry.title == title


def test_each_type_carries_its_mappings() -> None:
    article = resource_types.parse_resource_type_id("publication-article")
    assert article is not None
    assert (article.csl, article.bibtex, article.eurepo, article.datacite) == (
        "article-journal", ("article",), "article", "JournalArticle",
    )  # fmt: skip
    software = resource_types.get_resource_type("software")
    assert software is not None and software.schema_org == "SoftwareSourceCode"
    for entry in resource_types.RESOURCE_TYPES.values():
        assert entry.title and entry.datacite and entry.csl and entry.schema_org and entry.eurepo and entry.marc_leader


def test_deposit_resource_type_uses_the_subtype_field_of_the_type() -> None:
    found = resource_types.deposit_resource_type({"upload_type": "image", "image_type": "plot"})
    assert found is not None and found.id == "image-plot"
    assert (
        resource_types.deposit_resource_type({"upload_type": "poster", "image_type": "plot"}).id == "poster"
    )  # type: ignore[union-attr]
    assert resource_types.deposit_resource_type({}) is None
    assert resource_types.parse_resource_type_id("publication-nonsense") is None


def test_terms() -> None:
    assert len(terms.SPEC_RELATION_TYPES) == 32 and "isOriginalFormof" in terms.RELATION_TYPES
    assert {"hasMetadata", "isMetadataFor", "isVariantFormOf"} <= set(terms.RELATION_TYPES)
    assert "IsCitedBy" not in terms.RELATION_TYPES
    assert len(terms.CONTRIBUTOR_TYPES) == 22 and "Funder" in terms.CONTRIBUTOR_TYPES
    assert terms.DATE_TYPES == ("Collected", "Valid", "Withdrawn")
    assert len(terms.FUNDER_DOIS) == 17 and terms.EC_FUNDER_DOI in terms.FUNDER_DOIS
    assert terms.ACCESS_RIGHT_CATEGORY["embargoed"] == "warning"


@pytest.mark.parametrize(
    ("code", "stored", "alpha3", "alpha2"),
    [("eng", "eng", "eng", "en"), ("ger", "ger", "deu", "de"), ("deu", "deu", "deu", "de"),
     ("fra", "fra", "fra", "fr"), ("fre", "fre", "fra", "fr"), ("ENG", "eng", "eng", "en"),
     ("gsw", "gsw", "gsw", None), ("afa", "afa", "afa", None)],
)  # fmt: skip
def test_language_codes(code: str, stored: str, alpha3: str, alpha2: str | None) -> None:
    assert languages.normalize_language(code) == stored
    assert languages.language_alpha3(code) == alpha3
    assert languages.language_alpha2(code) == alpha2


@pytest.mark.parametrize("code", ["en", "english", "xyz", "", "e1g", "engl"])
def test_bad_language_codes(code: str) -> None:
    assert languages.normalize_language(code) is None


@pytest.mark.parametrize(
    ("value", "scheme", "normalized"),
    [
        ("10.1234/foo.bar", "doi", "10.1234/foo.bar"),
        ("https://doi.org/10.1234/foo.bar", "doi", "10.1234/foo.bar"),
        ("doi:10.1234/foo.bar", "doi", "10.1234/foo.bar"),
        ("hdl:2027/mdp.39015062510296", "handle", "2027/mdp.39015062510296"),
        ("https://hdl.handle.net/2027/mdp.39015062510296", "handle", "2027/mdp.39015062510296"),
        ("ark:/13030/tf5p30086k", "ark", "ark:/13030/tf5p30086k"),
        ("http://purl.org/dc/terms/title", "purl", "http://purl.org/dc/terms/title"),
        ("03178471", "issn", "0317-8471"),
        ("0306406152", "isbn", "978-0-306-40615-7"),
        ("9780306406157", "isbn", "978-0-306-40615-7"),
        ("PMID:12082125", "pmid", "12082125"),
        ("PMC1234567", "pmcid", "PMC1234567"),
        ("2011ApJS..192...18K", "ads", "2011ApJS..192...18K"),
        ("1310.2590", "arxiv", "arXiv:1310.2590"),
        ("arXiv:1310.2590", "arxiv", "arXiv:1310.2590"),
        ("urn:lsid:ubio.org:namebank:11815", "lsid", "urn:lsid:ubio.org:namebank:11815"),
        ("4006381333931", "ean13", "4006381333931"),
        ("A02-2009-00000001-4", "istc", "A02-2009-00000001-4"),
        ("urn:nbn:de:101:1-201102033592", "urn", "urn:nbn:de:101:1-201102033592"),
        ("https://example.org/data.csv", "url", "https://example.org/data.csv"),
    ],
)
def test_identifier_detection_and_normalisation(value: str, scheme: str, normalized: str) -> None:
    assert identifiers.detect_scheme(value) == scheme
    assert identifiers.normalize_identifier(value, scheme) == normalized


def test_identifiers_outside_the_listed_kinds_are_not_detected() -> None:
    assert identifiers.detect_scheme("not an identifier") is None
    assert identifiers.detect_scheme("") is None
    assert identifiers.detect_scheme("4079154-3") is None  # a GND id: only accepted for subjects
    assert identifiers.detect_scheme("4079154-3", identifiers.SUBJECT_SCHEMES) == "gnd"


def test_orcid_gnd_and_doi_checks() -> None:
    assert identifiers.normalize_orcid("https://orcid.org/0000-0002-1825-0097") == "0000-0002-1825-0097"
    assert identifiers.normalize_orcid("0000000218250097") == "0000-0002-1825-0097"
    assert identifiers.normalize_orcid("0000-0002-1825-0098") is None  # bad checksum
    assert identifiers.normalize_gnd("gnd:4079154-3") == "4079154-3"
    assert identifiers.normalize_gnd("4079154-3", prefixed=True) == "gnd:4079154-3"
    assert identifiers.normalize_gnd("nonsense") is None
    assert identifiers.normalize_doi("https://doi.org/10.5281/zenodo.1") == "10.5281/zenodo.1"
    assert identifiers.normalize_doi("10.5281") is None
    assert identifiers.doi_prefix("10.5281/zenodo.1") == "10.5281"
    assert identifiers.identifier_url("10.1234/x", "doi") == "https://doi.org/10.1234/x"
