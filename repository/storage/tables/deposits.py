"""Depositions: the drafts and their links to the record each becomes."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    ForeignKey,
    Integer,
    String,
    Table,
    func,
    select,
    type_coerce,
)
from sqlalchemy.sql import Select

from repository.storage.packing import PackedJSON
from repository.storage.tables.metadata import metadata
from repository.storage.tables.records import records

deposits = Table(
    "deposits",
    metadata,
    Column("id", Integer, ForeignKey("recids.id"), primary_key=True),
    Column("conceptrecid", Integer, ForeignKey("concepts.id"), nullable=False, index=True),
    Column("owner_id", Integer, ForeignKey("users.id"), nullable=False, index=True),
    Column("status", String(16), nullable=False),  # draft | published
    Column("editing", Boolean, nullable=False, default=False),  # a published deposit unlocked by edit
    # Compressed: the form's metadata is read and written whole, never queried inside by SQL. NULL while the
    # deposit is published and not being edited: it is then its record's (read deposits with `deposit_select`).
    Column("metadata", PackedJSON("records.metadata"), nullable=True),
    Column("doi", String(255), nullable=True, index=True),  # the DOI the record has or will have
    Column("doi_external", Boolean, nullable=False, default=False),
    Column("prereserved", Boolean, nullable=False, default=False),
    Column("bucket_id", String(36), ForeignKey("buckets.id"), nullable=False, index=True),
    Column("created", DateTime, nullable=False),
    Column("modified", DateTime, nullable=False),
)

# The deposit form as its owner last typed it when a save kept only the valid fields (docs/researchers/depositing.md
# #nothing-typed-is-lost): the typed values and the errors beside them, with a digest of the metadata that save
# stored, so that a later change by any other way (the API, publish, discard) makes it stale.
deposit_form_states = Table(
    "deposit_form_states",
    metadata,
    Column("deposit_id", Integer, ForeignKey("deposits.id"), primary_key=True),
    Column("state", JSON, nullable=False),
    Column("digest", String(64), nullable=False),
)


def deposit_select() -> Select:
    """SELECT of whole deposits rows, their `metadata` their own or (NULL: published, not being edited) their
    published record's, which is the same: kept once."""
    own = [column for column in deposits.c if column.name != "metadata"]
    metadata = type_coerce(func.coalesce(deposits.c.metadata, records.c.metadata), PackedJSON).label("metadata")
    return select(*own, metadata).select_from(deposits.outerjoin(records, records.c.id == deposits.c.id))
