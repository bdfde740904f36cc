"""The import ledger: what an import from another repository (`repository-admin import api`) took from each source,
so that a second run changes nothing and an interrupted one resumes (docs/operators/migration.md#the-import-ledger)."""

from __future__ import annotations

from sqlalchemy import Column, DateTime, Integer, String, Table, Text, UniqueConstraint

from repository.storage.tables.metadata import metadata

import_ledger = Table(
    "import_ledger",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("source", String(255), nullable=False),  # the source's base URL, normalised
    Column("kind", String(16), nullable=False),  # record | concept
    Column("source_id", String(64), nullable=False),  # the id at the source
    # The local record or concept id once imported; NULL while the last attempt failed.
    Column("local_id", Integer, nullable=True),
    Column("status", String(16), nullable=False),  # imported | failed
    Column("reason", Text, nullable=True),  # why the last attempt failed
    Column("updated", DateTime, nullable=False),
    UniqueConstraint("source", "kind", "source_id", name="uq_import_ledger_source"),
)
