"""The outbox: what to apply after a commit (index a record, register or hide its DOI), retried until done."""

from __future__ import annotations

from sqlalchemy import (
    Column,
    DateTime,
    Index,
    Integer,
    String,
    Table,
    Text,
)

from repository.storage.tables.metadata import metadata

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
