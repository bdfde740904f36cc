"""Communities: curated collections that users create and own; deposits ask to be included in them."""

from __future__ import annotations

import hashlib
import re
from typing import Any

import nh3
from sqlalchemy import Connection, Row, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from repository import urls
from repository.errors import BadRequest, Forbidden, NotFound, ValidationError, field_error
from repository.paging import Page
from repository.storage.tables.communities import communities
from repository.timeutil import isoformat, utcnow
from repository.vocabularies.listing import matches_all, query_terms

IDENTIFIER = re.compile(r"[a-z0-9_-]{1,100}")
FIELDS = ("identifier", "title", "description", "curation_policy")
TITLE_MAX = 255
# `sort` values; `-` reverses. `ranking` (the reference's default) is by latest change here: the service keeps
# no separate activity score.
SORTS = {"ranking": (communities.c.updated, True), "newest": (communities.c.created, True),
         "title": (communities.c.title, False)}  # fmt: skip


def get(conn: Connection, identifier: str) -> Row:
    """The community `identifier`; NotFound (404) if there is none."""
    row = conn.execute(select(communities).where(communities.c.identifier == identifier)).first()
    if row is None:
        raise NotFound(f"Community {identifier!r} not found.")
    return row


def exists(conn: Connection, identifier: str) -> bool:
    """Whether the community `identifier` exists."""
    query = select(communities.c.identifier).where(communities.c.identifier == identifier)
    return isinstance(identifier, str) and conn.execute(query).first() is not None


def identifier_of_title(conn: Connection, title: str) -> str | None:
    """The identifier of the one community titled `title` (any case); None if none or several are."""
    query = select(communities.c.identifier).where(func.lower(communities.c.title) == title.strip().lower()).limit(2)
    found = list(conn.execute(query).scalars())
    return found[0] if len(found) == 1 else None


def titles(conn: Connection, identifiers: list[str]) -> dict[str, str]:
    """The titles of the communities named, by identifier, in one query (unknown ones are left out)."""
    if not identifiers:
        return {}
    query = select(communities.c.identifier, communities.c.title).where(communities.c.identifier.in_(identifiers))
    return {identifier: title for identifier, title in conn.execute(query)}


def create(conn: Connection, owner_id: int, data: Any) -> Row:
    """Create a community owned by `owner_id` from `{identifier, title, description?, curation_policy?}`.

    ValidationError (400) lists every bad field, including an identifier already taken.
    """
    values = _validated(data, creating=True)
    identifier = values["identifier"]
    taken = field_error("identifier", f"The community identifier {identifier!r} is already taken.")
    if exists(conn, identifier):
        raise ValidationError(errors=[taken])
    now = utcnow()
    values.setdefault("description", "")
    values.setdefault("curation_policy", "")
    try:
        conn.execute(insert(communities).values(**values, owner_id=owner_id, created=now, updated=now))
    except IntegrityError:
        raise ValidationError(errors=[taken]) from None  # created meanwhile by someone else: roll back
    return get(conn, identifier)


def edit(conn: Connection, identifier: str, user_id: int, data: Any) -> Row:
    """Change the fields given in `data`; 404 if unknown, 403 unless `user_id` owns it, 400 on bad fields."""
    row = get(conn, identifier)
    if row.owner_id != user_id:
        raise Forbidden("Only the owner of a community may edit it.")
    values = _validated(data, creating=False)
    if values.pop("identifier", identifier) != identifier:
        raise ValidationError(errors=[field_error("identifier", "The identifier of a community cannot change.")])
    if values:
        query = update(communities).where(communities.c.identifier == identifier)
        conn.execute(query.values(**values, updated=utcnow()))
    return get(conn, identifier)


def _validated(data: Any, creating: bool) -> dict[str, str]:
    if not isinstance(data, dict):
        raise BadRequest("The body must be a JSON object.")
    errors = [field_error(key, "Unknown field.") for key in data if key not in FIELDS]
    values: dict[str, str] = {}
    for key in FIELDS:
        if key not in data:
            if creating and key in ("identifier", "title"):
                errors.append(field_error(key, "Missing data for required field."))
            continue
        value = data[key]
        if not isinstance(value, str):
            errors.append(field_error(key, "Not a valid string."))
        elif key == "identifier" and not IDENTIFIER.fullmatch(value):
            errors.append(field_error(key, "Use 1 to 100 lower-case letters, digits, '-' or '_'."))
        elif key == "title" and not value.strip():
            errors.append(field_error(key, "The title cannot be empty."))
        elif key == "title" and len(value) > TITLE_MAX:
            errors.append(field_error(key, f"Longer than {TITLE_MAX} characters."))
        else:
            # Descriptions are shown as HTML: keep the harmless tags, drop scripts and event handlers.
            values[key] = nh3.clean(value) if key in ("description", "curation_policy") else value.strip()
    if errors:
        raise ValidationError(errors=errors)
    return values


def parse_sort(value: str | None) -> tuple[str, bool]:
    """`(key, reversed)` of a `sort` argument (default `ranking`); ValidationError (400) if unknown."""
    value = (value or "ranking").strip()
    key = value.removeprefix("-")
    if key not in SORTS:
        message = f"Unknown sort {value!r}; use one of {', '.join(SORTS)} (prefix '-' to reverse)."
        raise ValidationError("Invalid sort parameter.", [field_error("sort", message)])
    return key, value.startswith("-")


def search(conn: Connection, q: str | None, sort: tuple[str, bool], page: Page) -> tuple[list[Row], int]:
    """Communities whose identifier, title or description contain every word of `q` (any case), and the total."""
    text = func.lower(communities.c.identifier + " " + communities.c.title + " " + communities.c.description)
    where = matches_all(text, [[term] for term in query_terms(q)])
    total = conn.execute(select(func.count()).select_from(communities).where(where)).scalar_one()
    column, descending = SORTS[sort[0]]
    descending = descending != sort[1]
    order = column.desc() if descending else column.asc()
    query = select(communities).where(where).order_by(order, communities.c.identifier)
    return list(conn.execute(query.limit(page.size).offset(page.offset))), total


def etag(row: Row) -> str:
    """A strong validator of the community's current state."""
    state = "\0".join((row.identifier, row.title, row.description, row.curation_policy, row.updated.isoformat()))
    return '"' + hashlib.sha256(state.encode()).hexdigest()[:32] + '"'


def to_json(row: Row, base_url: str) -> dict[str, Any]:
    """The community as the reference serves it (§9): id, title, description, curation_policy, id_user, links."""
    return {
        "id": row.identifier,
        "title": row.title,
        "description": row.description,
        "curation_policy": row.curation_policy,
        "created": isoformat(row.created),
        "updated": isoformat(row.updated),
        "id_user": row.owner_id,
        "links": {"self": urls.community_api(base_url, row.identifier),
                  "html": urls.community_html(base_url, row.identifier)},  # its page (repository.pages.communities)
    }
