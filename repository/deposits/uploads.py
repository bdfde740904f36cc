"""Changing a deposition's files on behalf of its signed-in owner (the deposit form's file area): add a file from a
stream, delete, rename and move one. The same bucket functions as the API's bucket PUT and files interface, with
the owner's deposition looked up first (anyone else's is NotFound) and a published one refused with a message
that says what to do instead."""

from __future__ import annotations

from repository.datadesc import checks
from repository.deposits import actions, filefix
from repository.errors import BadRequest, Forbidden, NotFound, PayloadTooLarge
from repository.files import buckets, quotas
from repository.files.keys import check_key
from repository.files.store import FileStore, Readable
from repository.storage import Connection
from repository.storage.engine import Database

PUBLISHED = "This upload is published: its files cannot change any more. Make a new version to change them."


def _writable(conn: Connection, dep_id: int, owner_id: int) -> dict:
    dep = actions.get_deposit(conn, dep_id, owner_id)
    # A published deposition's bucket is locked, but during a files session (deposits.filefix).
    if buckets.get_bucket(conn, dep["bucket_id"])["locked"]:
        raise Forbidden(PUBLISHED)
    return dep


def _taken(key: str) -> BadRequest:
    return BadRequest(f"A file named “{key}” is there already: delete it first to upload another under that name.",
                      errors=[{"field": "file", "message": "Filename already exists."}])


def add_file(db: Database, store: FileStore, quota: quotas.Quota, dep_id: int, owner_id: int, name: str,
             stream: Readable, replace: bool = False) -> buckets.ObjectRow:
    """Store `stream` (copied in chunks, never held in memory) as the file `name` of the owner's draft. BadRequest
    for a bad or taken name, Forbidden once published, NotFound for anyone else's deposition, 413 past a quota (the
    copy stops at the room left, as a bucket PUT's does); nothing is kept then. With `replace`, `name` must be a
    file of the draft (NotFound otherwise): the new bytes take its place in the list, and its size counts as room."""
    key = check_key(name)
    with db.read() as conn:
        dep = _writable(conn, dep_id, owner_id)
        # Checked before the bytes are copied, so a taken name costs nothing; put_object checks again.
        there = any(o["key"] == key for o in buckets.list_objects(conn, dep["bucket_id"]))
        if there and not replace:
            raise _taken(key)
        if replace and not there:
            raise NotFound(f"There is no file named “{key}” to replace: it was deleted or renamed.")
        credit = quotas.replaced_size(conn, dep["bucket_id"], key) if replace else 0
        room = quotas.room(conn, quota, dep["bucket_id"], credit)
    try:
        stored = store.write(stream, limit=None if room is None else room[0])
    except PayloadTooLarge:
        if room is None:
            raise
        raise quotas.exceeded(room[1], None, "file") from None
    try:
        with db.write() as conn:
            filefix.refuse_same_file(conn, dep, key, stored.checksum)
            obj, replaced = buckets.put_object(conn, dep["bucket_id"], key, stored, replace=replace, quota=quota,
                                               field="file")
            if replaced:
                buckets.release_files(conn, store, [replaced])
            checks.file_changed(conn, store, dep["bucket_id"], key)
    except BaseException:
        store.remove(stored.uri)
        raise
    return obj


def delete_file(db: Database, store: FileStore, dep_id: int, owner_id: int, key: str) -> None:
    """Remove the file `key` of the owner's draft (NotFound when there is none)."""
    with db.write() as conn:
        dep = _writable(conn, dep_id, owner_id)
        key = buckets.get_object(conn, dep["bucket_id"], key)["key"]
        freed = buckets.delete_object(conn, dep["bucket_id"], key)
        buckets.release_files(conn, store, [freed])
        checks.file_changed(conn, store, dep["bucket_id"], key)


def rename_file(db: Database, store: FileStore, dep_id: int, owner_id: int, key: str,
                new_name: str) -> buckets.ObjectRow:
    """Rename the file `key` of the owner's draft; BadRequest for a bad or taken new name."""
    new_key = check_key(new_name.strip())
    with db.write() as conn:
        dep = _writable(conn, dep_id, owner_id)
        if new_key != key and any(o["key"] == new_key for o in buckets.list_objects(conn, dep["bucket_id"])):
            raise BadRequest(f"A file named “{new_key}” is there already: choose another name.",
                             errors=[{"field": "name", "message": "Filename already exists."}])
        key = buckets.get_object(conn, dep["bucket_id"], key)["key"]
        obj = buckets.rename_object(conn, dep["bucket_id"], key, new_key)
        # The validation rows follow file names: the old name's row goes, the new name is examined.
        checks.file_changed(conn, store, dep["bucket_id"], new_key)
    return obj


def move_file(db: Database, dep_id: int, owner_id: int, key: str, step: int) -> None:
    """Move the file `key` of the owner's draft `step` places (-1: up, towards the first; 1: down); a move past
    either end leaves the order as it is."""
    with db.write() as conn:
        dep = _writable(conn, dep_id, owner_id)
        ids = [o["file_id"] for o in buckets.list_objects(conn, dep["bucket_id"])]
        index = ids.index(buckets.get_object(conn, dep["bucket_id"], key)["file_id"])
        target = index + step
        if 0 <= target < len(ids):
            ids[index], ids[target] = ids[target], ids[index]
            buckets.reorder(conn, dep["bucket_id"], ids)
