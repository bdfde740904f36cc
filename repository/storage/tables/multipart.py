"""Multipart uploads to a bucket (`repository.files.multipart`): one row per upload in progress (or completed, kept
until it expires so that a second complete gets a clear answer) and one row per part received whole. On the local
store the bytes are in one file per upload under FILES_ROOT's temporary area, each part at its offset; on an S3
store they are in the bucket, and what the protocol keeps between requests is in these rows (shared by every node):
the file id the upload becomes, the S3 upload id, the hash frontier and each part's ETag
(repository.files.objectparts)."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, DateTime, ForeignKey, Integer, LargeBinary, String, Table

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
    # S3 store only (null on the local one): the file id the upload becomes (its object is written under that id's
    # key), the store's own multipart upload id (null: parts under 5 MiB, staged as objects of their own), and the
    # hash frontier (repository.files.resumable.dump: bytes hashed from the start and both hash states).
    Column("file_id", String(36), nullable=True),
    Column("store_upload_id", String(1024), nullable=True),
    Column("hash_state", LargeBinary, nullable=True),
)

multipart_parts = Table(
    "multipart_parts",
    metadata,
    Column("upload_id", String(36), ForeignKey("multipart_uploads.id", ondelete="CASCADE"), primary_key=True),
    Column("part_number", Integer, primary_key=True, autoincrement=False),
    Column("size", BigInteger, nullable=False),
    Column("checksum", String(64), nullable=False),  # crc32:<hex> of the part's bytes (repository.files.digests)
    Column("created", DateTime, nullable=False),
    Column("etag", String(200), nullable=True),  # S3 store: the part's ETag as the store answered it
)
