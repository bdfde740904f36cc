"""Records in review (docs/operators/moderation.md): a publication the rules hold (`hold`, state "pending": not
public, no DOI registered) and a published record a moderator hides while reviewing it (`hide`, state "hidden":
its page still answers, with `noindex`); either way it is out of search, the sitemaps and OAI-PMH's lists (a
hidden one shows there as deleted), until a moderator releases it (`release`: approve or unhide), takes it down
or blocks its owner (`block_owner`). Each decision writes its audit entry and mails the owner with the reason."""

from __future__ import annotations

import json

from sqlalchemy import ColumnElement, Connection, delete, insert, select, update

from repository import outbox
from repository.accounts import admin, audit
from repository.accounts.audit import Actor
from repository.communities import inclusions, notifications
from repository.config import Settings
from repository.errors import BadRequest, NotFound
from repository.records import moderation, screening
from repository.records.build import touch_versions
from repository.records.notices import tell_owner
from repository.storage.tables.accounts import users
from repository.storage.tables.moderation import record_reviews
from repository.storage.tables.records import records
from repository.timeutil import utcnow

PENDING, HIDDEN = "pending", "hidden"


def listed() -> ColumnElement[bool]:
    """The condition of a record that search, the sitemaps and exports list (not in review)."""
    return records.c.review.is_(None)


def hold(conn: Connection, settings: Settings, recid: int, owner_id: int, metadata: dict) -> bool:
    """Run the rules on record `recid`, being first published; when any holds, keep it pending (its owner is told
    why) and return True."""
    flags = screening.findings(conn, settings, recid, owner_id, metadata)
    if not flags:
        return False
    _enter(conn, recid, PENDING, flags, "")
    audit.record(conn, audit.owner(conn, owner_id), "record.held", "record", recid,
                 flags=[flag["rule"] for flag in flags])
    tell_owner(conn, recid, "Awaiting review", [
        "It is published but waits for a moderator's approval before it becomes public, searchable and its "
        "DOI registered. You are told by mail when it is decided."])
    return True


def _enter(conn: Connection, recid: int, state: str, flags: list[dict], note: str) -> None:
    conn.execute(update(records).where(records.c.id == recid).values(review=state))
    conn.execute(insert(record_reviews).values(recid=recid, state=state, flags=json.dumps(flags), note=note,
                                               created=utcnow()))


def _row(conn: Connection, recid: int) -> dict:
    row = conn.execute(select(records.c.id, records.c.deleted, records.c.review, records.c.integrated,
                              records.c.doi_external).where(records.c.id == recid).with_for_update()).mappings().first()
    if row is None:
        raise NotFound(f"Record {recid} does not exist.")
    if row["deleted"] is not None:
        raise BadRequest(f"Record {recid} is deleted.")
    return dict(row)


def _changed(conn: Connection, recid: int) -> None:
    """A new revision and datestamp (harvesters see the change; caches and the stored copy follow), indexed anew
    (the indexer leaves a record in review out)."""
    conn.execute(update(records).where(records.c.id == recid)
                 .values(updated=utcnow(), revision=records.c.revision + 1))  # fmt: skip
    outbox.enqueue(conn, "index", recid)


def hide(conn: Connection, actor: Actor, recid: int, note: str) -> None:
    """Hide published record `recid` while it is reviewed, for `note` (told to the owner). NotFound; BadRequest
    when it is deleted or in review already."""
    row = _row(conn, recid)
    if row["review"] is not None:
        raise BadRequest(f"Record {recid} is in review already.")
    _enter(conn, recid, HIDDEN, [], note)
    _changed(conn, recid)
    audit.record(conn, actor, "record.hide", "record", recid, reason=note, before={"review": None},
                 after={"review": HIDDEN})
    tell_owner(conn, recid, "Hidden while reviewed", [
        "A moderator hid it from search and harvesting while they review it; its page stays at its address.",
        f"Reason: {note}"])


