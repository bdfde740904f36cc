"""Validate deposit metadata for a draft (what is given) or for publishing (everything required).

Both modes raise one `ValidationError` listing every problem, each `{"field": "metadata.<path>",
"message": ...}`, and return the normalised metadata to store.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from typing import Any

from marshmallow import ValidationError as SchemaError

from repository import urls
from repository.errors import ValidationError, field_error
from repository.metadata.lookups import GENERIC_TEST_PREFIX, DoiPolicy, MetadataLookups
from repository.metadata.schemas import DepositMetadataSchema
from repository.vocabularies.grant_ids import parse_grant_id
from repository.vocabularies.identifiers import doi_prefix, normalize_doi
from repository.vocabularies.resource_types import SUBTYPE_FIELD
from repository.vocabularies.terms import DEFAULT_ACCESS_RIGHT, GRANT_ID_SEPARATOR

REQUIRED = "Missing data for required field."
INVALID_DOI = "The provided DOI is invalid - it should look similar to '10.1234/foo.bar'."

# Keys that only apply to some access rights; the others are dropped (CONTRACT: not echoed).
ACCESS_RIGHT_KEYS: dict[str, tuple[str, ...]] = {
    "license": ("open", "embargoed"),
    "embargo_date": ("embargoed",),
    "access_conditions": ("restricted",),
}
CONFERENCE_DETAILS = ("conference_dates", "conference_place")

_SCHEMA = DepositMetadataSchema()

ErrorFn = Callable[[str, str], None]  # records one problem: (path below the prefix, message)


def validate_draft(
    metadata: Any, lookups: MetadataLookups, *, doi_policy: DoiPolicy | None = None, prefix: str = "metadata"
) -> dict[str, Any]:
    """Check every given field (types, vocabularies, unknown keys, rules between given fields); 400 else."""
    return _validate(metadata, lookups, publish=False, doi_policy=doi_policy or DoiPolicy(), prefix=prefix)


def validate_for_publish(
    metadata: Any, lookups: MetadataLookups, *, doi_policy: DoiPolicy | None = None, prefix: str = "metadata"
) -> dict[str, Any]:
    """As `validate_draft`, and every required field must be there; defaults are filled in."""
    return _validate(metadata, lookups, publish=True, doi_policy=doi_policy or DoiPolicy(), prefix=prefix)


def flatten_errors(messages: Any, path: str) -> Iterator[dict[str, Any]]:
    """Marshmallow's nested messages as `{field, message}` entries with dotted paths."""
    if isinstance(messages, dict):
        for key, value in messages.items():
            # Schema-level messages belong to the object itself, not to a `_schema` child.
            child = path if key == "_schema" else (f"{path}.{key}" if path else str(key))
            yield from flatten_errors(value, child)
    elif isinstance(messages, list) and all(isinstance(m, str) for m in messages):
        yield field_error(path or None, " ".join(messages))
    elif isinstance(messages, list):
        for value in messages:
            yield from flatten_errors(value, path)
    else:
        yield field_error(path or None, str(messages))


def _validate(
    metadata: Any, lookups: MetadataLookups, *, publish: bool, doi_policy: DoiPolicy, prefix: str
) -> dict[str, Any]:
    if not isinstance(metadata, dict):
        raise ValidationError(errors=[field_error(prefix or None, "Not a valid object.")])
    errors: list[dict[str, Any]] = []
    try:
        data = _SCHEMA.load(metadata)
        failed: dict[str, Any] = {}
    except SchemaError as err:
        failed = err.messages if isinstance(err.messages, dict) else {"_schema": err.messages}
        errors.extend(flatten_errors(failed, prefix))
        valid = err.valid_data if isinstance(err.valid_data, dict) else {}
        data = {k: v for k, v in valid.items() if k not in failed}

    def error(path: str, message: str) -> None:  # an ErrorFn
        errors.append(field_error(f"{prefix}.{path}" if prefix else path, message))

    data.pop("prereserve_doi", None)  # read-only: the deposit layer owns the reservation
    _check_license(data, failed, lookups, error)
    _check_types(data, failed, publish, error)
    if publish:
        _apply_defaults(data, failed, lookups)
        _check_required(data, failed, error)
    _check_between_given(data, failed, error)
    _drop_inapplicable(data, failed)
    _check_doi(data, doi_policy, error)
    _check_grants(data, _loaded_items("grants", metadata, data, failed), lookups, error)
    _check_communities(data, _loaded_items("communities", metadata, data, failed), lookups, error)
    if errors:
        raise ValidationError(errors=errors)
    return data


def _check_types(data: dict, failed: dict, publish: bool, error: ErrorFn) -> None:
    """Subtypes belong to their upload type: required for it, dropped for the others."""
    upload_type = data.get("upload_type")
    if upload_type is None:
        return
    for type_, field in SUBTYPE_FIELD.items():
        if type_ != upload_type:
            data.pop(field, None)
        elif publish and field not in data and field not in failed:
            error(field, REQUIRED)


def _access_right(data: dict) -> str:
    return data.get("access_right", DEFAULT_ACCESS_RIGHT)


