"""What administrators and moderators do to published records (docs/operators/administration.md#records): take
one down with a public reason (the tombstone and the API's 410 body show it) and a private note, restore it, answer
the owners' deletion requests and give a record to another owner. A takedown goes through the one path
(`takedown.take_down`: DOI hidden, out of search, `status="deleted"` in OAI-PMH); each action writes its audit
entry in the same transaction."""

from __future__ import annotations

import json

from sqlalchemy import Connection, delete, insert, select, update

from repository import outbox
from repository.accounts import audit
from repository.accounts.audit import Actor
from repository.errors import BadRequest, NotFound, ValidationError, field_error
from repository.records.build import touch_versions
from repository.records.deletion import DELETION_REASONS
from repository.records.notices import tell_owner
from repository.records.takedown import take_down
from repository.storage.tables.accounts import users
from repository.storage.tables.corrections import deletion_requests, record_deletions
from repository.storage.tables.deposits import deposits
from repository.storage.tables.moderation import record_reviews
from repository.storage.tables.records import concepts, records
from repository.timeutil import utcnow

TAKEDOWN = "takedown"  # the reason id of a takedown by the administrators (record_deletions.reason)
TAKEDOWN_TITLE = "Taken down by the administrators"
TEXT_MAX = 2000


def parse_texts(public_reason: object, private_note: object) -> tuple[str, str]:
    """(public reason, private note): the reason is required, both at most TEXT_MAX characters."""
    errors = []
    if not isinstance(public_reason, str) or not public_reason.strip() or len(public_reason) > TEXT_MAX:
        errors.append(field_error("reason", f"Give the public reason, in 1 to {TEXT_MAX} characters."))
    if private_note is not None and (not isinstance(private_note, str) or len(private_note) > TEXT_MAX):
        errors.append(field_error("note", f"The private note is text of at most {TEXT_MAX} characters."))
    if errors:
        raise ValidationError(errors=errors)
    return str(public_reason).strip(), str(private_note or "").strip()


def take_down_record(conn: Connection, actor: Actor, recid: int, public_reason: str, private_note: str,
                     notify: bool = True) -> None:
    """Take record `recid` down (NotFound, BadRequest when deleted already), keeping the reasons (without a public
    reason, from the command line, the tombstone gives none); with a public reason and `notify`, the owner is told
    by mail (docs/operators/moderation.md#mail)."""
    take_down(conn, recid)
    if public_reason or private_note:
        conn.execute(insert(record_deletions).values(
            recid=recid, reason=TAKEDOWN, note=public_reason, private_note=private_note,
            user_id=_acting_user(conn, actor, recid), created=utcnow()))
    audit.record(conn, actor, "record.takedown", "record", recid, reason=public_reason, note=private_note,
                 before={"deleted": None}, after={"deleted": True})
    if public_reason and notify:
        tell_owner(conn, recid, "Taken down", ["The administrators took it down; its page now says so, with this "
                                               "reason.", f"Reason: {public_reason}"])


def _acting_user(conn: Connection, actor: Actor, recid: int) -> int:
    """The user a takedown row names: the acting administrator, or (from the command line) the record's owner."""
    if actor.user_id is not None:
        return actor.user_id
    return conn.execute(select(records.c.owner_id).where(records.c.id == recid)).scalar_one()


def restore(conn: Connection, actor: Actor, recid: int) -> None:
    """Bring a taken-down or deleted record back: public again, indexed, its DOI registered (shown) again.
    NotFound; BadRequest when it is not deleted."""
    row = conn.execute(select(records.c.deleted, records.c.conceptrecid).where(records.c.id == recid)
                       .with_for_update()).first()  # fmt: skip
    if row is None:
        raise NotFound(f"Record {recid} does not exist.")
    if row.deleted is None:
        raise BadRequest(f"Record {recid} is not deleted.")
    before = conn.execute(select(record_deletions.c.reason, record_deletions.c.note)
                          .where(record_deletions.c.recid == recid)).mappings().first()  # fmt: skip
    now = utcnow()
    conn.execute(update(records).where(records.c.id == recid)
                 .values(deleted=None, updated=now, revision=records.c.revision + 1))  # fmt: skip
    conn.execute(delete(record_deletions).where(record_deletions.c.recid == recid))
    for kind in ("index", "register_doi"):
        outbox.enqueue(conn, kind, recid)
    for sibling in touch_versions(conn, row.conceptrecid, now, exclude=recid):
        outbox.enqueue(conn, "index", sibling)
    audit.record(conn, actor, "record.restore", "record", recid, before=dict(before or {}, deleted=True),
                 after={"deleted": None})


