"""Funders: the organisations whose grants deposits may name, by their Crossref Funder Registry DOI."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Connection, Row, case, func, literal, select

from repository import urls
from repository.errors import NotFound
from repository.paging import Page
from repository.storage.tables.vocabularies import funders
from repository.timeutil import isoformat
from repository.vocabularies.identifiers import normalize_doi
from repository.vocabularies.listing import corrected, escape_like, matches_all, query_terms


def resolve(conn: Connection, doi: str) -> Row | None:
    """The funder with DOI `doi` (bare, `doi:` or resolver URL form), or None."""
    bare = normalize_doi(doi.strip()) if isinstance(doi, str) else None
    if bare is None:
        return None
    return conn.execute(select(funders).where(funders.c.doi == bare.lower())).first()


def get(conn: Connection, doi: str) -> Row:
    """The funder with DOI `doi`; NotFound (404) if unknown."""
    row = resolve(conn, doi)
    if row is None:
        raise NotFound(f"Funder {doi!r} not found.")
    return row


def dois_by_acronym(conn: Connection, acronym: str) -> list[str]:
    """The DOIs of the funders with this acronym (any case)."""
    wanted = acronym.strip().lower()
    rows = conn.execute(select(funders.c.doi, funders.c.acronyms))
    return [row.doi for row in rows if wanted in (a.lower() for a in json.loads(row.acronyms))]


def search(conn: Connection, q: str | None, page: Page) -> tuple[list[Row], int]:
    """Funders whose name, acronyms, DOI or country contain every word of `q` (close spellings if none do)."""
    terms = query_terms(q)
    rows, total = _search(conn, [[term] for term in terms], " ".join(terms), page)
    if total == 0 and terms:
        variants = corrected(terms, conn.execute(select(funders.c.search_text)).scalars())
        if variants:
            rows, total = _search(conn, variants, " ".join(terms), page)
    return rows, total


def _search(conn: Connection, variants: list[list[str]], exact: str, page: Page) -> tuple[list[Row], int]:
    where = matches_all(funders.c.search_text, variants)
    total = conn.execute(select(func.count()).select_from(funders).where(where)).scalar_one()
    # Funders that `q` names as whole words (an acronym: NSF, not SNSF) come first.
    whole_words = (literal(" ") + funders.c.search_text + " ").like(f"% {escape_like(exact)} %", escape="\\")
    order = (case((whole_words, 0), else_=1), funders.c.name, funders.c.doi)
    query = select(funders).where(where).order_by(*order).limit(page.size).offset(page.offset)
    return list(conn.execute(query)), total


def funder_json(row: Row) -> dict[str, Any]:
    """The funder's metadata: `{doi, name, acronyms, country, type}`."""
    return {
        "doi": row.doi,
        "name": row.name,
        "acronyms": json.loads(row.acronyms),
        "country": row.country,
        "type": row.type,
    }


def to_json(row: Row, base_url: str) -> dict[str, Any]:
    """The Funder resource: `{id, created, updated, metadata, links: {self}}` (docs/reference-behaviour.md#funders-grants-communities)."""
    return {
        "id": row.doi,
        "created": isoformat(row.created),
        "updated": isoformat(row.updated),
        "metadata": funder_json(row),
        "links": {"self": urls.funder_api(base_url, row.doi)},
    }