def _apply_defaults(data: dict, failed: dict, lookups: MetadataLookups) -> None:
    today = dt.datetime.now(dt.UTC).date().isoformat()
    if "publication_date" not in failed:
        data.setdefault("publication_date", today)
    if "access_right" not in failed:
        data.setdefault("access_right", DEFAULT_ACCESS_RIGHT)
    right = _access_right(data)
    if right in ACCESS_RIGHT_KEYS["license"] and "license" not in data and "license" not in failed:
        default = "cc-zero" if data.get("upload_type") == "dataset" else "cc-by"
        data["license"] = lookups.license_id(default) or default
    if right == "embargoed" and "embargo_date" not in failed:
        data.setdefault("embargo_date", today)


def _check_required(data: dict, failed: dict, error: ErrorFn) -> None:
    for key in ("upload_type", "title", "creators", "description"):
        if key not in data and key not in failed:
            error(key, REQUIRED)
    if (
        _access_right(data) == "restricted"
        and "access_conditions" not in data
        and "access_conditions" not in failed
    ):
        error("access_conditions", "Required when access right is restricted.")


def _check_between_given(data: dict, failed: dict, error: ErrorFn) -> None:
    """Rules between fields that are both given: checked on every save, not only at publish (CONTRACT)."""
    has_conference = any(key in data or key in failed for key in ("conference_title", "conference_acronym"))
    for key in CONFERENCE_DETAILS:
        if key in data and not has_conference:
            error(key, "Requires conference_title or conference_acronym.")


def _drop_inapplicable(data: dict, failed: dict) -> None:
    if "access_right" in failed:
        return  # unknown access right: nothing to judge applicability by
    right = _access_right(data)
    for key, rights in ACCESS_RIGHT_KEYS.items():
        if right not in rights:
            data.pop(key, None)


def _check_license(data: dict, failed: dict, lookups: MetadataLookups, error: ErrorFn) -> None:
    value = data.get("license")
    if value is None:
        return
    canonical = lookups.license_id(value)
    if canonical is None:
        error("license", f"Not a valid license id: {value!r}. See {urls.LICENSES} for the ids.")
        del data["license"]
        failed["license"] = True  # so that no default license replaces the wrong one
    else:
        data["license"] = canonical


def _check_doi(data: dict, policy: DoiPolicy, error: ErrorFn) -> None:
    value = data.pop("doi", None)
    if value is None:
        return
    doi = normalize_doi(value)
    if doi is None:
        error("doi", INVALID_DOI)
        return
    data["doi"] = doi
    prefix = doi_prefix(doi)
    if policy.locked:
        if doi.lower() != policy.locked.lower():
            error("doi", "The DOI cannot be changed.")
    elif prefix == policy.prefix:
        if doi.lower() != (policy.reserved or "").lower():
            error("doi", f"The prefix {policy.prefix} is administrated locally.")
    elif prefix in (policy.test_prefix, GENERIC_TEST_PREFIX):
        error(
            "doi",
            f"The prefix {prefix} is invalid. The prefix is only used for testing purposes, "
            "and no DOIs with this prefix are attached to any meaningful content.",
        )


def _loaded_items(key: str, metadata: dict, data: dict, failed: dict) -> list[tuple[int, dict]]:
    """The items of a list field that loaded without errors, with their indexes in the input."""
    if key not in failed:
        return list(enumerate(data.get(key, [])))
    # Some items failed: check the others too, so that one answer names every problem.
    item_errors, given = failed[key], metadata.get(key)
    if not isinstance(item_errors, dict) or not isinstance(given, list):
        return []
    nested = _SCHEMA.fields[key].inner.schema  # type: ignore[attr-defined]  # a List(Nested) here, typed as Field
    return [(index, nested.load(item)) for index, item in enumerate(given) if index not in item_errors]


def _check_grants(
    data: dict, items: list[tuple[int, dict]], lookups: MetadataLookups, error: ErrorFn
) -> None:
    grants: list[dict[str, str]] = []
    for index, item in items:
        parsed = parse_grant_id(item["id"])
        if isinstance(parsed, str):
            error(f"grants.{index}.id", parsed)
            continue
        grant_id = GRANT_ID_SEPARATOR.join(parsed)
        if lookups.grant(*parsed) is None:
            error(f"grants.{index}.id", f"Unknown grant: {grant_id}.")
        elif {"id": grant_id} not in grants:
            grants.append({"id": grant_id})
    if "grants" in data:
        data["grants"] = grants
        if not grants:
            del data["grants"]


def _check_communities(
    data: dict, items: list[tuple[int, dict]], lookups: MetadataLookups, error: ErrorFn
) -> None:
    found: set[str] = set()
    for index, item in items:
        identifier = item["identifier"]
        if lookups.community_exists(identifier):
            found.add(identifier)
        else:
            error(f"communities.{index}.identifier", f"Unknown community: {identifier!r}.")
    if "communities" in data:
        data["communities"] = [{"identifier": identifier} for identifier in sorted(found)]
        if not found:
            del data["communities"]
