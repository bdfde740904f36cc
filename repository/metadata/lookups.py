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


@dataclass(frozen=True)
class DoiPolicy:
    """Which client-supplied DOIs a deposit accepts (reference §5.8).

    `prefix` is the service's own DOI prefix (10.5281 in production, 10.5072 in the sandbox shape);
    `reserved` is the DOI reserved for this deposit, which the client may set; `locked` is a DOI that
    can no longer change (published with the service's DOI, or a new-version draft).
    """

    prefix: str = "10.5281"
    reserved: str | None = None
    locked: str | None = None
    test_prefix: str = "10.5072"
