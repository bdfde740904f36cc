"""Published records written straight into the tables, in batches: thousands in well under a second.

Mirrors what `deposits.publish` writes for a first version (recids, concept with its DOI, a locked bucket, the
records row with validated deposit metadata, community requests); no deposits rows or files, which OAI-PMH
never reads. Also the admin operation OAI needs and the API lacks: taking a record down (a tombstone).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta

from sqlalchemy import Connection, insert, update

from repository.accounts import tokens
from repository.config import Settings
from repository.deposits import pids
from repository.storage import Database
from repository.storage.tables.communities import communities, community_requests
from repository.storage.tables.files import buckets
from repository.storage.tables.records import concepts, recids, records
from repository.vocabularies.resource_types import type_columns

BATCH = 500
# upload_type and its subtype field, cycled through the generated records.
TYPES: tuple[dict[str, str], ...] = (
    {"upload_type": "dataset"},
    {"upload_type": "publication", "publication_type": "article"},
    {"upload_type": "software"},
    {"upload_type": "image", "image_type": "figure"},
)


def deposit_metadata(n: int, kind: dict[str, str], communities_: list[str]) -> dict:
    """Deposit-form metadata in the shape `validate_for_publish` returns (a test checks it still does)."""
    data = {
        **kind,
        "publication_date": "2024-01-02",
        "title": f"Generated record {n}",
        "creators": [{"name": "Doe, Jane", "affiliation": "Example University"}],
        "description": f"<p>Record number {n}.</p>",
        "access_right": "open",
        "license": "cc-by",
    }
    if communities_:
        data["communities"] = [{"identifier": c} for c in communities_]
    return data


def _chunks(items: list, size: int = BATCH) -> Iterator[list]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def make_community(
    conn: Connection, identifier: str, owner_id: int, title: str = "", description: str = ""
) -> None:
    now = datetime(2024, 1, 1)
    conn.execute(insert(communities).values(
        identifier=identifier, title=title or identifier.title(), description=description, curation_policy="",
        owner_id=owner_id, created=now, updated=now,
    ))  # fmt: skip


def insert_records(
    db: Database,
    settings: Settings,
    count: int,
    start: datetime,
    per_second: int = 3,
    community: str | None = None,
    every: int = 3,
) -> list[int]:
    """`count` published records, `per_second` sharing each datestamp from `start`; every `every`-th one
    accepted by `community` (created if missing). Returns the record ids in datestamp order."""
    with db.write() as conn:
        owner = tokens.create_user(conn, "bulk@example.org")
        if (
            community
            and not conn.execute(communities.select().where(communities.c.identifier == community)).first()
        ):
            make_community(conn, community, owner)
        kinds = [kind for _ in range(count) for kind in ("concept", "record")]
        ids: list[int] = []
        for chunk in _chunks(kinds):
            query = insert(recids).returning(recids.c.id, sort_by_parameter_order=True)
            ids += [row.id for row in conn.execute(query, [{"kind": k, "created": start} for k in chunk])]
        pairs = list(zip(ids[0::2], ids[1::2], strict=True))
        concept_rows, bucket_rows, record_rows, request_rows = [], [], [], []
        for n, (concept_id, recid) in enumerate(pairs):
            stamp = start + timedelta(seconds=n // per_second)
            member = community is not None and n % every == 0
            bucket = str(uuid.uuid4())
            concept_rows.append(
                {
                    "id": concept_id,
                    "owner_id": owner,
                    "created": stamp,
                    "lock_version": 0,
                    "conceptdoi": pids.service_doi(settings, concept_id),
                }
            )
            bucket_rows.append({"id": bucket, "locked": True, "created": stamp, "updated": stamp})
            metadata = deposit_metadata(n, TYPES[n % len(TYPES)], [community] if member else [])
            record_rows.append({
                "id": recid, "conceptrecid": concept_id, "owner_id": owner, "doi": pids.service_doi(settings, recid),
                "metadata": metadata, **type_columns(metadata),
                "doi_external": False, "bucket_id": bucket, "revision": 1, "integrated": True, "created": stamp,
                "updated": stamp, "deleted": None, "views": 0, "downloads": 0, "volume": 0,
            })  # fmt: skip
            if member:
                request_rows.append(
                    {
                        "community": community,
                        "conceptrecid": concept_id,
                        "recid": recid,
                        "status": "accepted",
                        "created": stamp,
                        "decided": stamp,
                    }
                )
        for table, rows in (
            (concepts, concept_rows),
            (buckets, bucket_rows),
            (records, record_rows),
            (community_requests, request_rows),
        ):
            for chunk in _chunks(rows):
                conn.execute(insert(table), chunk)
    return [recid for _, recid in pairs]


def take_down(db: Database, recid: int, when: datetime) -> None:
    """Delete a record the way an administrator would: a tombstone, and a new datestamp harvesters see."""
    with db.write() as conn:
        conn.execute(update(records).where(records.c.id == recid).values(deleted=when, updated=when))


def set_updated(db: Database, recid: int, when: datetime) -> None:
    """Move a record's datestamp (boundary tests need exact seconds)."""
    with db.write() as conn:
        conn.execute(update(records).where(records.c.id == recid).values(updated=when))