def change_owner(conn: Connection, actor: Actor, recid: int, email: str) -> int:
    """Give every version of record `recid`'s concept (and their deposits) to the user with `email`; returns
    the new owner's id. NotFound for an unknown record; ValidationError for an unknown address."""
    row = conn.execute(select(records.c.conceptrecid, records.c.owner_id).where(records.c.id == recid)).first()
    if row is None:
        raise NotFound(f"Record {recid} does not exist.")
    new_owner = conn.execute(select(users.c.id).where(users.c.email == email.strip().lower())).scalar()
    if new_owner is None:
        raise ValidationError(errors=[field_error("email", "No user has this e-mail address.")])
    versions = list(conn.execute(select(records.c.id).where(records.c.conceptrecid == row.conceptrecid)).scalars())
    now = utcnow()
    conn.execute(update(concepts).where(concepts.c.id == row.conceptrecid).values(owner_id=new_owner))
    conn.execute(update(records).where(records.c.id.in_(versions))
                 .values(owner_id=new_owner, updated=now, revision=records.c.revision + 1))  # fmt: skip
    conn.execute(update(deposits).where(deposits.c.id.in_(versions)).values(owner_id=new_owner))
    for version in versions:
        outbox.enqueue(conn, "index", version)
    audit.record(conn, actor, "record.owner", "record", recid, versions=versions,
                 before={"owner_id": row.owner_id}, after={"owner_id": new_owner, "email": email.strip().lower()})
    return int(new_owner)


def open_requests(conn: Connection) -> list[dict]:
    """The owners' deletion requests still open, oldest first, with the record's title and the owner's address."""
    query = (select(deletion_requests, users.c.email, records.c.metadata)
             .join(users, users.c.id == deletion_requests.c.user_id)
             .join(records, records.c.id == deletion_requests.c.recid)
             .where(deletion_requests.c.closed.is_(None)).order_by(deletion_requests.c.id))  # fmt: skip
    found = []
    for row in conn.execute(query).mappings():
        item = dict(row)
        item["title"] = (item.pop("metadata") or {}).get("title", "")
        item["reason_title"] = DELETION_REASONS.get(item["reason"], item["reason"])
        found.append(item)
    return found


def _open_request(conn: Connection, request_id: int) -> dict:
    row = conn.execute(select(deletion_requests).where(deletion_requests.c.id == request_id,
                                                       deletion_requests.c.closed.is_(None))).mappings().first()
    if row is None:
        raise NotFound(f"No open deletion request {request_id}.")
    return dict(row)


def accept_request(conn: Connection, actor: Actor, request_id: int) -> int:
    """Take the requested record down (the public reason is the owner's); returns the record id."""
    request = _open_request(conn, request_id)
    reason = DELETION_REASONS.get(request["reason"], request["reason"])
    take_down_record(conn, actor, request["recid"], f"Deleted at its owner's request: {reason}.", request["note"])
    audit.record(conn, actor, "request.accept", "request", request_id, record=request["recid"])
    return int(request["recid"])


def decline_request(conn: Connection, actor: Actor, request_id: int) -> int:
    """Close the request, the record staying published; returns the record id."""
    request = _open_request(conn, request_id)
    conn.execute(update(deletion_requests).where(deletion_requests.c.id == request_id).values(closed=utcnow()))
    audit.record(conn, actor, "request.decline", "request", request_id, record=request["recid"])
    return int(request["recid"])


def takedown_of(conn: Connection, recid: int) -> dict | None:
    """The takedown row of `recid` (reason, public note, private note, who, when), or None."""
    row = conn.execute(select(record_deletions).where(record_deletions.c.recid == recid)).mappings().first()
    return dict(row) if row else None


def record_facts(conn: Connection, recid: int) -> dict:
    """What a record's moderation page shows: id, title, DOI, owner, created, deleted, review state, and its
    takedown (if any).
    NotFound for an unknown id."""
    row = conn.execute(select(records.c.id, records.c.doi, records.c.created, records.c.deleted, records.c.metadata,
                              records.c.review,
                              records.c.owner_id, users.c.email.label("owner_email"))
                       .join(users, users.c.id == records.c.owner_id).where(records.c.id == recid)).mappings().first()
    if row is None:
        raise NotFound(f"Record {recid} does not exist.")
    facts = dict(row)
    facts["title"] = (facts.pop("metadata") or {}).get("title", "")
    facts["takedown"] = takedown_of(conn, recid)
    row = conn.execute(select(record_reviews).where(record_reviews.c.recid == recid)).mappings().first()
    facts["review_row"] = dict(row, flags=json.loads(row["flags"])) if row else None
    return facts
