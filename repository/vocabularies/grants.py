"""Grants: funded projects, identified by `<funder DOI>::<code>` (a bare code is a European Commission grant)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

from sqlalchemy import Connection, Row, func, select

from repository import urls
from repository.errors import NotFound, field_error
from repository.paging import Page
from repository.storage.tables.vocabularies import funders, grants
from repository.timeutil import isoformat
from repository.vocabularies.funders import dois_by_acronym, funder_json
from repository.vocabularies.grant_ids import parse_grant_id
from repository.vocabularies.identifiers import normalize_doi
from repository.vocabularies.listing import matches_all, query_terms
from repository.vocabularies.terms import EC_FUNDER_DOI, GRANT_ID_SEPARATOR

_COLUMNS = (grants, funders.c.doi, funders.c.name, funders.c.acronyms, funders.c.country, funders.c.type)


def find(conn: Connection, funder_doi: str, code: str) -> Row | None:
    """The grant `code` of the funder `funder_doi`, joined with its funder, or None."""
    query = (
        select(*_COLUMNS)
        .join(funders, funders.c.doi == grants.c.funder_doi)
        .where(grants.c.funder_doi == funder_doi.lower(), grants.c.code == code)
    )
    return conn.execute(query).first()


def get(conn: Connection, grant_id: str) -> Row:
    """The grant with id `<funder DOI>::<code>` (or a bare EC code); NotFound (404) if unknown or malformed."""
    parsed = parse_grant_id(grant_id)
    row = None if isinstance(parsed, str) else find(conn, *parsed)
    if row is None:
        raise NotFound(f"Grant {grant_id!r} not found.")
    return row


def validate_grant_ids(conn: Connection, ids: Iterable[str]) -> list[dict[str, str]]:
    """The errors (`grants.<index>.id`) of a deposit's grant ids: malformed, funder not accepted, or unknown."""
    errors = []
    for index, grant_id in enumerate(ids):
        parsed = parse_grant_id(grant_id)
        if isinstance(parsed, str):
            errors.append(field_error(f"grants.{index}.id", parsed))
        elif find(conn, *parsed) is None:
            errors.append(field_error(f"grants.{index}.id", f"Unknown grant: {grant_id}."))
    return errors


def search(conn: Connection, q: str | None, funder: str | None, page: Page) -> tuple[list[Row], int]:
    """Grants whose code, title, acronym or programme, or their funder's name or acronyms, contain every word of `q`,
    of `funder` (DOI or acronym)."""
    where = matches_all(grants.c.search_text + " " + funders.c.search_text, [[term] for term in query_terms(q)])
    if funder:
        doi = normalize_doi(funder.strip())
        where = where & grants.c.funder_doi.in_([doi.lower()] if doi else dois_by_acronym(conn, funder))
    joined = grants.join(funders, funders.c.doi == grants.c.funder_doi)
    total = conn.execute(select(func.count()).select_from(joined).where(where)).scalar_one()
    query = (
        select(*_COLUMNS)
        .join(funders, funders.c.doi == grants.c.funder_doi)
        .where(where)
        .order_by(grants.c.funder_doi, grants.c.code)
        .limit(page.size)
        .offset(page.offset)
    )
    return list(conn.execute(query)), total


def grant_json(row: Row) -> dict[str, Any]:
    """What deposit validation and serializers use: `{code, title, acronym, program, funder: {doi, name, acronyms}}`."""
    return {
        "code": row.code,
        "title": row.title,
        "acronym": row.acronym,
        "program": row.program,
        "funder": {"doi": row.funder_doi, "name": row.name, "acronyms": funder_json(row)["acronyms"]},
    }


def to_json(row: Row, base_url: str) -> dict[str, Any]:
    """The Grant resource: `{id, created, updated, metadata, links: {self}}` (docs/reference-behaviour.md#funders-grants-communities)."""
    grant_id = row.funder_doi + GRANT_ID_SEPARATOR + row.code
    metadata = {
        "internal_id": grant_id,
        **grant_json(row),
        "startdate": row.startdate,
        "enddate": row.enddate,
        "funder": funder_json(row),
    }
    if row.funder_doi == EC_FUNDER_DOI and row.program:
        metadata["identifiers"] = {"eurepo": f"info:eu-repo/grantAgreement/EC/{row.program}/{row.code}/"}
    return {
        "id": grant_id,
        "created": isoformat(row.created),
        "updated": isoformat(row.updated),
        "metadata": metadata,
        "links": {"self": urls.grant_api(base_url, f"{row.funder_doi}{GRANT_ID_SEPARATOR}{quote(row.code, safe='/')}")},
    }
