"""An owner deletes a version of their record within `RECORD_DELETE_DAYS` of its first publication, giving a reason;
later (or for a version whose DOI is registered elsewhere) they may only ask the administrators to, with a
deletion request kept for them. A deleted version is taken down as by the administrators (`takedown.take_down`:
a tombstone, its DOI hidden, out of search and the sitemaps, `status="deleted"` in OAI-PMH); the tombstone shows
the reason. See docs/researchers/corrections.md#deleting-a-version."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, insert, select

from repository import outbox, urls
from repository.accounts import audit
from repository.config import Settings
from repository.errors import Conflict, Forbidden, Gone, NotFound, ValidationError, field_error
from repository.records import build
from repository.records.takedown import take_down
from repository.storage.tables.corrections import deletion_requests, record_deletions
from repository.storage.tables.deposits import deposits
from repository.storage.tables.records import concepts, records
from repository.storage.upsert import inserted_id
from repository.timeutil import isoformat, utcnow

# The reasons an owner picks from (id -> what the tombstone says); "other" needs the free text.
DELETION_REASONS = {
    "mistake": "Published by mistake",
    "duplicate": "A duplicate of another record",
    "incomplete": "Incomplete or wrong content that cannot be fixed in place",
    "personal-data": "Contains personal or sensitive data",
    "rights": "Published without the rights to do so",
    "other": "Another reason (explained in the note)",
}
NOTE_MAX = 2000


class Deleted(Gone):
    """410 for a version its owner deleted: the error object says why and when."""

    def __init__(self, deletion: dict[str, Any]) -> None:
        super().__init__("PID has been deleted.")
        self.deletion = deletion

    def body(self) -> dict[str, Any]:
        return {**super().body(), "deleted": isoformat(self.deletion["created"]),
                "reason": {"id": self.deletion["reason"], "title": self.deletion["title"]},
                "note": self.deletion["note"]}  # fmt: skip


def parse_reason(body: Any) -> tuple[str, str]:
    """(reason id, note) from `{"reason": <id>, "note": <text>}`; ValidationError naming each wrong field."""
    if not isinstance(body, dict):
        raise ValidationError("The body must be a JSON object: {\"reason\": ..., \"note\": ...}.",
                              errors=[field_error("reason", "Missing data for required field.")])
    reason, note = body.get("reason"), body.get("note", "")
    errors = []
    if not isinstance(reason, str) or reason not in DELETION_REASONS:  # a list or an object is no key either
        errors.append(field_error("reason", "Must be one of: " + ", ".join(DELETION_REASONS) + "."))
    if not isinstance(note, str) or len(note) > NOTE_MAX:
        errors.append(field_error("note", f"Must be text of at most {NOTE_MAX} characters."))
        note = ""
    elif reason == "other" and not note.strip():
        errors.append(field_error("note", "Say why: the reason 'other' needs a note."))
    if errors:
        raise ValidationError(errors=errors)
    return str(reason), note.strip()


def _owned_live(conn: Connection, recid: int, owner_id: int, lock: bool) -> dict:
    """The records row of the owner's version `recid`: NotFound for anyone else's (existence stays hidden), Gone
    once deleted."""
    query = select(records.c.id, records.c.owner_id, records.c.conceptrecid, records.c.created, records.c.deleted,
                   records.c.doi_external).where(records.c.id == recid)  # fmt: skip
    row = conn.execute(query.with_for_update() if lock else query).mappings().first()
    if row is None or row["owner_id"] != owner_id:
        raise NotFound("Deposition not found.")
    if row["deleted"] is not None:
        raise Gone("This version is deleted already.")
    return dict(row)


def window_end(created: datetime, days: int) -> datetime:
    """When a window of `days` days opened at a version's first publication `created` closes."""
    return created + timedelta(days=days)


def may_delete(settings: Settings, row: dict, now: datetime) -> str:
    """'' when the owner may delete version `row` at `now`, else why not (what the page and the error say)."""
    if row["doi_external"]:
        return ("Its DOI is registered elsewhere, so this repository cannot hide it: ask the administrators to "
                "delete it (a deletion request).")
    end = window_end(row["created"], settings.RECORD_DELETE_DAYS)
    if now >= end:
        return (f"Owners may delete a version within {settings.RECORD_DELETE_DAYS} days of its publication; that "
                f"ended on {isoformat(end)}: ask the administrators to delete it (a deletion request).")
    return ""


