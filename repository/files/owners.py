"""Who may write a bucket through the bucket interface (`/api/files/<bucket>`): a deposit's owner only; a record's
bucket is locked. Anyone else is told the bucket does not exist, so the existence of a hidden bucket never shows.
Who may read one: `repository.records.access.readable_record`."""

from __future__ import annotations

from sqlalchemy import Connection, select

from repository.accounts.tokens import Identity
from repository.errors import Forbidden, NotFound
from repository.storage.tables.deposits import deposit_select, deposits
from repository.storage.tables.records import records


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
