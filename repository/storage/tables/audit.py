"""The audit log (docs/operators/administration.md#audit-log): one row per administrator's or moderator's action
(refusals included) and per owner's publish, edit, deletion, new version and token change, written in the
transaction of the change. Rows are only ever inserted; the retention sweep deletes the ones past AUDIT_LOG_DAYS."""

from __future__ import annotations

from sqlalchemy import Column, DateTime, Index, Integer, String, Table, Text

from repository.storage.tables.metadata import metadata

audit_log = Table(
    "audit_log",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("created", DateTime, nullable=False, index=True),
    # Who acted: no foreign key, so that the entry outlives a deleted account (the e-mail is kept as written then).
    Column("actor_id", Integer, nullable=True, index=True),
    Column("actor_email", String(255), nullable=False, default=""),
    Column("action", String(64), nullable=False, index=True),  # e.g. user.block, record.takedown, admin.refused
    Column("target_kind", String(32), nullable=False, default=""),  # user | record | deposit | token | request
    Column("target_id", String(64), nullable=False, default=""),
    Column("address", String(64), nullable=False, default=""),  # the client address, "cli" from the command line
    # JSON: {"before": ..., "after": ..., "reason": ..., ...}: what changed, as it was and as it became.
    Column("detail", Text, nullable=False, default="{}"),
    Index("ix_audit_log_target", "target_kind", "target_id"),
)