def delete_version(conn: Connection, settings: Settings, recid: int, owner_id: int, reason: str, note: str,
                   now: datetime) -> None:
    """Delete the owner's version `recid` at `now` (the caller's clock: the window is measured with it) for
    `reason`: NotFound, Gone (deleted already), Forbidden (outside the window, DOI registered elsewhere), Conflict
    (being edited). The other versions stay; the concept DOI moves to the newest one left."""
    row = _owned_live(conn, recid, owner_id, lock=True)
    refused = may_delete(settings, row, now)
    if refused:
        raise Forbidden("This version cannot be deleted by its owner any more. " + refused)
    editing = conn.execute(select(deposits.c.editing).where(deposits.c.id == recid)).scalar()
    if editing:
        raise Conflict("The deposition is being edited: publish or discard the changes before deleting it.")
    newest = build.latest_version(conn, row["conceptrecid"])
    take_down(conn, recid)
    audit.record(conn, audit.owner(conn, owner_id), "record.delete", "record", recid, reason=reason, note=note)
    conn.execute(insert(record_deletions).values(recid=recid, reason=reason, note=note, user_id=owner_id,
                                                 created=utcnow()))  # fmt: skip
    left = build.latest_version(conn, row["conceptrecid"])
    has_concept_doi = conn.execute(select(concepts.c.conceptdoi).where(concepts.c.id == row["conceptrecid"])).scalar()
    if newest == recid and left is not None and has_concept_doi:
        # The concept DOI's metadata at the agency is its newest version's: registered again from the one left.
        outbox.enqueue(conn, "register_doi", left)


def request_deletion(conn: Connection, recid: int, owner_id: int, reason: str, note: str) -> dict:
    """Keep the owner's request that the administrators delete version `recid`; returns it. NotFound, Gone (deleted
    already), Conflict (a request of theirs is open already)."""
    _owned_live(conn, recid, owner_id, lock=True)
    open_one = conn.execute(select(deletion_requests.c.id).where(deletion_requests.c.recid == recid,
                                                                  deletion_requests.c.closed.is_(None))).first()
    if open_one is not None:
        raise Conflict(f"A deletion request for this version is open already (request {open_one.id}).")
    created = utcnow()
    new_id = inserted_id(conn.execute(insert(deletion_requests).values(
        recid=recid, reason=reason, note=note, user_id=owner_id, created=created)))
    return {"id": new_id, "recid": recid, "reason": reason, "note": note, "user_id": owner_id, "created": created,
            "closed": None}


def request_json(base: str, request: dict) -> dict:
    """A deletion request as the API shows it."""
    return {"id": request["id"], "record_id": request["recid"], "state": "closed" if request["closed"] else "open",
            "reason": {"id": request["reason"], "title": DELETION_REASONS.get(request["reason"], request["reason"])},
            "note": request["note"], "created": isoformat(request["created"]),
            "links": {"record": urls.record_api(base, request["recid"])}}  # fmt: skip


def deletion_of(conn: Connection, recid: int) -> dict | None:
    """Why and when the owner deleted `recid` (None for a version taken down by the administrators, or live)."""
    row = conn.execute(select(record_deletions).where(record_deletions.c.recid == recid)).mappings().first()
    if row is None:
        return None
    # A takedown by the administrators ("takedown", repository.records.moderation) shows its public reason.
    title = "Taken down by the administrators" if row["reason"] == "takedown" else row["reason"]
    return {**row, "title": DELETION_REASONS.get(row["reason"], title)}


def deletion_json(deletion: dict, recid: int, newest: int | None, base: str) -> dict:
    """The answer to an owner's deletion: the tombstone's facts and where the concept leads now."""
    links = {"record": urls.record_api(base, recid), "record_html": urls.record_html(base, recid)}
    if newest is not None:
        links["latest"] = urls.record_api(base, newest)
    return {"id": recid, "deleted": isoformat(deletion["created"]),
            "reason": {"id": deletion["reason"], "title": deletion["title"]}, "note": deletion["note"],
            "links": links}  # fmt: skip


def open_requests(conn: Connection) -> list[dict]:
    """The deletion requests no administrator has closed yet, oldest first."""
    query = select(deletion_requests).where(deletion_requests.c.closed.is_(None)).order_by(deletion_requests.c.id)
    return [dict(row) for row in conn.execute(query).mappings()]


def deleted_title(conn: Connection, recid: int) -> str:
    """The title version `recid` had when it was deleted (its tombstone page shows it)."""
    row = build.get_record_row(conn, recid)
    return (row or {}).get("metadata", {}).get("title", "") if row else ""
