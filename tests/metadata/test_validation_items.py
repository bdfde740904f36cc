"""Deposit metadata validation of list items: people, identifiers, subjects, places, dates, grants, communities,
licenses and DOIs."""

from __future__ import annotations

from typing import Any

import pytest

from repository.errors import ValidationError
from repository.metadata import DoiPolicy, validate_draft
from repository.vocabularies.terms import CONTRIBUTOR_TYPES, SPEC_RELATION_TYPES


def problems(metadata: Any, lookups: Any, **kwargs: Any) -> dict[str, str]:
    """The `field -> message` of the 400 a draft validation raises."""
    with pytest.raises(ValidationError) as info:
        validate_draft(metadata, lookups, **kwargs)
    return {entry["field"]: entry["message"] for entry in info.value.errors}


# People


def test_creators_are_normalised(lookups) -> None:
    result = validate_draft({"creators": [
        {"name": " Doe, John ", "affiliation": "", "orcid": "https://orcid.org/0000-0002-1825-0097",
         "gnd": "gnd:4079154-3"},
        {"name": "CERN"},
    ]}, lookups)  # fmt: skip
    assert result["creators"] == [
        {"name": "Doe, John", "orcid": "0000-0002-1825-0097", "gnd": "4079154-3"},
        {"name": "CERN"},
    ]


@pytest.mark.parametrize(
    ("person", "field", "message"),
    [({"name": ""}, "name", "Name is required."),
     ({"affiliation": "CERN"}, "name", "Name is required."),
     ({"name": ", John"}, "name", "Name must be in the format 'Family name, Given names'."),
     ({"name": "Doe, John", "orcid": "0000-0002-1825-0098"}, "orcid", "Not a valid ORCID identifier."),
     ({"name": "Doe, John", "gnd": "not-a-gnd"}, "gnd", "Not a valid GND identifier."),
     ({"name": "Doe, John", "givennames": "John"}, "givennames", "Unknown field name.")],
)  # fmt: skip
def test_bad_creators(lookups, person: dict, field: str, message: str) -> None:
    for key in ("creators", "thesis_supervisors"):
        assert problems({key: [person]}, lookups) == {f"metadata.{key}.0.{field}": message}


def test_contributors_need_a_type_from_the_list(lookups) -> None:
    for type_ in CONTRIBUTOR_TYPES:
        assert validate_draft({"contributors": [{"name": "Doe, J", "type": type_}]}, lookups)
    assert problems(
        {"contributors": [{"name": "Doe, J"}, {"name": "Roe, R", "type": "editor"}]}, lookups
    ) == {
        "metadata.contributors.0.type": "Missing data for required field.",
        "metadata.contributors.1.type": "Not a valid choice.",
    }


# Related identifiers and subjects


def test_related_identifiers_are_detected_and_normalised(lookups) -> None:
    result = validate_draft({"related_identifiers": [
        {"identifier": "https://doi.org/10.1234/foo", "relation": "isSupplementTo", "resource_type": "dataset"},
        {"identifier": "0306406152", "relation": "isPartOf", "resource_type": "publication-book"},
        {"identifier": "1310.2590", "relation": "cites"},
        {"identifier": "9780306406157", "relation": "cites", "scheme": "EAN13"},
    ]}, lookups)["related_identifiers"]  # fmt: skip
    assert result == [
        {"identifier": "10.1234/foo", "relation": "isSupplementTo", "resource_type": "dataset", "scheme": "doi"},
        {"identifier": "978-0-306-40615-7", "relation": "isPartOf", "resource_type": "publication-book",
         "scheme": "isbn"},
        {"identifier": "arXiv:1310.2590", "relation": "cites", "scheme": "arxiv"},
        {"identifier": "9780306406157", "relation": "cites", "scheme": "ean13"},
    ]  # fmt: skip


def test_every_relation_of_the_specification_is_accepted_case_sensitively(lookups) -> None:
    items = [{"identifier": "10.1234/x", "relation": relation} for relation in SPEC_RELATION_TYPES]
    assert len(validate_draft({"related_identifiers": items}, lookups)["related_identifiers"]) == 32
    assert problems(
        {"related_identifiers": [{"identifier": "10.1234/x", "relation": "IsCitedBy"}]}, lookups
    ) == {"metadata.related_identifiers.0.relation": "Not a valid choice."}


@pytest.mark.parametrize(
    ("item", "field", "message"),
    [({"relation": "cites"}, "identifier", "Identifier is required."),
     ({"identifier": "10.1234/x"}, "relation", "Missing data for required field."),
     ({"identifier": "just words", "relation": "cites"}, "identifier", "Not a valid persistent identifier."),
     ({"identifier": "10.1234/x", "relation": "cites", "scheme": "isbn"}, "identifier", "Not a valid isbn identifier."),
     ({"identifier": "10.1234/x", "relation": "cites", "resource_type": "publication-novel"}, "resource_type",
      "Not a valid type."),
     ({"identifier": "10.1234/x", "relation": "cites", "type": "doi"}, "type", "Unknown field name.")],
)  # fmt: skip
def test_bad_related_identifiers(lookups, item: dict, field: str, message: str) -> None:
    assert problems({"related_identifiers": [item]}, lookups) == {
        f"metadata.related_identifiers.0.{field}": message
    }


