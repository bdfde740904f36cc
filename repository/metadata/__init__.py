"""Deposit metadata: validation for drafts and for publishing, and mapping to record metadata."""

from repository.metadata.lookups import DoiPolicy, MetadataLookups
from repository.metadata.record import to_record_metadata
from repository.metadata.schemas import METADATA_KEYS
from repository.metadata.validation import validate_draft, validate_for_publish

__all__ = [
    "METADATA_KEYS",
    "DoiPolicy",
    "MetadataLookups",
    "to_record_metadata",
    "validate_draft",
    "validate_for_publish",
]
