"""Whose a bucket is, for the bucket interface (`/api/files/<bucket>`): a deposit's, written by its owner only, or
a record's, locked and readable as the record's access rules say. Anyone else is told the bucket or file does
not exist, so the existence of a hidden file never shows."""

from __future__ import annotations

from sqlalchemy import Connection, select

from repository.accounts.tokens import Identity
from repository.errors import Forbidden, NotFound
from repository.records.access import can_read_files
from repository.storage.tables.deposits import deposit_select, deposits, records


def writable_deposit(conn: Connection, bucket_id: str, who: Identity) -> dict:
    """The deposit of `who` owning `bucket_id`: NotFound for anyone else, Forbidden (403) on a bucket of one of
    their records (locked)."""
    dep = conn.execute(deposit_select().where(deposits.c.bucket_id == bucket_id)).mappings().first()
    if dep is not None and dep["owner_id"] == who.user_id:
        return dict(dep)
    rec = conn.execute(select(records.c.owner_id).where(records.c.bucket_id == bucket_id)).first()
    if rec is not None and rec.owner_id == who.user_id:
        raise Forbidden("Bucket is locked for modifications.")
    raise NotFound("Bucket does not exist.")


def readable_record(conn: Connection, bucket_id: str, who: Identity | None) -> dict | None:
    """The records row owning `bucket_id` when `who` may read its files, None for a bucket of their own deposit;
    NotFound otherwise."""
    rec = conn.execute(select(records).where(records.c.bucket_id == bucket_id)).mappings().first()
    if rec is not None:
        if can_read_files(dict(rec), who, conn):
            return dict(rec)
        raise NotFound("The file does not exist.")
    dep = conn.execute(select(deposits.c.owner_id).where(deposits.c.bucket_id == bucket_id)).first()
    if dep is None or who is None or dep.owner_id != who.user_id:
        raise NotFound("The file does not exist.")
    return None