def test_subjects(lookups) -> None:
    result = validate_draft({"subjects": [
        {"term": "Astronomy", "identifier": "http://id.loc.gov/authorities/subjects/sh85009003"},
        {"term": "Physik", "identifier": "4045956-1"},
    ]}, lookups)["subjects"]  # fmt: skip
    assert result == [
        {
            "term": "Astronomy",
            "identifier": "http://id.loc.gov/authorities/subjects/sh85009003",
            "scheme": "url",
        },
        {"term": "Physik", "identifier": "gnd:4045956-1", "scheme": "gnd"},
    ]
    assert problems({"subjects": [{"identifier": "nope"}]}, lookups) == {
        "metadata.subjects.0.term": "Term is required.",
        "metadata.subjects.0.identifier": "Not a valid persistent identifier.",
    }


# Locations and dates


def test_locations(lookups) -> None:
    good = [{"place": "Geneva, Switzerland", "lat": 46.2, "lon": 6.1}, {"place": "Null Island", "lat": 0, "lon": 0},
            {"place": "Somewhere", "description": "unknown point"}]  # fmt: skip
    assert validate_draft({"locations": good}, lookups)["locations"] == [
        {"place": "Geneva, Switzerland", "lat": 46.2, "lon": 6.1}, {"place": "Null Island", "lat": 0.0, "lon": 0.0},
        {"place": "Somewhere", "description": "unknown point"},
    ]  # fmt: skip
    bad = [{"place": "a", "lat": 1}, {"place": "b", "lon": 1}, {"place": "c", "lat": -91, "lon": 181},
           {"lat": 1, "lon": 1}, {"place": "d", "lat": "north", "lon": 1}]  # fmt: skip
    assert problems({"locations": bad}, lookups) == {
        "metadata.locations.0.lon": "There should be both latitude and longitude.",
        "metadata.locations.1.lat": "There should be both latitude and longitude.",
        "metadata.locations.2.lat": "Latitude must be between -90 and 90.",
        "metadata.locations.2.lon": "Longitude must be between -180 and 180.",
        "metadata.locations.3.place": "Place is required.",
        "metadata.locations.4.lat": "Not a valid number.",
    }


def test_dates(lookups) -> None:
    good = [{"start": "2020-01-01", "end": "2020-01-31", "type": "Collected"}, {"end": "2021-01-01", "type": "Valid"},
            {"start": "2022-05-05", "end": "2022-05-05", "type": "Withdrawn", "description": "exact"}]  # fmt: skip
    assert validate_draft({"dates": good}, lookups)["dates"] == good
    bad = [{"start": "2020-01-01"}, {"start": "2020-01-01", "type": "Created"}, {"type": "Valid"},
           {"start": "2020-02-01", "end": "2020-01-01", "type": "Valid"}, {"start": "2020", "type": "Valid"}]  # fmt: skip
    assert problems({"dates": bad}, lookups) == {
        "metadata.dates.0.type": "Missing data for required field.",
        "metadata.dates.1.type": "Not a valid choice.",
        "metadata.dates.2.start": "There must be at least one date: give start, end or both.",
        "metadata.dates.3.end": '"start" date must be before "end" date.',
        "metadata.dates.4.start": "Not a valid date. Use the format YYYY-MM-DD.",
    }


# Grants, communities, licenses


def test_grants(lookups) -> None:
    result = validate_draft({"grants": [
        {"id": "283595"}, {"id": "10.13039/501100000780::283595"}, {"id": "10.13039/100000001::1234567"},
    ]}, lookups)  # fmt: skip
    # A bare id is an EC grant; duplicates collapse; all are stored in the `<funder DOI>::<code>` form.
    assert result["grants"] == [
        {"id": "10.13039/501100000780::283595"},
        {"id": "10.13039/100000001::1234567"},
    ]


def test_bad_grants(lookups) -> None:
    found = problems({"grants": [
        {"id": "999999"}, {"id": "10.13039/501100000001::1"}, {"id": "10.13039/100000001"},
        {"id": "10.13039/100000001::"}, {"id": "10.13039/100000001::42"}, {"id": 5}, {"code": "1"},
    ]}, lookups)  # fmt: skip
    assert found["metadata.grants.0.id"] == "Unknown grant: 10.13039/501100000780::999999."
    assert found["metadata.grants.1.id"].startswith("Not an accepted funder: '10.13039/501100000001'.")
    assert found["metadata.grants.2.id"] == "Not a valid grant id: use '<funder DOI>::<grant code>'."
    assert found["metadata.grants.3.id"] == "Not a valid grant id: the grant code is missing."
    assert found["metadata.grants.4.id"] == "Unknown grant: 10.13039/100000001::42."
    assert found["metadata.grants.5.id"] == "Not a valid string."
    assert found["metadata.grants.6.code"] == "Unknown field name."
    assert found["metadata.grants.6.id"] == "Grant id is required."


