"""Mail to a record's owner about a moderation decision (docs/operators/moderation.md#mail): queued in the
decision's transaction (`accounts.mail.enqueue`), so a decision rolled back sends nothing."""

from __future__ import annotations

from sqlalchemy import Connection, select

from repository.accounts import mail
from repository.storage.tables.accounts import users
from repository.storage.tables.records import records

TITLE_MAX = 80


def tell_owner(conn: Connection, recid: int, subject: str, lines: list[str]) -> None:
    """Mail the owner of record `recid`: "`subject`: <title>", the record named in the body, then `lines`."""
    row = conn.execute(select(records.c.metadata, users.c.email).join(users, users.c.id == records.c.owner_id)
                       .where(records.c.id == recid)).first()  # fmt: skip
    if row is None or row.email.endswith("@invalid"):  # a deleted account (docs/operators/administration.md)
        return
    title = str((row.metadata or {}).get("title") or f"record {recid}")
    short = title if len(title) <= TITLE_MAX else title[: TITLE_MAX - 1] + "…"
    body = "\n\n".join([f"Your record {recid}, “{title}”:", *lines,
                        "Reply to the repository's contact address if you have a question."])
    mail.enqueue(conn, row.email, f"{subject}: {short}".replace("\n", " "), body + "\n")
