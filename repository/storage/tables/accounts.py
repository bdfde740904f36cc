"""Accounts: users, their personal access tokens, and the identities of their OpenID Connect sign-ins."""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    ForeignKey,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from repository.storage.tables.metadata import metadata

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
    # Why an administrator or moderator blocked the account (NULL when it is not blocked): a blocked user is
    # inactive as a deactivated one is (docs/operators/administration.md#users).
    Column("block_reason", Text, nullable=True),
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
