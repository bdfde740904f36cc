"""Deposit metadata (the flat deposit field names) -> record metadata (the v1 shape of docs/reference-behaviour.md#record-json)."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from repository.metadata.lookups import MetadataLookups
from repository.metadata.rules import ACCESS_RIGHT_KEYS
from repository.vocabularies.grant_ids import parse_grant_id
from repository.vocabularies.resource_types import deposit_resource_type
from repository.vocabularies.terms import (
    ACCESS_RIGHT_CATEGORY,
    ALTERNATE_IDENTIFIER_RELATION,
    DEFAULT_ACCESS_RIGHT,
)

# Flat deposit keys folded into one record object each: record key -> (record subkey, deposit key).
GROUPS: dict[str, tuple[tuple[str, str], ...]] = {
    "journal": (("title", "journal_title"), ("volume", "journal_volume"), ("issue", "journal_issue"),
                ("pages", "journal_pages")),
    "meeting": (("title", "conference_title"), ("acronym", "conference_acronym"), ("dates", "conference_dates"),
                ("place", "conference_place"), ("url", "conference_url"), ("session", "conference_session"),
                ("session_part", "conference_session_part")),
    "imprint": (("publisher", "imprint_publisher"), ("place", "imprint_place"), ("isbn", "imprint_isbn")),
    "part_of": (("title", "partof_title"), ("pages", "partof_pages")),
    "thesis": (("university", "thesis_university"), ("supervisors", "thesis_supervisors")),
}  # fmt: skip

# Deposit keys that the record carries in another form (or not at all).
_MAPPED = frozenset(
    {"upload_type", "publication_type", "image_type", "license", "communities", "grants", "prereserve_doi",
     "related_identifiers"}
    | {deposit_key for pairs in GROUPS.values() for _, deposit_key in pairs}
)  # fmt: skip

GRANT_KEYS = ("code", "title", "acronym", "program")
FUNDER_KEYS = ("doi", "name", "acronyms")


def to_record_metadata(
    metadata: dict[str, Any], lookups: MetadataLookups, *, accepted_communities: Iterable[str] = (),
    copy_values: bool = True,
) -> dict[str, Any]:
    """The record's `metadata` from validated deposit metadata; communities are the accepted ones only.

    With `copy_values=False` the result shares values with `metadata` (for a throwaway input, such as rows just
    read from the database: copying dominated the cost of building records in bulk)."""
    clone = copy.deepcopy if copy_values else _same
    record = {key: clone(value) for key, value in metadata.items() if key not in _MAPPED}
    right = metadata.get("access_right", DEFAULT_ACCESS_RIGHT)
    record["access_right"] = right
    record["access_right_category"] = ACCESS_RIGHT_CATEGORY.get(right, "danger")
    for key, rights in ACCESS_RIGHT_KEYS.items():
        if right not in rights:
            record.pop(key, None)
    if right in ACCESS_RIGHT_KEYS["license"] and metadata.get("license"):
        record["license"] = {"id": metadata["license"]}
    resource_type = deposit_resource_type(metadata)
    if resource_type is not None:
        record["resource_type"] = {"type": resource_type.type, "title": resource_type.title}
        if resource_type.subtype:
            record["resource_type"]["subtype"] = resource_type.subtype
    for record_key, pairs in GROUPS.items():
        group = {sub: clone(metadata[key]) for sub, key in pairs if metadata.get(key)}
        if group:
            record[record_key] = group
    related, alternate = _split_identifiers(metadata.get("related_identifiers", []), clone)
    if related:
        record["related_identifiers"] = related
    if alternate:
        record["alternate_identifiers"] = alternate
    communities = sorted(set(accepted_communities))
    if communities:
        record["communities"] = [{"id": identifier} for identifier in communities]
    grants = [_expand_grant(item["id"], lookups) for item in metadata.get("grants", [])]
    if grants:
        record["grants"] = grants
    return record


def _same(value: Any) -> Any:
    return value


def _split_identifiers(items: list[dict], clone: Any = copy.deepcopy) -> tuple[list[dict], list[dict]]:
    """Related identifiers, and the alternate identifiers of this work among them."""
    related, alternate = [], []
    for item in items:
        if item.get("relation") == ALTERNATE_IDENTIFIER_RELATION:
            alternate.append({"identifier": item["identifier"], "scheme": item["scheme"]})
        else:
            related.append(clone(item))
    return related, alternate


def _expand_grant(grant_id: str, lookups: MetadataLookups) -> dict[str, Any]:
    parsed = parse_grant_id(grant_id)
    if isinstance(parsed, str):  # stored before the rules changed: show what is known
        return {"code": grant_id}
    funder_doi, code = parsed
    found = lookups.grant(funder_doi, code) or {}
    grant = {key: found[key] for key in GRANT_KEYS if found.get(key)}
    grant.setdefault("code", code)
    funder = found.get("funder") or {}
    grant["funder"] = {key: funder[key] for key in FUNDER_KEYS if funder.get(key)}
    grant["funder"].setdefault("doi", funder_doi)
    return grant
