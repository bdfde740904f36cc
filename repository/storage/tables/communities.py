"""Communities and the requests to include a record in one."""

from __future__ import annotations

from sqlalchemy import (
    Column,
    DateTime,
    ForeignKey,
    Integer,
    LargeBinary,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from repository.storage.tables.metadata import metadata

communities = Table(
    "communities",
    metadata,
    Column("identifier", String(100), primary_key=True),  # the slug, also the OAI set `user-<identifier>`
    Column("title", String(255), nullable=False),
    Column("description", Text, nullable=False),  # sanitised HTML
    Column("curation_policy", Text, nullable=False),  # sanitised HTML
    Column("owner_id", Integer, ForeignKey("users.id", ondelete="SET NULL"), nullable=True, index=True),
    Column("created", DateTime, nullable=False),
    Column("updated", DateTime, nullable=False),
    Column("logo", LargeBinary, nullable=True),  # a PNG thumbnail (repository/communities/logos.py)
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
