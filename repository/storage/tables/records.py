"""Published records: the one sequence of record and concept ids, concepts (all versions), records, and the
DOI registrations kept with the DOI agency."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
)

from repository.storage.packing import PackedJSON
from repository.storage.tables.metadata import metadata

# One sequence for concept ids and record ids: a deposition's id is the id of the record it becomes.
recids = Table(
    "recids",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("kind", String(16), nullable=False),  # concept | record
    Column("created", DateTime, nullable=False),
)


concepts = Table(
    "concepts",
    metadata,
    Column("id", Integer, ForeignKey("recids.id"), primary_key=True),
    Column("owner_id", Integer, ForeignKey("users.id"), nullable=False),
    Column("conceptdoi", String(255), nullable=True),
    Column("created", DateTime, nullable=False),
    # Bumped by every action on the concept: writers lock this row, so two newversions give one result.
    Column("lock_version", Integer, nullable=False, default=0),
)


records = Table(
    "records",
    metadata,
    Column("id", Integer, ForeignKey("recids.id"), primary_key=True),
    Column("conceptrecid", Integer, ForeignKey("concepts.id"), nullable=False, index=True),
    Column("owner_id", Integer, ForeignKey("users.id"), nullable=False),
    # Deposit-form metadata as published, compressed; what SQL selects on is in the columns below.
    Column("metadata", PackedJSON("records.metadata"), nullable=False),
    # Its `upload_type` and the subtype field of that type (vocabularies.resource_types.type_columns): the OAI-PMH
    # type sets.
    Column("upload_type", String(100), nullable=True),
    Column("subtype", String(100), nullable=True),
    Column("doi", String(255), nullable=False, unique=True),
    Column("doi_external", Boolean, nullable=False, default=False),
    Column("bucket_id", String(36), ForeignKey("buckets.id"), nullable=False, index=True),
    Column("revision", Integer, nullable=False, default=1),
    # False while background work (DOI registration) is pending: edit answers 409 meanwhile.
    Column("integrated", Boolean, nullable=False, default=False),
    Column("created", DateTime, nullable=False),
    Column("updated", DateTime, nullable=False),  # last change of the record or of its set membership
    Column("deleted", DateTime, nullable=True),  # tombstone
    # NULL for a listed record; "pending" while it awaits approval, "hidden" while staff review it (migration 0024,
    # docs/operators/moderation.md): either way out of search, the sitemaps and OAI-PMH's lists.
    Column("review", String(16), nullable=True),
    # Set while an embargo is to lift: the worker reindexes the record on that date, then clears it.
    Column("embargo_until", String(10), nullable=True, index=True),
    # The metadata's access_right (migration 0018): with embargo_until, who may see the files, from the columns
    # (`records.access.row_files_open`); NULL in a row written by the previous release, whose metadata then tells.
    Column("access_right", String(20), nullable=True),
    # True once its owner fixed its files after publishing (migration 0019): only then does building the record
    # read its file history (`records.file_history`), so the other records cost no query more.
    Column("files_fixed", Boolean, nullable=True),
    # The counts before usage statistics (migration 0014 copied them into usage_totals): no longer read or written.
    Column("views", BigInteger, nullable=False, default=0),
    Column("downloads", BigInteger, nullable=False, default=0),
    Column("volume", BigInteger, nullable=False, default=0),
    Index("ix_records_updated_id", "updated", "id"),
)


# What the DOI registrar has done: the local registrar's whole record, and the DataCite one's receipt.
doi_registrations = Table(
    "doi_registrations",
    metadata,
    Column("doi", String(255), primary_key=True),
    Column("recid", Integer, nullable=False),
    Column("url", Text, nullable=False),
    Column("metadata_xml", Text, nullable=False),
    Column("registrar", String(32), nullable=False),
    Column("registered", DateTime, nullable=False),
    Column("updated", DateTime, nullable=False),
)
