"""What metadata validation needs from the database-backed vocabularies, and the DOI rules' settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


class MetadataLookups(Protocol):
    """Vocabulary look-ups backed by the database (licenses, grants, communities)."""

    def license_id(self, value: str) -> str | None:
        """The canonical license id for `value` (case-insensitive, through aliases), or None if unknown."""
        ...

    def grant(self, funder_doi: str, code: str) -> dict[str, Any] | None:
        """The grant `{code, title, acronym, program, funder: {doi, name, acronyms}}`, or None if unknown."""
        ...

    def community_exists(self, identifier: str) -> bool:
        """Whether a community with this identifier exists."""
        ...


# DataCite's former test prefix: never an external DOI, whatever SANDBOX_DOI_PREFIX says.
GENERIC_TEST_PREFIX = "10.5072"


@dataclass(frozen=True)
class DoiPolicy:
    """Which client-supplied DOIs a deposit accepts (docs/reference-behaviour.md#doi-rules).

    `prefix` is the prefix of the service's new DOIs (DOI_PREFIX, or SANDBOX_DOI_PREFIX in the sandbox shape);
    `reserved` is the DOI reserved for this deposit, which the client may set; `locked` is a DOI that
    can no longer change (published with the service's DOI, or a new-version draft); DOIs under `test_prefix`
    (SANDBOX_DOI_PREFIX) or the generic test prefix are refused as external DOIs.
    """

    prefix: str = "10.5281"
    reserved: str | None = None
    locked: str | None = None
    test_prefix: str = "10.5072"
