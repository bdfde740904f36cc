"""Upload types and their publication and image subtypes, as deposits name them.

Derived from the one resource-type table, `serializers.vocabulary` (which also says what each output format calls
each type), so that validation, record metadata and the OAI sets cannot disagree with the serializers.
"""

from __future__ import annotations

from serializers.vocabulary import TYPES, ResourceType

# `type` or `type-subtype` -> the vocabulary entry.
RESOURCE_TYPES: dict[str, ResourceType] = TYPES

# The deposit vocabulary of the specification, in its order.
UPLOAD_TYPES: tuple[str, ...] = tuple(dict.fromkeys(rt.type for rt in TYPES.values()))


def _subtypes(type_: str) -> tuple[str, ...]:
    return tuple(rt.subtype for rt in TYPES.values() if rt.type == type_ and rt.subtype)


PUBLICATION_TYPES: tuple[str, ...] = _subtypes("publication")
IMAGE_TYPES: tuple[str, ...] = _subtypes("image")

# Which deposit field carries the subtype of each type that has subtypes.
SUBTYPE_FIELD: dict[str, str] = {"publication": "publication_type", "image": "image_type"}


def type_columns(metadata: dict) -> dict[str, str | None]:
    """The `upload_type` and `subtype` columns of a records row of deposit `metadata`: what OAI-PMH's type sets
    select on, since the metadata is stored compressed (records.metadata)."""
    upload_type = metadata.get("upload_type") or None
    field = SUBTYPE_FIELD.get(upload_type) if isinstance(upload_type, str) else None
    return {"upload_type": upload_type, "subtype": (metadata.get(field) or None) if field else None}


def get_resource_type(type_: str, subtype: str | None = None) -> ResourceType | None:
    """The vocabulary entry for a type and optional subtype, or None if there is none."""
    return RESOURCE_TYPES.get(f"{type_}-{subtype}" if subtype else type_)


def parse_resource_type_id(value: str) -> ResourceType | None:
    """The entry for `type` or `type-subtype` (e.g. `publication-article`), or None."""
    return RESOURCE_TYPES.get(value)


def deposit_resource_type(metadata: dict) -> ResourceType | None:
    """The entry named by a deposit's upload_type and publication_type/image_type, or None."""
    type_ = metadata.get("upload_type")
    if not type_:
        return None
    field = SUBTYPE_FIELD.get(type_)
    return get_resource_type(type_, metadata.get(field) if field else None)
