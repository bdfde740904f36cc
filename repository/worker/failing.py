"""DOI registrations that keep failing: after DOI_FAILURE_NOTIFY_ATTEMPTS failed attempts in a row the operator is
told in the log and the depositor by mail, once per streak. Registration goes on being retried all the same.

A streak is one `register_doi` outbox row (a publish) failing until it succeeds: its attempts count the failures in
a row. A record has one such row at a time (it cannot be edited before its registration succeeds), so a later
publish that fails again starts a new streak, and the depositor hears of it again.
"""

from __future__ import annotations

import logging

from sqlalchemy import Connection, RowMapping, select

from repository import urls
from repository.accounts import mail
from repository.accounts.users import get_user
from repository.config import Settings
from repository.outbox import MAX_BACKOFF_SECONDS
from repository.storage.tables.records import records

log = logging.getLogger("repository.worker.failing")


def registration_failed(conn: Connection, settings: Settings, row: RowMapping, attempts: int, error: str) -> None:
    """Called in the transaction that counts the `attempts`-th failure of the `register_doi` outbox `row`: at the
    threshold, log it for the operator and queue the mail to the depositor."""
    threshold = settings.DOI_FAILURE_NOTIFY_ATTEMPTS
    if not threshold or attempts != threshold:
        return
    record = conn.execute(
        select(records.c.owner_id, records.c.metadata, records.c.doi, records.c.deleted)
        .where(records.c.id == row["recid"])
    ).mappings().first()
    if record is None or record["deleted"] is not None:
        return
    user = get_user(conn, record["owner_id"])
    to = user["email"] if user is not None and user["active"] else None
    log.error("DOI registration of record %s (%s) has failed %s times in a row, still retrying; its depositor is %s. "
              "Last error: %s", row["recid"], record["doi"], attempts, "mailed" if to else "not mailed (no active "
              "account)", error)
    if to is None:
        return
    title = " ".join(str(record["metadata"].get("title") or "Untitled").split())
    base = settings.BASE_URL
    body = (
        f"Hello,\n\nyour record \"{title}\" is published, but registering its DOI {record['doi']} with the DOI "
        f"agency has failed {attempts} times in a row. Until it succeeds, the DOI may not resolve (or may show "
        "outdated metadata), and the record cannot be edited.\n\n"
        f"The service keeps trying on its own, at least every {MAX_BACKOFF_SECONDS // 60} minutes; you need do "
        "nothing. Its operator has been told. You will not receive another message about this unless "
        "registration fails again after it has succeeded.\n\n"
        f"The record: {urls.record_html(base, row['recid'])}\n"
        f"Your deposit: {urls.deposit_html(base, row['recid'])}\n\n"
        f"-- \n{settings.REPOSITORY_NAME}\n{base}\n"
    )
    mail.enqueue(conn, to, f"DOI registration delayed: {title}", body)
