"""Record ids and DOIs: one id sequence for concepts and records; DOIs `<prefix>/<namespace>.<recid>`."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import Connection, insert, select

from repository.config import Settings
from repository.storage.tables.deposits import deposits
from repository.storage.tables.records import recids, records
from repository.storage.upsert import inserted_id
from repository.timeutil import utcnow


def mint(conn: Connection, kind: str) -> int:
    """Take the next id of the shared sequence (`kind` is concept or record)."""
    return inserted_id(conn.execute(insert(recids).values(kind=kind, created=utcnow())))


def service_doi(settings: Settings, recid: int) -> str:
    """The DOI the service gives record `recid`."""
    return f"{settings.doi_prefix}/{settings.DOI_NAMESPACE}.{recid}"


def own_doi(settings: Settings, dep: dict) -> str:
    """The service DOI of deposit row `dep`: the one it already holds once reserved or published (a changed
    DOI_PREFIX never moves a DOI given out), else one under the current prefix."""
    holds = dep.get("doi") and not dep.get("doi_external")
    if holds and (dep.get("prereserved") or dep.get("status") == "published"):
        return dep["doi"]
    return service_doi(settings, dep["id"])


def doi_taken(conn: Connection, doi: str, recid: int) -> bool:
    """Whether another record (or another deposit with an external DOI) already uses `doi`."""
    doi = doi.lower()
    if conn.execute(select(records.c.id).where(records.c.doi == doi, records.c.id != recid)).first():
        return True
    query = select(deposits.c.id).where(deposits.c.doi == doi, deposits.c.id != recid, deposits.c.doi_external)
    return conn.execute(query).first() is not None


def dois_taken(conn: Connection, dois: Iterable[str]) -> set[str]:
    """Those of `dois` (lower-cased) that `doi_taken` finds used for a new record, in a few queries for a batch."""
    wanted = sorted({doi.lower() for doi in dois})
    taken: set[str] = set()
    for start in range(0, len(wanted), 500):
        part = wanted[start:start + 500]
        taken.update(conn.execute(select(records.c.doi).where(records.c.doi.in_(part))).scalars())
        taken.update(doi.lower() for doi in conn.execute(select(deposits.c.doi).where(
            deposits.c.doi.in_(part), deposits.c.doi_external)).scalars())
    return taken
