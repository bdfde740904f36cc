"""Who deposited the records naming a person (docs/operators/administration.md#users): accounts keep no names, so
the administration's user search also finds the owners of public records whose creators carry the name or the
ORCID iD searched for, through the search engine's `creators.name` and `creators.orcid` fields."""

from __future__ import annotations

import re

from sqlalchemy import Connection, select

from repository.records.known_creators import records_matching
from repository.search.backend import SearchReader
from repository.storage.tables.records import records

ORCID = re.compile(r"\d{4}-\d{4}-\d{4}-\d{3}[\dX]")
LIMIT = 100  # records read: the owners of the first hundred, best matches first


def owners_of_creator(conn: Connection, search: SearchReader, text: str) -> list[int]:
    """The owners of public records whose creators match `text` (a name, as a phrase, or an ORCID iD)."""
    words = " ".join(re.sub(r'["\\]', " ", text).split())
    if len(words) < 2:
        return []
    field = "creators.orcid" if ORCID.fullmatch(words) else "creators.name"
    ids = [hit["id"] for hit in records_matching(search, f'{field}:"{words}"', LIMIT) if isinstance(hit.get("id"), int)]
    if not ids:
        return []
    return sorted(set(conn.execute(select(records.c.owner_id).where(records.c.id.in_(ids))).scalars()))
