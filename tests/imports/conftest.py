"""Fixtures of the import tests: a recorded OAI-PMH repository on loopback, and settings whose DOI prefix is not
the recorded repositories' (Zenodo's DOIs are 10.5281, this service's default)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from helpers.recorded_source import RecordedSource, recorded_source

from repository.config import Settings

OWN_PREFIX = "10.80001"


@pytest.fixture
def settings(make_settings) -> Settings:  # type: ignore[no-untyped-def]
    return make_settings(DOI_PREFIX=OWN_PREFIX)


@pytest.fixture
def source() -> Iterator[RecordedSource]:
    with recorded_source() as serving:
        yield serving
