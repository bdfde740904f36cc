"""Choosing a serializer from Accept (q-values, wildcards) and ?format= (media type or short name)."""

from __future__ import annotations

import pytest

from repository.errors import library_errors
from serializers import DEFAULT, REGISTRY, SEARCH_FORMATS, negotiate, parse_accept
from serializers.errors import NoRepresentation

ALL = list(REGISTRY.values())


def pick(accept=None, fmt=None, available=ALL):
    return negotiate(accept, fmt, available, DEFAULT).name


@pytest.mark.parametrize("accept", [None, "", "*/*", "application/*", "*/*;q=0.8", "*"])
def test_missing_or_wildcard_accept_gives_default(accept):
    assert pick(accept) == "v1"


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        ("application/x-bibtex", "bibtex"),
        ("application/marcxml+xml", "marcxml"),
        ("application/x-registry+xml", "datacite"),
        ("application/x-datacite+xml", "datacite"),
        ("application/vnd.datacite.datacite+xml", "datacite"),
        ("application/x-datacite-v41+xml", "datacite"),
        ("application/x-dc+xml", "dc"),
        ("application/vnd.citationstyles.csl+json", "csl"),
        ("application/ld+json", "jsonld"),
        ("text/x-bibliography", "citation"),
        ("application/json", "json"),
        ("Application/JSON; charset=utf-8", "json"),
        ("application/vnd.service.v1+json", "v1"),
        ("application/vnd.zenodo.v1+json", "v1"),
    ],
)
def test_accept_selects_media_type_or_alias(accept, expected):
    assert pick(accept) == expected


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        ("application/json;q=0.5, application/x-bibtex;q=0.9", "bibtex"),
        ("application/x-bibtex;q=0.9, application/json", "json"),
        ("application/marcxml+xml;q=0.2, */*;q=0.1", "marcxml"),
        ("application/x-bibtex;q=0, */*", "v1"),
        ("text/html, application/x-dc+xml;q=0.3", "dc"),
        ("application/x-bibtex;q=oops", "bibtex"),
        ("text/html, */*;q=0.1", "v1"),
    ],
)
def test_quality_values(accept, expected):
    assert pick(accept) == expected


def test_type_wildcard_picks_a_matching_format():
    assert pick("text/*") in {"bibtex", "citation"}


@pytest.mark.parametrize("accept", ["text/html", "application/pdf", "application/x-bibtex;q=0"])
def test_nothing_fits_is_406_listing_media_types(accept):
    with pytest.raises(NoRepresentation) as info:
        pick(accept)
    error = library_errors()[NoRepresentation](info.value)  # how the API answers it
    assert error.status == 406
    for serializer in ALL:
        assert serializer.mimetype in error.message
    assert error.body()["errors"] == [{"message": info.value.detail}]


@pytest.mark.parametrize("name", ["bibtex", "marcxml", "datacite", "dc", "csl", "jsonld", "json", "v1", "citation"])
def test_format_short_names(name):
    assert pick(fmt=name) == name


def test_format_media_type_wins_over_accept():
    assert pick("application/x-bibtex", "application/x-dc+xml") == "dc"
    assert pick("application/x-bibtex", "application/x-datacite+xml") == "datacite"


def test_unknown_format_is_406():
    with pytest.raises(NoRepresentation):
        pick(fmt="pdf")


def test_format_outside_available_is_406():
    subset = [REGISTRY["v1"], REGISTRY["json"]]
    with pytest.raises(NoRepresentation) as info:
        pick(fmt="bibtex", available=subset)
    assert "application/x-bibtex" not in info.value.message
    assert pick("application/json", available=subset) == "json"


def test_parse_accept_orders_by_quality_then_specificity():
    assert parse_accept("*/*;q=0.5, text/*;q=0.5, text/plain;q=0.5, a/b") == [
        ("a/b", 1.0), ("text/plain", 0.5), ("text/*", 0.5), ("*/*", 0.5)
    ]


def test_every_format_is_offered_on_search():
    assert {s.name for s in SEARCH_FORMATS} == set(REGISTRY)


@pytest.mark.parametrize(("accept", "expected"), [
    ('application/ld+json; profile="https://w3id.org/ro/crate/1.1"', "rocrate"),
    ("application/ld+json;profile=http://mlcommons.org/croissant/1.0;q=0.9", "croissant"),
    ('application/ld+json; profile="https://w3id.org/codemeta/3.0"', "codemeta"),
    ('application/ld+json; profile="https://schema.org/"', "jsonld"),  # the schema.org JSON-LD's own profile
    ('application/ld+json; profile="https://example.org/unknown"', "jsonld"),  # no format follows it: bare type
    ("application/ld+json", "jsonld"),
    ("application/x-cff+yaml", "cff"),
    ("application/x-cff", "cff"),
])
def test_a_json_ld_profile_picks_its_format(accept, expected):
    assert pick(accept) == expected
