"""Check a release metadata file the way a release would use it, reporting every problem at once with a hint.

The file is laid over stand-in release defaults and validated for publishing by the deposit API's own validator,
so a file that passes here only fails at release time on what depends on the release itself. Paths are dotted
paths in the file (`creators.0.orcid`, or `authors.0.orcid` for a CITATION.cff); messages are the deposit API's.
"""

from __future__ import annotations

import datetime as dt
import difflib
import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from marshmallow import Schema, fields
from sqlalchemy import Connection, select

from repository import urls
from repository.errors import ValidationError, field_error
from repository.metadata import DoiPolicy, MetadataLookups, validate_for_publish
from repository.metadata.fields import Choice
from repository.metadata.schemas import NAME_FORMAT_MESSAGE, DepositMetadataSchema
from repository.releases import metafiles

DOI_IN_RELEASE = "A release gets its DOI from this service: remove 'doi' from the file."


def sample_defaults() -> dict[str, Any]:
    """What a release derives before applying the file (stand-in values for a check without a release)."""
    return {
        "upload_type": "software",
        "title": "owner/repository: v1.0.0",
        "description": "<p>Release notes.</p>",
        "creators": [{"name": "Contributor, A."}],
        "version": "v1.0.0",
        "publication_date": dt.date.today().isoformat(),
        "access_right": "open",
        "license": "other-open",
    }


class LicenseIndex:
    """Every license id and alias (lower case) -> canonical id, for suggesting the nearest id (read when needed)."""

    def __init__(self, load: Callable[[], Iterable[tuple[str, str]]]) -> None:
        self._load = load

    @functools.cached_property
    def aliases(self) -> dict[str, str]:
        return {alias.lower(): license_id for alias, license_id in self._load()}

    def nearest(self, value: str) -> list[str]:
        """Up to three canonical ids whose id or alias is spelt closest to `value`."""
        matches = difflib.get_close_matches(value.strip().lower(), list(self.aliases), n=8, cutoff=0.6)
        found: list[str] = []
        for alias in matches:
            if self.aliases[alias] not in found:
                found.append(self.aliases[alias])
        return found[:3]


class OfflineLookups:
    """Look-ups without a service: licenses from the built-in list; grants and communities are not checked."""

    def __init__(self, index: LicenseIndex) -> None:
        self.index = index

    def license_id(self, value: str) -> str | None:
        return self.index.aliases.get(value.strip().lower()) if isinstance(value, str) else None

    def grant(self, funder_doi: str, code: str) -> dict[str, Any] | None:
        return {}  # known only to the service: accepted here

    def community_exists(self, identifier: str) -> bool:
        return True  # known only to the service: accepted here


@functools.lru_cache(maxsize=1)
def builtin_license_index() -> LicenseIndex:
    """The license ids and aliases the service ships with (read from its data file, no database)."""

    def load() -> list[tuple[str, str]]:
        from repository.vocabularies.loader import DEFAULT_PATHS, parse_licenses

        rows, aliases = parse_licenses(DEFAULT_PATHS["licenses"])
        return [(row["id"], row["id"]) for row in rows] + [(a["alias"], a["license_id"]) for a in aliases]

    return LicenseIndex(load)


def database_license_index(conn: Connection) -> LicenseIndex:
    """The license ids and aliases of the service's database."""
    from repository.storage.tables.vocabularies import license_aliases

    return LicenseIndex(lambda: [(row.alias, row.license_id) for row in conn.execute(select(license_aliases))])


@dataclass
class MetafileReport:
    """The outcome of checking one file."""

    file: str
    kind: str
    errors: list[dict[str, Any]] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)  # the file's fields as the deposit would store them
    notes: list[str] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.errors

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "format": self.kind, "valid": self.valid, "errors": self.errors,
                "metadata": self.metadata, "notes": self.notes}  # fmt: skip


