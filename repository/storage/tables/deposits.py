"""Tables of the write side: record ids, concepts, depositions, records, buckets, files, requests and the outbox."""

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
    UniqueConstraint,
    func,
    select,
    type_coerce,
)
from sqlalchemy.sql import Select

from repository.storage.packing import PackedJSON
from repository.storage.tables.core import metadata

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

buckets = Table(
    "buckets",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("locked", Boolean, nullable=False, default=False),
    Column("created", DateTime, nullable=False),
    Column("updated", DateTime, nullable=False),
)

file_instances = Table(
    "file_instances",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("uri", Text, nullable=False),  # path relative to FILES_ROOT
    Column("size", BigInteger, nullable=False),
    Column("checksum", String(64), nullable=False),  # md5:<hex>
    Column("created", DateTime, nullable=False),
    # Hex SHA-256 of the bytes, computed on the way in beside the MD5 (migration 0015); NULL for older files.
    Column("sha256", String(64), nullable=True),
)

objects = Table(
    "objects",
    metadata,
    Column("version_id", String(36), primary_key=True),
    Column("bucket_id", String(36), ForeignKey("buckets.id", ondelete="CASCADE"), nullable=False),
    Column("key", String(1000), nullable=False),
    Column("file_id", String(36), ForeignKey("file_instances.id"), nullable=False, index=True),
    Column("mimetype", String(255), nullable=False),
    Column("position", Integer, nullable=False, default=0),  # order set by the old files interface
    Column("created", DateTime, nullable=False),
    Column("updated", DateTime, nullable=False),
    UniqueConstraint("bucket_id", "key", name="uq_objects_bucket_key"),
)

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
    # Set while an embargo is to lift: the worker reindexes the record on that date, then clears it.
    Column("embargo_until", String(10), nullable=True, index=True),
    # The metadata's access_right (migration 0018): with embargo_until, who may see the files, from the columns
    # (`records.access.row_files_open`); NULL in a row written by the previous release, whose metadata then tells.
    Column("access_right", String(20), nullable=True),
    # The counts before usage statistics (migration 0014 copied them into usage_totals): no longer read or written.
    Column("views", BigInteger, nullable=False, default=0),
    Column("downloads", BigInteger, nullable=False, default=0),
    Column("volume", BigInteger, nullable=False, default=0),
    Index("ix_records_updated_id", "updated", "id"),
)

community_requests = Table(
    "community_requests",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("community", String(100), nullable=False, index=True),
    # Requests concern every version of a record, so they hang on the concept.
    Column("conceptrecid", Integer, ForeignKey("concepts.id"), nullable=False, index=True),
    Column("recid", Integer, ForeignKey("recids.id"), nullable=False),  # the version that asked
    Column("status", String(16), nullable=False),  # pending | accepted | rejected
    Column("created", DateTime, nullable=False),
    Column("decided", DateTime, nullable=True),
    UniqueConstraint("community", "conceptrecid", name="uq_community_requests_community"),
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

outbox = Table(
    "outbox",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("kind", String(32), nullable=False),  # index | register_doi
    Column("recid", Integer, nullable=False),
    Column("created", DateTime, nullable=False),
    Column("attempts", Integer, nullable=False, default=0),
    Column("last_error", Text, nullable=True),
    Column("not_before", DateTime, nullable=True),
    Column("done", DateTime, nullable=True),
    Index("ix_outbox_pending", "done", "id"),
)


def deposit_select() -> Select:
    """SELECT of whole deposits rows, their `metadata` their own or (NULL: published, not being edited) their
    published record's, which is the same: kept once."""
    own = [column for column in deposits.c if column.name != "metadata"]
    metadata = type_coerce(func.coalesce(deposits.c.metadata, records.c.metadata), PackedJSON).label("metadata")
    return select(*own, metadata).select_from(deposits.outerjoin(records, records.c.id == deposits.c.id))
