"""Deposit metadata: validation for drafts and for publishing, and mapping to record metadata."""

from repository.metadata.lookups import DoiPolicy, MetadataLookups
from repository.metadata.record import to_record_metadata
from repository.metadata.rules import validate_draft, validate_for_publish
from repository.metadata.schemas import METADATA_KEYS

__all__ = [
    "METADATA_KEYS",
    "DoiPolicy",
    "MetadataLookups",
    "to_record_metadata",
    "validate_draft",
    "validate_for_publish",
]
