"""Fixing a published version's files in place: within `FILES_EDIT_DAYS` of its first publication, its owner may
unlock them once (`unlock_files`), add, replace or remove files in the deposition's bucket, and publish again; the
DOI stays, and each change is kept in the version's file history (`file_changes`). Outside the window, or a second
time, a new version is the way. A deposition is in such a session while it is published, being edited and its
bucket unlocked: only this action unlocks a published deposition's bucket, so the specification's rule (a
published deposition's files cannot change) holds for every client that does not call it. See
docs/researchers/corrections.md#fixing-files."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, insert, select, update

from repository.config import Settings
from repository.datadesc import checks
from repository.errors import BadRequest, Conflict, Forbidden, Gone, NotFound, ValidationError, field_error
from repository.files import buckets, multipart
from repository.records.deletion import may_delete, window_end
from repository.storage.tables.corrections import file_changes, file_unlocks
from repository.storage.tables.deposits import deposits
from repository.storage.tables.records import records
from repository.timeutil import isoformat, utcnow

NEW_VERSION = "make a new version to change its files (actions/newversion)"


def in_session(conn: Connection, dep: dict) -> bool:
    """Whether the published deposition `dep` has its files unlocked (a files session)."""
    if dep["status"] != "published" or not dep["editing"]:
        return False
    return not buckets.get_bucket(conn, dep["bucket_id"])["locked"]


def unlock_refusal(conn: Connection, settings: Settings, recid: int, now: datetime) -> str:
    """'' when version `recid` may have its files unlocked at `now`, else why not."""
    unlocked = conn.execute(select(file_unlocks.c.unlocked).where(file_unlocks.c.recid == recid)).scalar()
    if unlocked is not None:
        return f"The files of this version were unlocked once already ({isoformat(unlocked)}): {NEW_VERSION}."
    created = conn.execute(select(records.c.created).where(records.c.id == recid)).scalar()
    if created is None:
        return "Only a published version's files can be unlocked."
    end = window_end(created, settings.FILES_EDIT_DAYS)
    if now >= end:
        return (f"Files may be fixed within {settings.FILES_EDIT_DAYS} days of a version's publication; that ended "
                f"on {isoformat(end)}: {NEW_VERSION}.")
    return ""


def unlock_files(conn: Connection, settings: Settings, dep: dict, owner_id: int, now: datetime) -> None:
    """Open the files of the owner's published deposition `dep` (locked by the caller) at `now` (the caller's clock:
    the window is measured with it): BadRequest for a draft or one being edited, Gone once deleted, Forbidden
    outside the window or a second time, Conflict while it is being integrated."""
    if dep["status"] != "published":
        raise BadRequest("Only a published deposition's files can be unlocked; a draft's files are open already.")
    record = conn.execute(select(records.c.deleted, records.c.integrated).where(records.c.id == dep["id"])).first()
    if record is None:
        raise NotFound("Deposition not found.")
    if record.deleted is not None:
        raise Gone("This version is deleted.")
    if dep["editing"]:
        raise BadRequest("The deposition is being edited: publish or discard the changes before unlocking its files.")
    refused = unlock_refusal(conn, settings, dep["id"], now)
    if refused:
        raise Forbidden(refused)
    if not record.integrated:
        raise Conflict("The record is still being integrated (DOI registration, indexing): retry in a few minutes.")
    stamp = utcnow()
    conn.execute(insert(file_unlocks).values(recid=dep["id"], user_id=owner_id, unlocked=stamp))
    conn.execute(update(deposits).where(deposits.c.id == dep["id"]).values(editing=True, modified=stamp))
    buckets.unlock(conn, dep["bucket_id"])


def refuse_same_file(conn: Connection, dep: dict, key: str, checksum: str) -> None:
    """In a files session, a file stored under `key` with the `checksum` the published version has there changes
    nothing: BadRequest (a no-op is refused rather than recorded as a change)."""
    if not in_session(conn, dep):
        return
    published = conn.execute(select(records.c.bucket_id).where(records.c.id == dep["id"])).scalar()
    for obj in buckets.list_objects(conn, published) if published else []:
        if obj["key"] == key and obj["checksum"] == checksum:
            raise BadRequest(f"“{key}” has the same content (checksum {checksum}) as the published file: nothing "
                             "would change.", errors=[field_error("file", "Same checksum as the published file.")])


def diff(before: list[buckets.ObjectRow], after: list[buckets.ObjectRow]) -> list[dict]:
    """The changes from the files `before` to those `after`, by name: added, replaced (another checksum), removed."""
    old = {o["key"]: o for o in before}
    new = {o["key"]: o for o in after}
    changes = []
    for key, obj in new.items():
        was = old.get(key)
        if was is None:
            changes.append({"key": key, "action": "added", "old_checksum": None, "old_size": None,
                            "new_checksum": obj["checksum"], "new_size": obj["size"]})
        elif was["checksum"] != obj["checksum"]:
            changes.append({"key": key, "action": "replaced", "old_checksum": was["checksum"], "old_size": was["size"],
                            "new_checksum": obj["checksum"], "new_size": obj["size"]})
    for key, was in old.items():
        if key not in new:
            changes.append({"key": key, "action": "removed", "old_checksum": was["checksum"], "old_size": was["size"],
                            "new_checksum": None, "new_size": None})
    return changes


def publish_files(conn: Connection, settings: Settings, dep: dict, owner_id: int) -> list[str]:
    """At the publish that ends a files session (the deposition's bucket held by the caller): check the files as a
    draft's, make them the record's, keep the changes in the file history and lock the bucket again. Returns the
    file ids the record no longer names, for `buckets.release_files` after the commit. ValidationError as a
    draft's publish."""
    objs = buckets.list_objects(conn, dep["bucket_id"])
    errors = [] if objs else [field_error("files", "Minimum one file must be provided.")]
    errors.extend(multipart.publish_errors(conn, dep["bucket_id"]))
    errors.extend(checks.publish_errors(conn, settings, dep["bucket_id"], objs))
    if errors:
        raise ValidationError(errors=errors)
    record_bucket = conn.execute(select(records.c.bucket_id).where(records.c.id == dep["id"])).scalar_one()
    changes = diff(buckets.list_objects(conn, record_bucket), objs)
    freed = buckets.resync(conn, dep["bucket_id"], record_bucket, objs)
    checks.replace_snapshot_reports(conn, dep["bucket_id"], record_bucket)
    now = utcnow()
    for change in changes:
        conn.execute(insert(file_changes).values(recid=dep["id"], user_id=owner_id, created=now, **change))
    conn.execute(update(file_unlocks).where(file_unlocks.c.recid == dep["id"]).values(published=now))
    if changes:
        conn.execute(update(records).where(records.c.id == dep["id"]).values(files_fixed=True))
    buckets.lock(conn, dep["bucket_id"])
    return freed


def discard_files(conn: Connection, dep: dict) -> list[str]:
    """End a files session without publishing: the deposition's bucket holds the record's files again, locked (the
    one unlock stays used). Returns the file ids of the session's uploads, for `buckets.release_files`."""
    record_bucket = conn.execute(select(records.c.bucket_id).where(records.c.id == dep["id"])).scalar_one()
    freed = buckets.resync(conn, record_bucket, dep["bucket_id"], buckets.list_objects(conn, record_bucket))
    checks.replace_snapshot_reports(conn, record_bucket, dep["bucket_id"])
    buckets.lock(conn, dep["bucket_id"])
    return freed



def owner_choices(conn: Connection, settings: Settings, dep: dict, now: datetime) -> dict[str, Any]:
    """What the owner of the published deposition `dep` may do at `now`: `files_open` (a files session), and why
    deleting it (`delete_refused`) or unlocking its files (`unlock_refused`) is not possible ('' when it is)."""
    row = conn.execute(select(records.c.created, records.c.doi_external, records.c.deleted)
                       .where(records.c.id == dep["id"])).mappings().first()  # fmt: skip
    if dep["status"] != "published" or row is None or row["deleted"] is not None:
        return {"files_open": False, "delete_refused": "Not published.", "unlock_refused": "Not published.",
                "deleted": row is not None and row["deleted"] is not None}
    return {"files_open": in_session(conn, dep), "delete_refused": may_delete(settings, dict(row), now),
            "unlock_refused": unlock_refusal(conn, settings, dep["id"], now), "deleted": False}
