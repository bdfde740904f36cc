"""OAI sets: `user-<identifier>` per community (its accepted records) and `type-<type>[-<subtype>]` per resource type.

Membership is read from the tables at request time (community requests, the record's own metadata), so a
community accepting a record shows in its set at once; acceptance also bumps the record's datestamp, so an
incremental harvest of the set picks the record up.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import ColumnElement, Connection, and_, func, select

from repository.storage.tables.communities import communities, community_requests
from repository.storage.tables.records import records
from repository.vocabularies.resource_types import RESOURCE_TYPES, SUBTYPE_FIELD, parse_resource_type_id
from serializers.text import strip_html

COMMUNITY = "user-"
TYPE = "type-"


@dataclass(frozen=True)
class OaiSet:
    """One entry of ListSets."""

    spec: str
    name: str
    description: str = ""  # plain text, shown as Dublin Core in setDescription


def _type_name(type_id: str) -> str:
    rt = RESOURCE_TYPES[type_id]
    if rt.subtype is None:
        return f"Resource type: {rt.title}"
    return f"Resource type: {RESOURCE_TYPES[rt.type].title} / {rt.title}"


# Every resource-type set, sorted by spec; "type-" sorts before "user-", so ListSets pages through these first.
TYPE_SETS: tuple[OaiSet, ...] = tuple(
    OaiSet(TYPE + type_id, _type_name(type_id)) for type_id in sorted(RESOURCE_TYPES)
)


def record_sets(metadata: dict, accepted: list[str]) -> list[str]:
    """The setSpecs of a record: its resource type (and subtype) and the communities that accepted it."""
    specs = []
    upload_type = metadata.get("upload_type")
    if upload_type:
        specs.append(TYPE + upload_type)
        field = SUBTYPE_FIELD.get(upload_type)
        if field and metadata.get(field):
            specs.append(f"{TYPE}{upload_type}-{metadata[field]}")
    specs.extend(COMMUNITY + identifier for identifier in accepted)
    return specs


# The metadata fields a record's type sets come from: read in SQL, so that a page of headers needs no metadata.
TYPE_FIELDS = ("upload_type", *sorted(set(SUBTYPE_FIELD.values())))


def type_columns() -> list[ColumnElement]:
    """`TYPE_FIELDS` as labelled columns of `records` (NULL where absent). The records row keeps the subtype of
    its own upload_type only, which is the one `record_sets` reads."""
    return [records.c.upload_type.label("upload_type"),
            *(records.c.subtype.label(name) for name in TYPE_FIELDS[1:])]


def set_filter(spec: str) -> ColumnElement | None:
    """The condition on `records` selecting a set's members; None for a set that cannot exist."""
    if spec.startswith(COMMUNITY):
        members = select(community_requests.c.conceptrecid).where(
            community_requests.c.community == spec[len(COMMUNITY) :],
            community_requests.c.status == "accepted",
        )
        return records.c.conceptrecid.in_(members)
    if spec.startswith(TYPE):
        rt = parse_resource_type_id(spec[len(TYPE) :])
        if rt is None:
            return None
        condition = records.c.upload_type == rt.type
        if rt.subtype:
            condition = and_(condition, records.c.subtype == rt.subtype)
        return condition
    return None


def count_sets(conn: Connection) -> int:
    """How many sets ListSets gives in all."""
    return len(TYPE_SETS) + conn.execute(select(func.count()).select_from(communities)).scalar_one()


def list_sets(conn: Connection, after: str | None, limit: int) -> list[OaiSet]:
    """Up to `limit` sets whose spec sorts after `after`, in spec order (a cursor, not an offset)."""
    found = [s for s in TYPE_SETS if after is None or s.spec > after][:limit]
    if len(found) < limit:
        query = select(communities.c.identifier, communities.c.title, communities.c.description)
        if after is not None and after.startswith(COMMUNITY):
            query = query.where(communities.c.identifier > after[len(COMMUNITY) :])
        query = query.order_by(communities.c.identifier).limit(limit - len(found))
        found += [
            OaiSet(COMMUNITY + row.identifier, row.title, strip_html(row.description))
            for row in conn.execute(query)
        ]
    return found
