"""The tables, declared once with SQLAlchemy Core. Timestamps are naive UTC (no fraction in the API)."""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

# Stable constraint names so Alembic migrations behave the same on SQLite and PostgreSQL.
metadata = MetaData(
    naming_convention={
        "ix": "ix_%(column_0_label)s",
        "uq": "uq_%(table_name)s_%(column_0_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

users = Table(
    "users",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("email", String(255), nullable=False, unique=True),
    Column("active", Boolean, nullable=False, default=True),
    Column("created", DateTime, nullable=False),
    # argon2id (repository.accounts.passwords); NULL for an account that signs in only through OpenID Connect or
    # was created by the operator for automation.
    Column("password_hash", String(255), nullable=True),
    Column("email_confirmed", DateTime, nullable=True),
    Column("roles", String(255), nullable=False, default="", server_default=""),  # space-separated, e.g. "admin"
    Column("last_login", DateTime, nullable=True),
    # Bumped when the password changes or the user is deactivated: every session signed in before stops working.
    Column("auth_epoch", Integer, nullable=False, default=0, server_default="0"),
)

tokens = Table(
    "tokens",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("user_id", Integer, ForeignKey("users.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("name", String(255), nullable=False),
    # SHA-256 of the token: the token itself is shown once and never stored.
    Column("token_hash", String(64), nullable=False, unique=True),
    Column("scopes", Text, nullable=False),
    Column("created", DateTime, nullable=False),
    Column("revoked", DateTime, nullable=True),
    # Updated at most once a minute per token (accounts.tokens.note_use, after a request authenticates), not on
    # every request.
    Column("last_used", DateTime, nullable=True),
)

# Accounts of OpenID Connect providers linked to a user: (provider, subject) signs that user in.
user_identities = Table(
    "user_identities",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("user_id", Integer, ForeignKey("users.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("provider", String(64), nullable=False),
    Column("subject", String(255), nullable=False),
    Column("created", DateTime, nullable=False),
    UniqueConstraint("provider", "subject", name="uq_user_identities_provider_subject"),
)

# Vocabularies: the source of truth for licenses, funders and grants (loaded by scripts/load_vocabularies.py)
# and the communities users create. `search_text` is the lower-cased text that `q` is matched against.

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
)
