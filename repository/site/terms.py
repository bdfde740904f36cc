"""The Terms of use accepted at sign-up (docs/operators/branding-and-pages.md#terms-of-use): with
SIGNUP_REQUIRES_TERMS the sign-up form asks to accept the current version of the content page `terms`, and the
version accepted is kept per user."""

from __future__ import annotations

from sqlalchemy import Connection, insert, select

from repository.site.content import TERMS
from repository.storage.tables.site import content_pages, terms_acceptances
from repository.timeutil import utcnow


def current_version(conn: Connection) -> int | None:
    """The version of the Terms of use page, None while it is not written (then there is nothing to accept)."""
    return conn.execute(select(content_pages.c.version).where(content_pages.c.slug == TERMS)).scalar()


def accept(conn: Connection, user_id: int, version: int) -> None:
    """Record that the user accepted `version` of the Terms, now."""
    conn.execute(insert(terms_acceptances).values(user_id=user_id, version=version, accepted=utcnow()))


def accepted(conn: Connection, user_id: int) -> dict | None:
    """The latest acceptance of the user ({version, accepted}), or None."""
    row = conn.execute(select(terms_acceptances.c.version, terms_acceptances.c.accepted)
                       .where(terms_acceptances.c.user_id == user_id)
                       .order_by(terms_acceptances.c.id.desc()).limit(1)).mappings().first()
    return dict(row) if row else None
