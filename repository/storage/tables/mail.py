"""The mail outbox: each message the service sends, queued in the transaction that decided to send it and sent by
the worker (`repository.accounts.mail`)."""

from __future__ import annotations

from sqlalchemy import Column, DateTime, Index, Integer, Table, Text

from repository.storage.tables.metadata import metadata

mail_outbox = Table(
    "mail_outbox",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("recipients", Text, nullable=False),  # the To addresses, comma-separated (kept for the operator's queries)
    Column("message", Text, nullable=False),  # the whole message (RFC 5322) but its From, added when sent
    Column("created", DateTime, nullable=False),
    Column("attempts", Integer, nullable=False, default=0),
    Column("last_error", Text, nullable=True),
    # Not tried before this time: a retry's backoff, or a sender's claim (a crashed sender's claim runs out).
    Column("not_before", DateTime, nullable=True),
    Column("sent", DateTime, nullable=True),
    Index("ix_mail_outbox_pending", "sent", "id"),
)
