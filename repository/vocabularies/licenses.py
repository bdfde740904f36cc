"""Licenses: the SPDX list plus the service's own ids, resolved case-insensitively and through aliases.

Which id is canonical (the one responses and stored deposits carry): the service's own ids in
`data/licenses.jsonl` — `cc-by` and `cc-zero`, the specification's defaults, with the other versionless Creative
Commons ids and `other-open`, `notspecified`, … — and the SPDX id for every other license. The SPDX ids a
service id stands for (`CC-BY-4.0` for `cc-by`) and the reference system's legacy ids (`apache2.0`,
`mit-license`) are aliases, so `cc-by`, `CC-BY`, `CC-BY-4.0` and `cc-by-4.0` all find the same record.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Connection, Row, case, func, select

from repository import urls
from repository.errors import NotFound
from repository.paging import Page
from repository.storage.tables.vocabularies import license_aliases, licenses
from repository.timeutil import isoformat
from repository.vocabularies.listing import corrected, matches_all, parse_vocabulary_query, tree_condition

SPDX_URL = "https://spdx.org/licenses/{}.html"


def resolve(conn: Connection, value: str) -> Row | None:
    """The license that `value` names (any case, any alias), or None."""
    if not isinstance(value, str) or not value.strip():
        return None
    query = (
        select(licenses)
        .join(license_aliases, license_aliases.c.license_id == licenses.c.id)
        .where(license_aliases.c.alias == value.strip().lower())
    )
    return conn.execute(query).first()


def by_id_or_title(conn: Connection, value: str) -> Row | None:
    """The license `value` names by id, alias or its full title (any case): what a person types in the deposit
    form, where the suggestions show titles."""
    found = resolve(conn, value)
    if found is not None or not isinstance(value, str) or not value.strip():
        return found
    return conn.execute(
        select(licenses).where(func.lower(licenses.c.title) == value.strip().lower()).order_by(licenses.c.id).limit(1)
    ).first()


def get(conn: Connection, value: str) -> Row:
    """The license that `value` names; NotFound (404) if none does."""
    row = resolve(conn, value)
    if row is None:
        raise NotFound(f"License {value!r} not found.")
    return row


def search(conn: Connection, q: str | None, page: Page) -> tuple[list[Row], int]:
    """Licenses whose id, title or an alias contain every word of `q` (close spellings if none do), or that match
    its operators (AND, OR, NOT, phrases), and the total; 400 naming `q` on bad syntax, as record search."""
    terms, tree = parse_vocabulary_query(q)
    if tree is not None:
        return _search(conn, tree_condition(licenses.c.search_text, tree), "", page)
    rows, total = _search(conn, matches_all(licenses.c.search_text, [[t] for t in terms]), " ".join(terms), page)
    if total == 0 and terms:
        variants = corrected(terms, conn.execute(select(licenses.c.search_text)).scalars())
        if variants:
            # The closest spelling of each word stands in for `q` when ranking an exact name first.
            rows, total = _search(conn, matches_all(licenses.c.search_text, variants),
                                  " ".join(v[0] for v in variants), page)
    return rows, total


def _search(conn: Connection, where: ColumnElement[bool], exact: str, page: Page) -> tuple[list[Row], int]:
    total = conn.execute(select(func.count()).select_from(licenses).where(where)).scalar_one()
    named = select(license_aliases.c.license_id).where(license_aliases.c.alias == exact)
    query = (
        select(licenses)
        .where(where)
        # The license `q` names exactly comes first, then the others by id.
        .order_by(case((licenses.c.id.in_(named), 0), else_=1), func.lower(licenses.c.id), licenses.c.id)
        .limit(page.size)
        .offset(page.offset)
    )
    return list(conn.execute(query)), total


# The licenses most deposits choose, by their SPDX ids (the canonical ids are looked up): first among suggestions.
COMMON = ("CC-BY-4.0", "CC0-1.0", "CC-BY-SA-4.0", "MIT", "Apache-2.0", "GPL-3.0-or-later", "BSD-3-Clause")


def suggest(conn: Connection, q: str | None, size: int) -> list[Row]:
    """Licenses for a picker: with no `q`, the common ones then the others by id; with `q`, those matching it
    (as `search`), the one it names exactly first, then the common ones among them."""
    common = [row for row in (resolve(conn, c) for c in COMMON) if row is not None]
    if not q or not q.strip():
        rows, _ = search(conn, None, Page(1, size + len(common)))
        return (common + [r for r in rows if r.id not in {c.id for c in common}])[:size]
    rows, _ = search(conn, q, Page(1, 200))
    named = resolve(conn, q) or by_id_or_title(conn, q)
    rank = {row.id: index for index, row in enumerate(common)}
    rows.sort(key=lambda r: (named is None or r.id != named.id, rank.get(r.id, len(rank))))
    return rows[:size]


def to_json(row: Row, base_url: str) -> dict[str, Any]:
    """The License resource: `{id, created, updated, metadata: {id, title, url}, links: {self}}`."""
    return {
        "id": row.id,
        "created": isoformat(row.created),
        "updated": isoformat(row.updated),
        "metadata": {"id": row.id, "title": row.title, "url": row.url},
        "links": {"self": urls.license_api(base_url, row.id)},
    }
