"""Multipart uploads to a bucket (`repository.files.multipart`): one row per upload in progress (or completed, kept
until it expires so that a second complete gets a clear answer) and one row per part received whole. The bytes
are on disk only, in one file per upload under FILES_ROOT's temporary area, each part at its offset."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, DateTime, ForeignKey, Integer, String, Table

from repository.storage.tables.metadata import metadata

multipart_uploads = Table(
    "multipart_uploads",
    metadata,
    Column("id", String(36), primary_key=True),  # a random UUID: the uploadId
    Column("bucket_id", String(36), ForeignKey("buckets.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("key", String(1000), nullable=False),
    Column("size", BigInteger, nullable=False),
    Column("part_size", BigInteger, nullable=False),
    Column("owner_id", Integer, ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column("created", DateTime, nullable=False),
    Column("expires", DateTime, nullable=False, index=True),
    # Set when a complete starts (parts are refused from then on); cleared again if that complete fails.
    Column("completed", DateTime, nullable=True),
)

multipart_parts = Table(
    "multipart_parts",
    metadata,
    Column("upload_id", String(36), ForeignKey("multipart_uploads.id", ondelete="CASCADE"), primary_key=True),
    Column("part_number", Integer, primary_key=True, autoincrement=False),
    Column("size", BigInteger, nullable=False),
    Column("checksum", String(64), nullable=False),  # crc32:<hex> of the part's bytes (repository.files.digests)
    Column("created", DateTime, nullable=False),
)
