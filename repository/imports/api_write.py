"""Writing a batch of another service's records (`repository-admin import api`) in one transaction
(docs/operators/migration.md#running-it-again): every version is first checked by the rules a publish applies (its
metadata, its DOI not used here nor earlier in the batch, its files' names, its communities there or creatable),
in the order of its concept's versions; a version that fails is reported with its source id and the reason, and so
are the later versions of its concept (they would otherwise be numbered before it). The others are then written
together, a few statements for the whole batch (`deposits.imported.write_versions`), with their ledger rows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import requests
import urllib3
from sqlalchemy import Connection, delete

from repository.communities import store as communities
from repository.deposits import pids
from repository.deposits.imported import ImportedRecord, check_files, deposit_metadata, naive_utc
from repository.deposits.imported import write_versions as write_published_versions
from repository.errors import ApiError
from repository.files.store import StoredFile
from repository.imports import ledger
from repository.imports.source import SourceError
from repository.metadata.rules import validate_for_publish
from repository.records.lookups import DatabaseLookups
from repository.storage.tables.communities import communities as community_rows

# What a version can fail with while it is read, checked and written: reported, never raised.
FAILURES = (SourceError, ApiError, requests.RequestException, urllib3.exceptions.HTTPError, OSError, KeyError,
            TypeError, ValueError, AttributeError)


@dataclass
class Version:
    source_id: str
    record: dict[str, Any]
    files: list[tuple[str, StoredFile]] = field(default_factory=list)
    error: str | None = None
    done: bool = False  # imported by an earlier run

    @cached_property
    def deposited(self) -> tuple[dict[str, Any], list[str]]:
        """The deposit metadata behind the record and the communities it lists (`deposit_metadata`), worked out
        once, by the thread that read the record."""
        return deposit_metadata(self.record)


@dataclass
class Concept:
    source_id: str
    versions: list[Version]
    titles: dict[str, str]  # the titles of the communities its versions list, as the source has them
    error: str | None = None
    listed_as: str = ""  # the record id the search gave for it


@dataclass
class Written:
    """What a batch wrote, (version, record id here, concept id here) in order, and what failed: (source id,
    reason)."""

    versions: list[tuple[Version, int, int]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)


def write_batch(conn: Connection, owner_id: int, source: str, batch: Sequence[Concept],
                known: dict[str, tuple[int, int]]) -> Written:
    """Check and write the new versions of `batch` in the caller's transaction; `known` holds the versions already
    here, (record id, concept id) by source id (`ledger.versions`). The files of a version that fails are the
    caller's to remove."""
    result = Written()
    candidates = [v for c in batch if c.error is None for v in c.versions if not v.done and v.error is None]
    made, refused = _communities(conn, owner_id, batch, candidates)
    taken = pids.dois_taken(conn, (str(v.record.get("doi")) for v in candidates if v.record.get("doi")))
    lookups = DatabaseLookups(conn)
    plan: list[tuple[int | None, list[ImportedRecord]]] = []
    checked: list[Version] = []
    for concept in batch:
        if concept.error is not None:
            result.failed.append((concept.listed_as, concept.error))
            continue
        ready, broken = [], None
        for version in (v for v in concept.versions if not v.done):
            if version.error is None and broken is not None:
                version.error = f"an earlier version ({broken}) was not imported"
            if version.error is None:
                try:
                    ready.append(_checked(version, lookups, taken, refused))
                except FAILURES as exc:
                    version.error = reason(exc)
            if version.error is None:
                checked.append(version)
            else:
                broken = broken or version.source_id
                result.failed.append((version.source_id, version.error))
        here = next((known[v.source_id][1] for v in concept.versions if v.source_id in known), None)
        plan.append((here, ready))
    ids = write_published_versions(conn, owner_id, plan)
    result.versions = [(version, recid, concept) for version, (recid, concept) in zip(checked, ids, strict=True)]
    ledger.note_many(conn, source, [(version.source_id, recid, version.record.get("updated"))
                                    for version, recid, _concept in result.versions])
    # A community created for versions that all failed is not left behind, as one version at a time would not.
    used = {c["identifier"] for r in (r for _c, ready in plan for r in ready) for c in r.metadata.get("communities", [])}
    if made - used:
        conn.execute(delete(community_rows).where(community_rows.c.identifier.in_(sorted(made - used))))
    return result


def _communities(conn: Connection, owner_id: int, batch: Sequence[Concept],
                 candidates: Sequence[Version]) -> tuple[set[str], dict[str, str]]:
    """Create the communities the candidates list that are missing here, with the source's titles; returns those
    created and, by identifier, why the others could not be."""
    titles = {identifier: title for concept in batch for identifier, title in concept.titles.items()}
    wanted = sorted({identifier for v in candidates for identifier in v.deposited[1]})
    present = communities.titles(conn, wanted)
    made, refused = set(), {}
    for identifier in (identifier for identifier in wanted if identifier not in present):
        try:
            with conn.begin_nested():
                communities.create(conn, owner_id, {"identifier": identifier, "title": titles.get(identifier, identifier)})
        except ApiError as exc:
            refused[identifier] = f"its community {identifier!r} cannot be created here: {reason(exc)}"
        else:
            made.add(identifier)
    return made, refused


def _checked(version: Version, lookups: DatabaseLookups, taken: set[str], refused: dict[str, str]) -> ImportedRecord:
    """`version` as it is to be written, checked as a publish would check it; raises what fails."""
    record = version.record
    deposited, listed = dict(version.deposited[0]), version.deposited[1]
    links = record.get("links") or {}
    related = list(deposited.get("related_identifiers") or [])
    if links.get("html"):
        related.append({"identifier": links["html"], "relation": "isIdenticalTo", "scheme": "url"})
    if links.get("self"):
        related.append({"identifier": links["self"], "relation": "isAlternateIdentifier", "scheme": "url"})
    deposited["related_identifiers"] = related
    for identifier in listed:
        if identifier in refused:
            raise ValueError(refused[identifier])
    if listed:
        deposited["communities"] = [{"identifier": identifier} for identifier in listed]
    metadata = validate_for_publish(deposited, lookups)
    doi = str(record.get("doi") or "")
    if not doi:
        raise ValueError("the record has no DOI")
    if doi.lower() in taken:
        raise ValueError(f"its DOI {doi} belongs to another record here")
    check_files(version.files)
    taken.add(doi.lower())  # a later version with the same DOI fails, as one at a time
    return ImportedRecord(
        metadata=metadata, doi=doi, conceptdoi=record.get("conceptdoi") or None,
        created=naive_utc(record["created"]), updated=naive_utc(record.get("updated") or record["created"]),
        revision=int(record.get("revision") or 1), files=version.files)


def reason(exc: BaseException) -> str:
    """An error as one line of the report: the fields and messages of invalid metadata, else its message."""
    errors = getattr(exc, "errors", None)
    if errors:
        return "invalid metadata: " + "; ".join(f"{e.get('field')}: {e.get('message')}" for e in errors)
    if isinstance(exc, (SourceError, ValueError)):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"