def check_file(
    name: str, data: bytes, lookups: MetadataLookups, index: LicenseIndex, *, offline: bool = False,
    doi_policy: DoiPolicy | None = None,
) -> MetafileReport:  # fmt: skip
    """Read and validate the metadata file `name` as a release would use it."""
    read = metafiles.read(name, data)
    report = MetafileReport(file=name, kind="CITATION.cff" if read.kind == "cff" else "JSON")
    report.errors.extend(read.problems)
    if any("line" in problem for problem in read.problems) or not read.metadata:
        return report
    errors, metadata = check_metadata(read, sample_defaults(), lookups, index, doi_policy)
    report.errors.extend(errors)
    report.metadata = {key: value for key, value in metadata.items() if key in read.metadata}
    if offline and ({"grants", "communities"} & set(read.metadata)):
        report.notes.append("Grants and communities are checked by the service only (not offline).")
    return report


def check_metadata(
    read: metafiles.MetadataFile, defaults: dict[str, Any], lookups: MetadataLookups, index: LicenseIndex,
    doi_policy: DoiPolicy | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:  # fmt: skip
    """Validate `defaults` overridden key by key by the file's fields: (problems, the metadata to publish)."""
    errors: list[dict[str, Any]] = []
    if "doi" in read.metadata:
        errors.append(field_error(read.deposit_path_to_file("doi"), DOI_IN_RELEASE))
    merged = {**defaults, **{k: v for k, v in read.metadata.items() if k != "doi"}}
    try:
        metadata = validate_for_publish(merged, lookups, doi_policy=doi_policy, prefix="")
    except ValidationError as exc:
        metadata = {}
        for error in exc.errors:
            errors.append(_explain(error, read, merged, index))
    return errors, metadata


def _explain(error: dict[str, Any], read: metafiles.MetadataFile, given: dict, index: LicenseIndex) -> dict:
    """The validator's error with the path in the file, where the value came from, and a hint if one helps."""
    path = error.get("field") or ""
    result = field_error(read.deposit_path_to_file(path) or None, error["message"])
    top = path.split(".")[0]
    if top and top not in read.metadata:
        result["source"] = "derived"  # a rule between fields: the file's value conflicts with a derived one
    hint = _hint(path, error["message"], given)
    if hint is None and error["message"].startswith("Not a valid license id"):
        nearest = index.nearest(str(_value_at(given, path) or ""))
        if nearest:
            hint = f"Did you mean {' or '.join(repr(n) for n in nearest)}? See {urls.LICENSES} for every id."
    if hint:
        result["hint"] = hint
    return result


def _hint(path: str, message: str, given: dict) -> str | None:
    parts = path.split(".")
    if message == "Unknown field name.":
        names = list(_schema_at(parts[:-1]).fields)
        near = difflib.get_close_matches(parts[-1], names, n=1)
        return f"Did you mean {near[0]!r}?" if near else "The known fields are listed in /schemas/deposit-metadata.json."
    if message == "Not a valid choice.":
        target = _schema_at(parts[:-1]).fields.get(parts[-1])
        if isinstance(target, Choice):
            near = difflib.get_close_matches(str(_value_at(given, path)), list(target.choices), n=1)
            listed = ", ".join(target.choices)
            return (f"Did you mean {near[0]!r}? " if near else "") + f"One of: {listed}."
    if message == NAME_FORMAT_MESSAGE:
        return "Write a person's name as 'Family name, Given names', e.g. 'Doe, Jane'."
    return None


def _schema_at(parts: list[str]) -> Schema:
    """The marshmallow schema of the object at a dotted path (list indexes skipped)."""
    schema: Schema = DepositMetadataSchema()
    for part in parts:
        if part.isdigit():
            continue
        found = schema.fields.get(part)
        inner = getattr(found, "inner", None) if isinstance(found, fields.List) else None
        if isinstance(inner, fields.Nested):
            schema = inner.schema
    return schema


def _value_at(data: Any, path: str) -> Any:
    for part in path.split(".") if path else []:
        if isinstance(data, list) and part.isdigit() and int(part) < len(data):
            data = data[int(part)]
        elif isinstance(data, dict):
            data = data.get(part)
        else:
            return None
    return data
