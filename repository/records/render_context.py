"""The serializers' RenderContext built from the settings and the license vocabulary (cached per process)."""

from __future__ import annotations

import functools

from sqlalchemy import select

from repository.config import Settings
from repository.storage import Database
from serializers.context import RenderContext


@functools.lru_cache(maxsize=8)
def _licenses(db: Database) -> dict[str, dict[str, str]]:
    from repository.storage.tables.vocabularies import licenses

    with db.read() as conn:
        rows = conn.execute(select(licenses.c.id, licenses.c.title, licenses.c.url)).all()
    table = {}
    for row in rows:
        table[row.id] = table[row.id.lower()] = {"title": row.title, "url": row.url}
    return table


def render_context(settings: Settings, db: Database, style: str | None = None, locale: str | None = None) -> RenderContext:
    """What serializers need to know about this service (and the request's citation style/locale)."""
    return RenderContext(
        base_url=settings.BASE_URL,
        doi_prefix=settings.doi_prefix,
        datacentre_symbol=settings.DATACITE_USERNAME.upper() or "SERVICE.REPOSITORY",
        publisher=settings.REPOSITORY_NAME,
        style=style or "apa",
        locale=locale or "en-US",
        licenses=_licenses(db),
        host=settings.oai_host,
    )
