"""Inclusion requests: a published record asks each community in its metadata; the community's owner decides.

Requests hang on the concept, so a decision applies to every version of the record.
"""

from __future__ import annotations

from sqlalchemy import Connection, delete, insert, select, update

from repository import outbox, urls
from repository.communities import notifications
from repository.config import Settings
from repository.errors import BadRequest, Forbidden, NotFound
from repository.storage.tables.communities import communities, community_requests
from repository.storage.tables.records import records
from repository.timeutil import isoformat, utcnow

STATUSES = ("pending", "accepted", "rejected")


def sync_on_publish(conn: Connection, conceptrecid: int, recid: int, owner_id: int, metadata: dict) -> list[dict]:
    """Create the requests a publish implies; communities the depositor owns accept at once. Returns the new
    pending requests (`notifications.request_created` tells their communities' owners)."""
    wanted = {c["identifier"] for c in metadata.get("communities", [])}
    existing = {
        row.community: row
        for row in conn.execute(select(community_requests).where(community_requests.c.conceptrecid == conceptrecid))
    }
    owners = dict(
        conn.execute(select(communities.c.identifier, communities.c.owner_id).where(communities.c.identifier.in_(wanted)))

        .all()
    ) if wanted else {}
    now = utcnow()
    created = []
    for community in sorted(wanted - set(existing)):
        status = "accepted" if owners.get(community) == owner_id else "pending"
        values = {"community": community, "conceptrecid": conceptrecid, "recid": recid, "status": status,
                  "created": now, "decided": now if status == "accepted" else None}
        request_id = conn.execute(
            insert(community_requests).values(**values).returning(community_requests.c.id)
        ).scalar_one()
        if status == "pending":
            created.append({"id": request_id, **values})
    # A community dropped from the metadata before its owner decided: its request goes too.
    for community, row in existing.items():
        if community not in wanted and row.status == "pending":
            conn.execute(delete(community_requests).where(community_requests.c.id == row.id))
    return created


def accepted_communities(conn: Connection, conceptrecids: list[int]) -> dict[int, list[str]]:
    """The communities that accepted each concept, sorted."""
    result: dict[int, list[str]] = {c: [] for c in conceptrecids}
    if not conceptrecids:
        return result
    query = (
        select(community_requests.c.conceptrecid, community_requests.c.community)
        .where(community_requests.c.conceptrecid.in_(conceptrecids), community_requests.c.status == "accepted")
        .order_by(community_requests.c.community)
    )
    for conceptrecid, community in conn.execute(query):
        result[conceptrecid].append(community)
    return result


def _owned_community(conn: Connection, identifier: str, owner_id: int) -> dict:
    row = conn.execute(select(communities).where(communities.c.identifier == identifier)).mappings().first()
    if row is None:
        raise NotFound(f"Community {identifier!r} does not exist.")
    if row["owner_id"] != owner_id:
        raise Forbidden("Only the community's owner can see and decide its inclusion requests.")
    return dict(row)


def request_json(row: dict, base_url: str) -> dict:
    api = urls.community_request_api(base_url, row["community"], row["id"])
    return {
        "id": row["id"],
        "community": row["community"],
        "record_id": row["recid"],
        "conceptrecid": str(row["conceptrecid"]),
        "status": row["status"],
        "created": isoformat(row["created"]),
        "decided": isoformat(row["decided"]),
        "links": {
            "self": api,
            "record": urls.record_api(base_url, row["recid"]),
            "accept": api + "/accept",
            "reject": api + "/reject",
        },
    }


def list_requests(conn: Connection, identifier: str, owner_id: int, status: str | None) -> list[dict]:
    """The community's requests (pending by default), oldest first; owner only."""
    _owned_community(conn, identifier, owner_id)
    status = status or "pending"
    if status not in STATUSES + ("all",):
        raise BadRequest("Invalid status.", errors=[{"field": "status", "message": "One of: " + ", ".join(STATUSES + ("all",)) + "."}])
    query = select(community_requests).where(community_requests.c.community == identifier)
    if status != "all":
        query = query.where(community_requests.c.status == status)
    return [dict(r) for r in conn.execute(query.order_by(community_requests.c.id)).mappings()]


def decide(conn: Connection, settings: Settings, identifier: str, request_id: int, owner_id: int,
           accept: bool) -> tuple[dict, list[int]]:
    """Accept or reject a request (mailing the depositor when its status changes); returns it and the record ids
    to reindex (every version)."""
    _owned_community(conn, identifier, owner_id)
    row = (
        conn.execute(
            select(community_requests)
            .where(community_requests.c.id == request_id, community_requests.c.community == identifier)
            .with_for_update()
        )
        .mappings()
        .first()
    )
    if row is None:
        raise NotFound("Inclusion request not found.")
    status = "accepted" if accept else "rejected"
    now = utcnow()
    conn.execute(
        update(community_requests).where(community_requests.c.id == request_id).values(status=status, decided=now)
    )
    notifications.request_decided(conn, settings, {**dict(row), "status": status}, row["status"], owner_id)
    # Set membership shows in searches and OAI-PMH at once: bump every version's datestamp and reindex it.
    versions = list(
        conn.execute(
            select(records.c.id).where(records.c.conceptrecid == row["conceptrecid"], records.c.deleted.is_(None))
        ).scalars()
    )
    if versions:
        # Membership is part of each version's representation: a new revision, so caches and the index follow.
        conn.execute(
            update(records).where(records.c.id.in_(versions)).values(updated=now, revision=records.c.revision + 1)
        )
    for recid in versions:
        outbox.enqueue(conn, "index", recid)
    return {**dict(row), "status": status, "decided": now}, versions
