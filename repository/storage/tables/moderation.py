"""Moderation (docs/operators/moderation.md): why a record is held for review or hidden while reviewed, and the
link domains the administrators banned."""

from __future__ import annotations

from sqlalchemy import Column, DateTime, ForeignKey, Integer, String, Table, Text

from repository.storage.tables.metadata import metadata

# One row per record in review (records.review says which kind): the rules' findings and the staff's note.
record_reviews = Table(
    "record_reviews",
    metadata,
    Column("recid", Integer, ForeignKey("records.id"), primary_key=True),
    Column("state", String(16), nullable=False),  # pending | hidden (as records.review)
    Column("flags", Text, nullable=False, default="[]"),  # JSON: [{"rule": ..., "message": ...}, ...]
    Column("note", Text, nullable=False, default=""),  # why a moderator hid it
    Column("created", DateTime, nullable=False, index=True),
)

banned_domains = Table(
    "banned_domains",
    metadata,
    Column("domain", String(255), primary_key=True),  # lower case; its subdomains are banned too
    Column("created", DateTime, nullable=False),
    Column("added_by", String(255), nullable=False, default=""),
)
