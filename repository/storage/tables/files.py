"""Buckets and their objects (a key naming a stored file instance, shared between buckets by snapshots)."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    ForeignKey,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from repository.storage.tables.metadata import metadata

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
