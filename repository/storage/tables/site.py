"""The institution's own site (docs/operators/branding-and-pages.md): branding values an administrator set over the
settings' defaults, the logo and favicon, content pages written in Markdown, maintenance banners, and which version
of the Terms of use each user accepted."""

from __future__ import annotations

from sqlalchemy import Boolean, Column, DateTime, ForeignKey, Integer, LargeBinary, String, Table, Text

from repository.storage.tables.metadata import metadata

# One row per value an administrator changed (name, contact, colour, footer links); absent: the setting's default.
site_settings = Table(
    "site_settings",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),  # JSON
    Column("updated", DateTime, nullable=False),
)

# The logo and the favicon, checked images of bounded size, served by the site itself.
site_images = Table(
    "site_images",
    metadata,
    Column("name", String(16), primary_key=True),  # logo | favicon
    Column("media_type", String(64), nullable=False),
    Column("data", LargeBinary, nullable=False),
    Column("digest", String(64), nullable=False),  # SHA-256 of the data: the cache-busting part of its address
    Column("updated", DateTime, nullable=False),
)

content_pages = Table(
    "content_pages",
    metadata,
    Column("slug", String(64), primary_key=True),
    Column("title", String(200), nullable=False),
    Column("body", Text, nullable=False),  # Markdown, rendered and sanitized when shown
    Column("version", Integer, nullable=False, default=1),  # counts the saves; the Terms' version is accepted
    Column("in_footer", Boolean, nullable=False, default=True),
    Column("position", Integer, nullable=False, default=0),
    Column("updated", DateTime, nullable=False),
)

banners = Table(
    "banners",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("message", Text, nullable=False),
    Column("starts", DateTime, nullable=True),  # None: shown from now on
    Column("ends", DateTime, nullable=True),  # None: until removed
    Column("created", DateTime, nullable=False),
)

terms_acceptances = Table(
    "terms_acceptances",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("user_id", Integer, ForeignKey("users.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("version", Integer, nullable=False),
    Column("accepted", DateTime, nullable=False),
)

# The last runs of the operator's checks (reindex --check, fixity), with what they found: the jobs page shows them.
job_runs = Table(
    "job_runs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("job", String(32), nullable=False, index=True),  # reindex-check | fixity
    Column("finished", DateTime, nullable=False),
    Column("ok", Boolean, nullable=False),
    Column("summary", Text, nullable=False),
    Column("findings", Text, nullable=False),  # JSON list
)
