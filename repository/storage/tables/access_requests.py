"""Access requests for restricted records: a requester justifies, the record's owner decides; an accepted request
is the requester's grant to the record's files while it lasts (`repository.records.access_requests`)."""

from __future__ import annotations

from sqlalchemy import Column, DateTime, ForeignKey, Index, Integer, String, Table, Text

from repository.storage.tables.metadata import metadata

JUSTIFICATION_MAX = 5000
MESSAGE_MAX = 5000

access_requests = Table(
    "access_requests",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("recid", Integer, ForeignKey("recids.id"), nullable=False),  # the record version asked for
    # NULL for a guest, known by the address only (confirmed through a mailed link before the owner hears of it).
    Column("requester_user_id", Integer, ForeignKey("users.id", ondelete="SET NULL"), nullable=True, index=True),
    Column("requester_email", String(255), nullable=False),  # lower case
    Column("justification", Text, nullable=False),
    Column("status", String(24), nullable=False),  # pending_confirmation | pending | accepted | rejected | revoked
    Column("created", DateTime, nullable=False),
    Column("decided", DateTime, nullable=True),  # accepted or rejected; revoked sets it again
    Column("decided_by", Integer, ForeignKey("users.id", ondelete="SET NULL"), nullable=True),
    Column("message", Text, nullable=True),  # the owner's, sent to the requester with the decision
    Column("expires", DateTime, nullable=True),  # an accepted request's end; NULL: no end
    # The owner's list (pending first) and the grant check (requests of a record by status).
    Index("ix_access_requests_recid_status", "recid", "status"),
    Index("ix_access_requests_email_status", "requester_email", "status"),
)
