"""The people a depositor has named before: creators, contributors and supervisors of their own depositions, with
the ORCID iD and affiliation they were given, suggested when they type a name in the deposit form
(docs/api/vocabularies.md#creators)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from sqlalchemy import Connection, select

from repository.storage.tables.deposits import deposits

LOOKED_AT = 500  # the owner's depositions read, latest first: the people named lately are the likely ones
PERSON_KEYS = ("name", "affiliation", "affiliation_id", "orcid", "gnd")


def _people(metadata: Any) -> list[dict[str, str]]:
    if not isinstance(metadata, dict):
        return []
    found = []
    for key in ("creators", "contributors", "thesis_supervisors"):
        for person in metadata.get(key) or []:
            if isinstance(person, dict) and isinstance(person.get("name"), str) and person["name"].strip():
                found.append({k: str(person[k]) for k in PERSON_KEYS if person.get(k)})
    return found


def known_people(conn: Connection, owner_id: int, q: str | None, limit: int) -> list[dict[str, str]]:
    """The people of the owner's depositions whose name, ORCID iD or affiliation contain every word of `q`, the most
    often named first; one entry per name and ORCID iD (the latest affiliation given)."""
    rows = conn.execute(select(deposits.c.metadata).where(deposits.c.owner_id == owner_id)
                        .order_by(deposits.c.modified.desc(), deposits.c.id.desc()).limit(LOOKED_AT)).scalars()
    words = (q or "").lower().split()
    counts: Counter[tuple[str, str]] = Counter()
    latest: dict[tuple[str, str], dict[str, str]] = {}
    for metadata in rows:
        for person in _people(metadata):
            text = " ".join(person.values()).lower()
            if all(word in text for word in words):
                key = (person["name"].strip().lower(), person.get("orcid", ""))
                counts[key] += 1
                latest.setdefault(key, person)
    return [latest[key] for key, _ in counts.most_common(limit)]