def release(conn: Connection, settings: Settings, actor: Actor, recid: int, note: str = "") -> str:
    """Approve a pending record (public, its DOI registered) or unhide a hidden one; returns the audit action
    (`record.approve` or `record.unhide`). NotFound; BadRequest when it is not in review."""
    row = _row(conn, recid)
    if row["review"] is None:
        raise BadRequest(f"Record {recid} is not in review.")
    conn.execute(update(records).where(records.c.id == recid).values(review=None))
    conn.execute(delete(record_reviews).where(record_reviews.c.recid == recid))
    _changed(conn, recid)
    if row["review"] == PENDING:
        _now_a_version(conn, settings, recid)
    if not row["integrated"] and not row["doi_external"]:
        outbox.enqueue(conn, "register_doi", recid)
    action = "record.approve" if row["review"] == PENDING else "record.unhide"
    audit.record(conn, actor, action, "record", recid, reason=note, before={"review": row["review"]},
                 after={"review": None})
    tell_owner(conn, recid, "Approved" if row["review"] == PENDING else "Public again", [
        "A moderator reviewed it: it is public, searchable and harvested." + (f"\n\nNote: {note}" if note else "")])
    return action


def _now_a_version(conn: Connection, settings: Settings, recid: int) -> None:
    """What a publish does for a version that is not held, done at its approval: the communities it names are asked
    (their owners told), and its siblings, which now count it and lead to it, change."""
    row = conn.execute(select(records.c.conceptrecid, records.c.owner_id, records.c.metadata)
                       .where(records.c.id == recid)).mappings().one()
    for request in inclusions.sync_on_publish(conn, row["conceptrecid"], recid, row["owner_id"], row["metadata"] or {}):
        notifications.request_created(conn, settings, request, row["owner_id"])
    for sibling in touch_versions(conn, row["conceptrecid"], utcnow(), exclude=recid):
        outbox.enqueue(conn, "index", sibling)


def take_down(conn: Connection, actor: Actor, recid: int, reason: str, note: str) -> None:
    """Take a record down from the queue (`moderation.take_down_record`: the one takedown path, which tells the
    owner)."""
    moderation.take_down_record(conn, actor, recid, reason, note)


def block_owner(conn: Connection, actor: Actor, recid: int, reason: str) -> list[int]:
    """Block the owner of record `recid` for `reason` (admin.block) and take down every published record of theirs
    with `reason` as the public reason; returns the ids taken down. The owner gets one mail."""
    owner_id = conn.execute(select(records.c.owner_id).where(records.c.id == recid)).scalar()
    if owner_id is None:
        raise NotFound(f"Record {recid} does not exist.")
    admin.block(conn, actor, owner_id, reason)
    live = list(conn.execute(select(records.c.id).where(records.c.owner_id == owner_id, records.c.deleted.is_(None))
                             .order_by(records.c.id)).scalars())  # fmt: skip
    for each in live:
        moderation.take_down_record(conn, actor, each, reason, "", notify=False)
    tell_owner(conn, recid, "Account blocked", [
        f"Your account is blocked and {len(live)} record(s) of yours taken down: " + ", ".join(map(str, live)) + ".",
        f"Reason: {reason}"])
    return live


def queue(conn: Connection) -> list[dict]:
    """The records in review, oldest first: id, state, findings, note, since, title, description, owner."""
    query = (select(record_reviews, records.c.metadata, records.c.owner_id, users.c.email.label("owner_email"),
                    users.c.active.label("owner_active"))
             .join(records, records.c.id == record_reviews.c.recid).join(users, users.c.id == records.c.owner_id)
             .order_by(record_reviews.c.created, record_reviews.c.recid))  # fmt: skip
    found = []
    for row in conn.execute(query).mappings():
        item = dict(row)
        metadata = item.pop("metadata") or {}
        item.update(flags=json.loads(item["flags"]), title=metadata.get("title", ""),
                    description=metadata.get("description", ""), hosts=sorted(screening.link_hosts(metadata)))
        found.append(item)
    return found