def test_grant_rules_are_checked_even_when_other_items_fail(lookups) -> None:
    found = problems({"grants": [{"id": "999999"}], "creators": [{}]}, lookups)
    assert set(found) == {"metadata.grants.0.id", "metadata.creators.0.name"}


def test_communities_must_exist_and_are_stored_sorted_once(lookups) -> None:
    result = validate_draft({"communities": [{"identifier": "zenodo"}, {"identifier": "biosyslit"},
                                             {"identifier": "zenodo"}]}, lookups)  # fmt: skip
    assert result["communities"] == [{"identifier": "biosyslit"}, {"identifier": "zenodo"}]
    assert problems(
        {"communities": [{"identifier": "zenodo"}, {"identifier": "nope"}, {"id": "x"}]}, lookups
    ) == {
        "metadata.communities.1.identifier": "Unknown community: 'nope'.",
        "metadata.communities.2.identifier": "Identifier is required.",
        "metadata.communities.2.id": "Unknown field name.",
    }


@pytest.mark.parametrize(("given", "stored"), [("cc-by", "cc-by-4.0"), ("CC-BY-4.0", "cc-by-4.0"),
                                               ({"id": "MIT"}, "MIT"), ("cc-zero", "cc0-1.0")])  # fmt: skip
def test_licenses_resolve_to_canonical_ids(lookups, given: Any, stored: str) -> None:
    assert validate_draft({"license": given}, lookups) == {"license": stored}


def test_unknown_licenses(lookups) -> None:
    assert problems({"license": "my-own"}, lookups) == {
        "metadata.license": "Not a valid license id: 'my-own'. See /api/licenses/ for the ids."
    }
    assert problems({"license": {"id": "MIT", "title": "x"}}, lookups) == {
        "metadata.license": 'Not a valid license: give an id string or {"id": ...}.'
    }


# DOIs and read-only keys


def test_external_dois_are_normalised(lookups) -> None:
    assert validate_draft({"doi": "https://doi.org/10.1234/foo.bar"}, lookups) == {"doi": "10.1234/foo.bar"}


@pytest.mark.parametrize(
    ("doi", "policy", "message"),
    [("nonsense", DoiPolicy(), "The provided DOI is invalid - it should look similar to '10.1234/foo.bar'."),
     ("10.5281/zenodo.99", DoiPolicy(reserved="10.5281/zenodo.5"), "The prefix 10.5281 is administrated locally."),
     ("10.5072/zenodo.5", DoiPolicy(),
      "The prefix 10.5072 is invalid. The prefix is only used for testing purposes, and no DOIs with this prefix "
      "are attached to any meaningful content."),
     ("10.1234/other", DoiPolicy(locked="10.5281/zenodo.5"), "The DOI cannot be changed.")],
)  # fmt: skip
def test_doi_rules(lookups, doi: str, policy: DoiPolicy, message: str) -> None:
    assert problems({"doi": doi}, lookups, doi_policy=policy) == {"metadata.doi": message}


def test_own_reserved_and_locked_dois_are_accepted(lookups) -> None:
    reserved = DoiPolicy(reserved="10.5281/zenodo.5")
    assert validate_draft({"doi": "10.5281/zenodo.5"}, lookups, doi_policy=reserved) == {
        "doi": "10.5281/zenodo.5"
    }
    locked = DoiPolicy(locked="10.5281/zenodo.5")
    assert validate_draft({"doi": "10.5281/ZENODO.5"}, lookups, doi_policy=locked) == {
        "doi": "10.5281/ZENODO.5"
    }
    sandbox = DoiPolicy(prefix="10.5072", reserved="10.5072/zenodo.7")
    assert validate_draft({"doi": "10.5072/zenodo.7"}, lookups, doi_policy=sandbox) == {
        "doi": "10.5072/zenodo.7"
    }
    assert problems({"doi": "10.5072/zenodo.8"}, lookups, doi_policy=sandbox) == {
        "metadata.doi": "The prefix 10.5072 is administrated locally."
    }


@pytest.mark.parametrize("value", [True, False, {"doi": "10.5281/zenodo.5", "recid": 5}])
def test_prereserve_doi_is_accepted_and_left_to_the_deposit(lookups, value: Any) -> None:
    assert validate_draft({"prereserve_doi": value, "title": "Echo"}, lookups) == {"title": "Echo"}


def test_bad_prereserve_doi(lookups) -> None:
    assert problems({"prereserve_doi": "yes"}, lookups) == {
        "metadata.prereserve_doi": "Must be true, false or the reserved {doi, recid} object."
    }


def test_name_and_identifier_problems_of_one_person_come_together(lookups) -> None:
    assert problems({"creators": [{"name": ",John", "orcid": "x"}]}, lookups) == {
        "metadata.creators.0.name": "Name must be in the format 'Family name, Given names'.",
        "metadata.creators.0.orcid": "Not a valid ORCID identifier.",
    }
