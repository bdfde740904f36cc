"""Corrections of published versions by their owners (docs/researchers/corrections.md): deletions within the
window and the requests to the administrators after it, the one files unlock a version may have, and the file
history that unlock leaves."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, DateTime, ForeignKey, Index, Integer, String, Table, Text

from repository.storage.tables.metadata import metadata

# Why a record was deleted, by its owner or by the administrators (reason "takedown", `note` the public reason; the
# private note for the administrators only): the tombstone shows the reason and the note.
record_deletions = Table(
    "record_deletions",
    metadata,
    Column("recid", Integer, ForeignKey("records.id"), primary_key=True),
    Column("reason", String(32), nullable=False),  # an id of records.corrections.DELETION_REASONS
    Column("note", Text, nullable=False, default=""),
    Column("user_id", Integer, ForeignKey("users.id"), nullable=False),
    Column("created", DateTime, nullable=False),
    Column("private_note", Text, nullable=True),
)

# An owner's request that the administrators delete a version (after the window, or one they may not delete).
deletion_requests = Table(
    "deletion_requests",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("recid", Integer, ForeignKey("records.id"), nullable=False, index=True),
    Column("reason", String(32), nullable=False),
    Column("note", Text, nullable=False, default=""),
    Column("user_id", Integer, ForeignKey("users.id"), nullable=False),
    Column("created", DateTime, nullable=False),
    Column("closed", DateTime, nullable=True),  # set once an administrator took the record down or declined
)

# The one files unlock of a version: when, and by whom; `published` once the fixed files were published.
file_unlocks = Table(
    "file_unlocks",
    metadata,
    Column("recid", Integer, ForeignKey("records.id"), primary_key=True),
    Column("user_id", Integer, ForeignKey("users.id"), nullable=False),
    Column("unlocked", DateTime, nullable=False),
    Column("published", DateTime, nullable=True),
)

# What a files unlock changed, file by file: a checksum is NULL on the side where the file was not.
file_changes = Table(
    "file_changes",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("recid", Integer, ForeignKey("records.id"), nullable=False),
    Column("key", String(1000), nullable=False),
    Column("action", String(16), nullable=False),  # added | replaced | removed
    Column("old_checksum", String(255), nullable=True),
    Column("new_checksum", String(255), nullable=True),
    Column("old_size", BigInteger, nullable=True),
    Column("new_size", BigInteger, nullable=True),
    Column("user_id", Integer, ForeignKey("users.id"), nullable=False),
    Column("created", DateTime, nullable=False),
    Index("ix_file_changes_recid_id", "recid", "id"),
)
