"""The people the repository's public records name as creators, suggested in the deposit form beside those the
depositor named before (docs/api/vocabularies.md#creators): found through the search engine's `creators.name`, each
with the ORCID iD and affiliation a record gives them."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from werkzeug.datastructures import MultiDict

from repository.errors import ApiError
from repository.search.backend import SearchReader
from repository.search.params import parse_search_args

RECORDS_READ = 20  # the best-matching records whose creators are looked at
PERSON_KEYS = ("name", "affiliation", "affiliation_id", "orcid", "gnd")
_WORD = re.compile(r"\w+")


def public_creators(search: SearchReader, q: str, limit: int) -> list[dict[str, str]]:
    """Creators of public records whose name holds every word of `q` (the last one as a prefix, as it is being
    typed); one entry per name and ORCID iD, in the order the records came."""
    words = [word.lower() for word in _WORD.findall(q)]
    if not words or len("".join(words)) < 2:
        return []
    query = " AND ".join([*words[:-1], words[-1] + "*"])
    found: dict[tuple[str, str], dict[str, str]] = {}
    for hit in records_matching(search, f"creators.name:({query})", RECORDS_READ):
        for person in (hit.get("metadata") or {}).get("creators") or []:
            if _named(person, words):
                entry = {key: str(person[key]) for key in PERSON_KEYS if person.get(key)}
                found.setdefault((entry["name"].lower(), entry.get("orcid", "")), entry)
    return list(found.values())[:limit]


def records_matching(search: SearchReader, q: str, size: int) -> list[dict[str, Any]]:
    """The `size` best public records for query `q`, without facets; none when the query language refuses `q`."""
    try:
        req = parse_search_args(MultiDict({"q": q, "size": str(size)}))
    except ApiError:
        return []
    return search.search(dataclasses.replace(req, facets=())).hits


def _named(person: Any, words: list[str]) -> bool:
    if not isinstance(person, dict) or not isinstance(person.get("name"), str):
        return False
    name_words = [word.lower() for word in _WORD.findall(person["name"])]
    return all(any(w == word for w in name_words) for word in words[:-1]) and any(
        w.startswith(words[-1]) for w in name_words)
