"""Imports from other repositories (docs/operators/migration.md): which source record became which record, and
where each source's last harvest stopped, so that a rerun brings in exactly what is missing."""

from __future__ import annotations

from sqlalchemy import Column, DateTime, ForeignKey, Integer, String, Table, UniqueConstraint

from repository.storage.tables.metadata import metadata

# One row a record brought in, by every import: the source (`api:<base URL>`, `oai:<base URL>?metadataPrefix=...`
# with its set, or `csv:<file name>`) and the identifier the record has there. The row is written in the
# transaction that publishes the record, so a record is either imported and listed here, or neither.
imported_records = Table(
    "imported_records",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("source", String(512), nullable=False),
    Column("source_id", String(512), nullable=False),
    Column("record_id", Integer, ForeignKey("recids.id"), nullable=False, index=True),
    Column("datestamp", String(64), nullable=True),  # the source's datestamp of the version brought in
    Column("created", DateTime, nullable=False),
    UniqueConstraint("source", "source_id", name="uq_imported_records_source"),
)

# One row a harvested source: the `from` of its next incremental harvest (the responseDate of the last complete one).
import_sources = Table(
    "import_sources",
    metadata,
    Column("source", String(512), primary_key=True),
    Column("last_harvest", String(64), nullable=True),
    Column("updated", DateTime, nullable=False),
)
