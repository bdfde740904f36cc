"""Tables of release archiving: code repositories enabled for archiving, and the releases received from them."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
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

release_repositories = Table(
    "release_repositories",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("owner_id", Integer, ForeignKey("users.id"), nullable=False, index=True),
    Column("platform", String(16), nullable=False),  # github | local
    Column("full_name", String(255), nullable=False),  # owner/name as the platform spells it
    Column("name_key", String(255), nullable=False),  # full_name in lower case: platforms ignore case
    # Kept in clear: an HMAC needs the key itself. A forged event can only make the service re-fetch a real
    # release from the platform, never inject content (nothing of the payload but the tag is trusted).
    Column("secret", String(64), nullable=False),
    Column("token", Text, nullable=True),  # platform access token for private repositories
    Column("enabled", Boolean, nullable=False),
    Column("conceptrecid", Integer, ForeignKey("concepts.id"), nullable=True),  # set by the first publish
    Column("created", DateTime, nullable=False),
    Column("updated", DateTime, nullable=False),
    UniqueConstraint("platform", "name_key", name="uq_release_repositories_name"),
)

releases = Table(
    "releases",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("repository_id", Integer, ForeignKey("release_repositories.id"), nullable=False),
    Column("platform_release_id", String(64), nullable=False),  # the platform's id of the release (or the tag)
    Column("tag", String(255), nullable=False),
    Column("status", String(16), nullable=False),  # received | processing | published | failed
    Column("errors", JSON, nullable=False),  # [{field?, message, source?}] when failed
    Column("recid", Integer, ForeignKey("recids.id"), nullable=True),  # the published version
    Column("received", DateTime, nullable=False),
    Column("updated", DateTime, nullable=False),
    UniqueConstraint("repository_id", "tag", name="uq_releases_repository_tag"),
)
