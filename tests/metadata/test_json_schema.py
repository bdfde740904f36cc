"""The JSON Schema derived from the marshmallow schemas agrees with the validator."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from repository.errors import ValidationError
from repository.metadata import validate_draft, validate_for_publish
from repository.metadata.jsonschema import deposit_metadata_json_schema
from repository.metadata.schemas import METADATA_KEYS

BASE: dict[str, Any] = {
    "upload_type": "publication",
    "publication_type": "article",
    "title": "Sensor readings",
    "creators": [{"name": "Doe, John", "affiliation": "CERN", "orcid": "0000-0002-1825-0097"}],
    "description": "<p>Readings.</p>",
}

DROP = object()  # a change that removes the key

# (name, changes to BASE, valid for publishing, valid as a draft)
SAMPLES: list[tuple[str, dict[str, Any], bool, bool]] = [
    ("complete", {}, True, True),
    ("empty", dict.fromkeys(BASE, DROP), False, True),
    ("only a type", {"title": DROP, "creators": DROP, "description": DROP}, False, True),
    ("null title", {"title": None}, False, True),
    ("null creators and type", {"creators": None, "upload_type": None}, False, True),
    ("nulls", {"notes": None, "doi": None, "keywords": None}, True, True),
    (
        "everything",
        {
            "license": "cc-by",
            "access_right": "embargoed",
            "embargo_date": "2030-01-01",
            "keywords": ["a"],
            "language": "eng",
            "version": "1.0",
            "notes": "n",
            "method": "m",
            "references": ["r"],
            "prereserve_doi": True,
            "doi": "10.1234/abc",
            "grants": [{"id": "283595"}],
            "communities": [{"identifier": "zenodo"}],
            "journal_title": "J",
            "conference_title": "C",
            "conference_dates": "1-2 May",
            "conference_place": "Bern, Switzerland",
            "conference_url": "https://c.org",
            "imprint_publisher": "P",
            "partof_title": "T",
            "thesis_university": "U",
            "thesis_supervisors": [{"name": "Roe, R"}],
            "contributors": [{"name": "Poe, P", "type": "Editor"}],
            "related_identifiers": [
                {"identifier": "10.1234/x", "relation": "cites", "resource_type": "dataset"}
            ],
            "subjects": [{"term": "t", "identifier": "https://example.org/t"}],
            "locations": [{"place": "Geneva", "lat": 46.2, "lon": 6.1}, {"place": "Somewhere"}],
            "dates": [{"start": "2020-01-01", "type": "Collected"}, {"end": "2020-01-01", "type": "Valid"}],
            "publication_date": "2020-01-01",
        },
        True,
        True,
    ),  # fmt: skip
    ("license as object", {"license": {"id": "MIT"}}, True, True),
    ("prereserved object echoed", {"prereserve_doi": {"doi": "10.5281/zenodo.1", "recid": 1}}, True, True),
    ("unknown top-level key", {"bogus": 1}, False, False),
    ("unknown nested key", {"creators": [{"name": "Doe, J", "familyname": "Doe"}]}, False, False),
    ("bad upload type", {"upload_type": "book"}, False, False),
    ("bad subtype", {"publication_type": "novel"}, False, False),
    ("missing subtype", {"publication_type": DROP}, False, True),
    ("null subtype", {"publication_type": None}, False, True),
    ("missing image subtype", {"upload_type": "image", "publication_type": DROP}, False, True),
    ("subtype of another type", {"upload_type": "software"}, True, True),
    ("short title", {"title": "ab"}, False, False),
    ("title not a string", {"title": 5}, False, False),
    ("too long", {"version": "v" * 10_001}, False, False),
    ("no creators", {"creators": []}, False, True),
    ("creator without name", {"creators": [{"affiliation": "CERN"}]}, False, False),
    ("creator name without family part", {"creators": [{"name": ", John"}]}, False, False),
    ("organisation as creator", {"creators": [{"name": "CERN"}]}, True, True),
    ("contributor without type", {"contributors": [{"name": "Doe, J"}]}, False, False),
    ("bad contributor type", {"contributors": [{"name": "Doe, J", "type": "editor"}]}, False, False),
    ("bad access right", {"access_right": "public"}, False, False),
    ("restricted without conditions", {"access_right": "restricted"}, False, True),
    ("restricted with conditions", {"access_right": "restricted", "access_conditions": "Ask"}, True, True),
    ("conference dates alone", {"conference_dates": "May"}, False, False),
    ("conference place alone", {"conference_place": "Bern, Switzerland"}, False, False),
    (
        "conference dates with a null title",
        {"conference_dates": "May", "conference_title": None},
        False,
        False,
    ),
    ("conference dates with an acronym", {"conference_dates": "May", "conference_acronym": "C"}, True, True),
    ("custom keywords", {"custom": {"dwc:genus": ["Felis"], "dwc:family": ["Felidae", "Canidae"]}}, True, True),
    (
        "custom relationship",
        {"custom": {"obo:RO_0002453": [{"subject": ["Felis catus"], "object": ["Ctenocephalides felis"]}]}},
        True,
        True,
    ),
    ("custom null term", {"custom": {"dwc:genus": None}}, True, True),
    ("custom unknown term", {"custom": {"dwc:color": ["red"]}}, False, False),
    ("custom value not a list", {"custom": {"dwc:genus": "Felis"}}, False, False),
    ("custom value not a string", {"custom": {"dwc:genus": [1]}}, False, False),
    ("custom empty list", {"custom": {"dwc:genus": []}}, False, False),
    ("custom relationship without object", {"custom": {"obo:RO_0002453": [{"subject": ["a"]}]}}, False, False),
    ("custom relationship as string", {"custom": {"obo:RO_0002453": ["a:b"]}}, False, False),
    ("custom keyword as object", {"custom": {"dwc:genus": [{"subject": ["a"], "object": ["b"]}]}}, False, False),
    ("custom not an object", {"custom": ["dwc:genus"]}, False, False),
    ("null conference place", {"conference_place": None}, True, True),
    (
        "restricted with null conditions",
        {"access_right": "restricted", "access_conditions": None},
        False,
        True,
    ),
    ("conference place with acronym", {"conference_place": "Bern", "conference_acronym": "C"}, True, True),
    (
        "bad relation case",
        {"related_identifiers": [{"identifier": "10.1/x", "relation": "Cites"}]},
        False,
        False,
    ),
    ("relation missing", {"related_identifiers": [{"identifier": "10.1/x"}]}, False, False),
    ("keywords not a list", {"keywords": "a, b"}, False, False),
    ("keyword not a string", {"keywords": [1]}, False, False),
    ("latitude without longitude", {"locations": [{"place": "x", "lat": 1}]}, False, False),
    ("latitude out of range", {"locations": [{"place": "x", "lat": 91, "lon": 1}]}, False, False),
    ("latitude as a string", {"locations": [{"place": "x", "lat": "1", "lon": 1}]}, False, False),
    ("location without place", {"locations": [{"lat": 1, "lon": 1}]}, False, False),
    ("date without start or end", {"dates": [{"type": "Valid"}]}, False, False),
    ("date without type", {"dates": [{"start": "2020-01-01"}]}, False, False),
    ("bad date type", {"dates": [{"start": "2020-01-01", "type": "Created"}]}, False, False),
    ("date not ISO", {"publication_date": "1 May 2020"}, False, False),
    ("grant without id", {"grants": [{"code": "1"}]}, False, False),
    ("community as string", {"communities": ["zenodo"]}, False, False),
    ("prereserve as string", {"prereserve_doi": "yes"}, False, False),
    ("license with extra key", {"license": {"id": "MIT", "url": "x"}}, False, False),
    ("conference url not a url", {"conference_url": "nope"}, False, False),
]


def _sample(changes: dict[str, Any]) -> dict[str, Any]:
    merged = {**BASE, **changes}
    return {key: value for key, value in merged.items() if value is not DROP}


def _service_accepts(validate: Any, metadata: dict, lookups: Any) -> bool:
    try:
        validate(metadata, lookups)
    except ValidationError:
        return False
    return True


@pytest.mark.slow  # 0.4 s and more of work
@pytest.mark.parametrize(
    ("name", "changes", "publishable", "draftable"), SAMPLES, ids=[s[0] for s in SAMPLES]
)
def test_schema_and_validator_agree(
    lookups, name: str, changes: dict, publishable: bool, draftable: bool
) -> None:
    metadata = _sample(changes)
    publish_schema = jsonschema.Draft202012Validator(deposit_metadata_json_schema())
    draft_schema = jsonschema.Draft202012Validator(deposit_metadata_json_schema(publish=False))
    assert _service_accepts(validate_for_publish, metadata, lookups) is publishable
    assert publish_schema.is_valid(metadata) is publishable
    assert _service_accepts(validate_draft, metadata, lookups) is draftable
    assert draft_schema.is_valid(metadata) is draftable


def test_schema_is_valid_json_schema_and_covers_every_key() -> None:
    schema = deposit_metadata_json_schema(schema_id="https://example.org/schemas/deposit-metadata.json")
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$id"] == "https://example.org/schemas/deposit-metadata.json"
    assert list(schema["properties"]) == list(METADATA_KEYS)
    assert schema["additionalProperties"] is False
    assert "allOf" not in deposit_metadata_json_schema(publish=False)
