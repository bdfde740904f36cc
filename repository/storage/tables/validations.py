"""Validation reports of the data-description documents in buckets (issue 10): one row per document file."""

from __future__ import annotations

from sqlalchemy import JSON, Column, DateTime, ForeignKey, Integer, String, Table

from repository.storage.tables.metadata import metadata

datadesc_validations = Table(
    "datadesc_validations",
    metadata,
    # Dropping a bucket (a deleted draft) drops its reports with it.
    Column("bucket_id", String(36), ForeignKey("buckets.id", ondelete="CASCADE"), primary_key=True),
    Column("key", String(1000), primary_key=True),
    # The document's bytes as validated; freeing the instance (it is in no bucket any more) drops the row.
    Column("file_id", String(36), ForeignKey("file_instances.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("kind", String(32), nullable=False),  # software_corpus | datapackage
    Column("status", String(16), nullable=False),  # pending | valid | invalid
    Column("report", JSON, nullable=True),  # DocumentReport.to_dict() once validated
    # The bucket keys a datapackage looked up (tables, codebook) -> the file id it found, or null: a change to
    # any of them makes the report stale.
    Column("deps", JSON, nullable=True),
    # Bumped whenever the row becomes pending again: a validation started before stores nothing.
    Column("generation", Integer, nullable=False, default=0),
    Column("started", DateTime, nullable=True),  # claimed by a validator at; a stale claim is taken over
    Column("created", DateTime, nullable=False),
    Column("updated", DateTime, nullable=False),
)
