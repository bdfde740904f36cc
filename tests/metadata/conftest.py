"""Fixtures for metadata tests: an in-memory stand-in for the database-backed vocabularies."""

from __future__ import annotations

from typing import Any

import pytest

from repository.metadata import MetadataLookups

EC = "10.13039/501100000780"
NSF = "10.13039/100000001"


class InMemoryLookups:
    """Licenses, grants and communities held in dicts; implements `MetadataLookups`."""

    def __init__(self) -> None:
        self.licenses = {"cc-by-4.0": "cc-by-4.0", "cc-by": "cc-by-4.0", "cc0-1.0": "cc0-1.0",
                         "cc-zero": "cc0-1.0", "mit": "MIT"}  # fmt: skip
        self.grants: dict[tuple[str, str], dict[str, Any]] = {
            (EC, "283595"): {"code": "283595", "title": "OpenAIREplus", "acronym": "OPENAIREPLUS", "program": "FP7",
                             "funder": {"doi": EC, "name": "European Commission", "acronyms": ["EC"]}},
            (NSF, "1234567"): {"code": "1234567", "title": "A study", "acronym": "", "program": "",
                               "funder": {"doi": NSF, "name": "National Science Foundation", "acronyms": ["NSF"]}},
        }  # fmt: skip
        self.communities = {"zenodo", "ecfunded", "biosyslit"}
        self.grant_calls: list[tuple[str, str]] = []

    def license_id(self, value: str) -> str | None:
        return self.licenses.get(value.lower())

    def grant(self, funder_doi: str, code: str) -> dict[str, Any] | None:
        self.grant_calls.append((funder_doi, code))
        return self.grants.get((funder_doi, code))

    def community_exists(self, identifier: str) -> bool:
        return identifier in self.communities


@pytest.fixture
def lookups() -> MetadataLookups:
    """Vocabulary look-ups with a few licenses, two grants and three communities."""
    return InMemoryLookups()


def make_metadata(**overrides: Any) -> dict[str, Any]:
    """Complete, publishable deposit metadata; `overrides` replace keys (None removes one)."""
    metadata: dict[str, Any] = {
        "upload_type": "publication",
        "publication_type": "article",
        "title": "Sensor readings of 2021",
        "creators": [{"name": "Doe, John", "affiliation": "CERN"}],
        "description": "<p>Readings of the sensors.</p>",
    }
    metadata.update(overrides)
    return {key: value for key, value in metadata.items() if value is not None}


@pytest.fixture(name="make_metadata")
def make_metadata_fixture():  # type: ignore[no-untyped-def]
    """The `make_metadata` builder."""
    return make_metadata
