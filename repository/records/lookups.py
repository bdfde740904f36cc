"""The vocabulary look-ups deposit validation and the serializers need, backed by the database."""

from __future__ import annotations

import copy
from typing import Any

from sqlalchemy import Connection

from repository.communities import store
from repository.vocabularies import grants, licenses


class DatabaseLookups:
    """Implements `repository.metadata.MetadataLookups` on one connection (answers cached for its lifetime)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self._licenses: dict[str, dict[str, str] | None] = {}
        self._grants: dict[tuple[str, str], dict[str, Any] | None] = {}

    def license(self, value: str) -> dict[str, str] | None:
        """`{id, title, url}` of the license `value` names (any case, any alias), or None."""
        key = value.strip().lower() if isinstance(value, str) else ""
        if key not in self._licenses:
            row = licenses.resolve(self.conn, key)
            self._licenses[key] = None if row is None else {"id": row.id, "title": row.title, "url": row.url}
        return self._licenses[key]

    def license_id(self, value: str) -> str | None:
        """The canonical license id for `value` (case-insensitive, through aliases), or None if unknown."""
        found = self.license(value)
        return found["id"] if found else None

    def grant(self, funder_doi: str, code: str) -> dict[str, Any] | None:
        """The grant `{code, title, acronym, program, funder: {doi, name, acronyms}}`, or None if unknown."""
        # A batch of records (reindex, a search page built from the database) names the same grants again and again.
        key = (funder_doi, code)
        if key not in self._grants:
            row = grants.find(self.conn, funder_doi, code)
            self._grants[key] = None if row is None else grants.grant_json(row)
        found = self._grants[key]
        return None if found is None else copy.deepcopy(found)

    def community_exists(self, identifier: str) -> bool:
        """Whether a community with this identifier exists."""
        return store.exists(self.conn, identifier)
