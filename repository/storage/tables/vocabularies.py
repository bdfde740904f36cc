"""The vocabularies deposits refer to: licenses (and their aliases), funders, grants and research organisations."""

from __future__ import annotations

from sqlalchemy import (
    Column,
    DateTime,
    ForeignKey,
    String,
    Table,
    Text,
)

from repository.storage.tables.metadata import metadata

licenses = Table(
    "licenses",
    metadata,
    Column("id", String(100), primary_key=True),  # canonical id, as given out in responses
    Column("title", String(255), nullable=False),
    Column("url", String(500), nullable=False),
    Column("search_text", Text, nullable=False),
    Column("created", DateTime, nullable=False),
    Column("updated", DateTime, nullable=False),
)


license_aliases = Table(
    "license_aliases",
    metadata,
    # Lower case; every license has its own lower-cased id here too, so one lookup resolves any spelling.
    Column("alias", String(100), primary_key=True),
    Column("license_id", String(100), ForeignKey("licenses.id", ondelete="CASCADE"), nullable=False, index=True),
)


funders = Table(
    "funders",
    metadata,
    Column("doi", String(100), primary_key=True),
    Column("name", String(255), nullable=False),
    Column("acronyms", Text, nullable=False),  # JSON array
    Column("country", String(2), nullable=False),
    Column("type", String(20), nullable=False),
    Column("search_text", Text, nullable=False),
    Column("created", DateTime, nullable=False),
    Column("updated", DateTime, nullable=False),
)


grants = Table(
    "grants",
    metadata,
    Column("funder_doi", String(100), ForeignKey("funders.doi"), primary_key=True),
    Column("code", String(100), primary_key=True),
    Column("title", Text, nullable=False),
    Column("acronym", String(100), nullable=False),
    Column("program", String(100), nullable=False),
    Column("startdate", String(10), nullable=True),  # YYYY-MM-DD
    Column("enddate", String(10), nullable=True),
    Column("search_text", Text, nullable=False),
    Column("created", DateTime, nullable=False),
    Column("updated", DateTime, nullable=False),
)


organizations = Table(
    "organizations",
    metadata,
    # Research organisations from a ROR data dump (repository/vocabularies/ror.py), by their ROR id as a URL.
    Column("id", String(40), primary_key=True),
    Column("name", String(500), nullable=False),  # the name ROR displays
    Column("acronyms", Text, nullable=False),  # JSON array
    Column("aliases", Text, nullable=False),  # JSON array: other names and labels in other languages
    Column("country", String(2), nullable=False),  # ISO 3166-1 alpha-2, "" when ROR gives none
    Column("status", String(20), nullable=False),  # active, inactive or withdrawn
    Column("search_text", Text, nullable=False),
    Column("created", DateTime, nullable=False),
    Column("updated", DateTime, nullable=False),
)


subjects = Table(
    "subjects",
    metadata,
    # Subject terms loaded from a vocabulary's file (repository/vocabularies/subjects.py), suggested for the deposit
    # form's subjects: by the vocabulary's name (as loaded, e.g. "MeSH") and the term's identifier (normalised).
    Column("vocabulary", String(64), primary_key=True),
    Column("identifier", String(500), primary_key=True),
    Column("term", String(500), nullable=False),
    Column("search_text", Text, nullable=False),  # the term and the identifier, lower case
    Column("created", DateTime, nullable=False),
    Column("updated", DateTime, nullable=False),
)
