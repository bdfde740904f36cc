"""Mail: one outbox of messages. Code that decides to tell someone something queues the message (`enqueue`) in its
own write transaction, so a rollback sends nothing and a commit loses nothing; right after the commit the process's
`Mailer` thread sends it (never the request itself), and the worker's pass retries what failed, with backoff.

Sent through SMTP (MAIL_SMTP_*) or, with no MAIL_SMTP_HOST (the embedded shape), written as an `.eml` file under
INSTANCE_PATH/mail, so a single-machine install works with nothing else. A message is marked sent only once the
server accepted it or its file is in place: delivery is at least once (a crash between the two sends it again)."""

from __future__ import annotations

import datetime as dt
import email
import email.policy
import logging
import os
import re
import smtplib
import ssl
import tempfile
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from email.message import EmailMessage
from email.utils import format_datetime, getaddresses, make_msgid, parseaddr

from sqlalchemy import Connection, RowMapping, insert, select, update

from repository.config import Settings
from repository.ondemand import OnDemandThread
from repository.storage import Database
from repository.storage.engine import after_commit
from repository.storage.tables.mail import mail_outbox
from repository.timeutil import utcnow

log = logging.getLogger("repository.accounts.mail")

# The after-commit work that sends the messages just committed: wired on the Database by the process's Mailer.
SEND = "mail.send"
MAX_BACKOFF_SECONDS = 3600
# A sender claims a message for this long before sending it, so two senders (the Mailer thread and a worker's
# pass, here or in another process) do not both send it; a crashed sender's claim runs out and the message is sent.
CLAIM_SECONDS = 300
SMTP_TIMEOUT_SECONDS = 30
BATCH = 50
_ADDRESS = re.compile(r"[^@\s,;<>\"]+@[^@\s,;<>\"]+")


class MailError(ValueError):
    """A message that cannot be sent as asked (an address or subject that would forge headers)."""


def enqueue(conn: Connection, to: str | Sequence[str], subject: str, body_text: str,
            reply_to: str | None = None) -> int:
    """Queue a plain-text message to `to` (one address or several) in the caller's transaction; sent once it
    commits. Returns the message's id. MailError for a line break in the subject or an address (header injection)
    or an address that is not one."""
    recipients = [to] if isinstance(to, str) else list(to)
    if not recipients:
        raise MailError("a message needs at least one recipient")
    message = EmailMessage()
    message["To"] = ", ".join(_checked_address(a) for a in recipients)
    if reply_to is not None:
        message["Reply-To"] = _checked_address(reply_to)
    message["Subject"] = _single_line("subject", subject)
    message["Date"] = format_datetime(utcnow().replace(tzinfo=dt.UTC))
    message["Message-ID"] = make_msgid()  # kept across retries: a server may drop a repeated delivery
    # Quoted-printable keeps the stored message ASCII whatever the text, so any SMTP server takes it as it is.
    message.set_content(body_text, charset="utf-8", cte="quoted-printable")
    message_id = conn.execute(insert(mail_outbox).values(
        recipients=", ".join(recipients), message=message.as_string(), created=utcnow(), attempts=0,
    ).returning(mail_outbox.c.id)).scalar_one()
    after_commit(conn, SEND)
    return int(message_id)


def send_pending(db: Database, settings: Settings, limit: int = BATCH, now: dt.datetime | None = None) -> int:
    """Send up to `limit` due messages (new ones and retries whose time has come; `now` for a pass at another
    time), outside any transaction; returns how many were sent. A failure leaves the message queued with its
    attempt counted and its next try set (exponential backoff)."""
    now = now or utcnow()
    rows = _claim(db, limit, now)
    if not rows:
        return 0
    sent, handled = 0, set()
    try:
        with _transport(settings) as deliver:
            for row in rows:
                handled.add(row["id"])
                try:
                    where = deliver(row["id"], _with_from(row["message"], settings))
                except (smtplib.SMTPException, OSError) as exc:
                    _failed(db, row, exc, now)
                    continue
                log.info("mail %s to %s: %s", row["id"], row["recipients"], where)
                _mark_sent(db, row["id"])
                sent += 1
    except (smtplib.SMTPException, OSError) as exc:  # no connection at all: the messages not tried wait
        for row in rows:
            if row["id"] not in handled:
                _failed(db, row, exc, now)
    return sent


class Mailer(OnDemandThread):
    """Sends the outbox in a thread of this process started right after the commit that queued a message
    (`kick()`, wired under SEND), so a request never waits for a mail server; also the worker pass's mail task.
    `defer` hands it work that decides whether to mail at all, so that a request costs the same either way."""

    thread_name = "mail"

    def __init__(self, db: Database, settings: Settings) -> None:
        super().__init__()
        self.db = db
        self.settings = settings
        self._jobs: deque[Callable[[Connection], object]] = deque()

    def defer(self, job: Callable[[Connection], object]) -> None:
        """Run `job(conn)` in a write transaction of its own in this process's mail thread, soon, and send what it
        queued. Kept in memory only: a job waiting when the process stops is lost (the person asks again)."""
        self._jobs.append(job)
        self.kick()

    def process_pending(self) -> int:
        with self._busy:
            return self._run_jobs() + send_pending(self.db, self.settings)

    def _run_jobs(self) -> int:
        done = 0
        while self._jobs:
            job = self._jobs.popleft()
            try:
                with self.db.write() as conn:
                    job(conn)
            except Exception:  # noqa: BLE001 - one failed job must not stop the others or the sending
                log.exception("deferred mail job failed")
            done += 1
        return done


def _checked_address(value: str) -> str:
    value = _single_line("address", value).strip()
    # parseaddr reads the first address only: "a@x.org,postmaster" would be two recipients in the To header.
    if not _ADDRESS.fullmatch(parseaddr(value)[1]) or len(getaddresses([value])) != 1:
        raise MailError(f"not an e-mail address: {value!r}")
    return value


def _single_line(what: str, value: str) -> str:
    if "\r" in value or "\n" in value:
        raise MailError(f"a line break in the {what} of a message")
    return value


def _claim(db: Database, limit: int, now: dt.datetime) -> list[RowMapping]:
    """The due messages this sender may send: each claimed by moving its next try CLAIM_SECONDS ahead, with a
    condition that only one of two concurrent senders meets (the other's update finds the row no longer due)."""
    due = mail_outbox.c.sent.is_(None) & (mail_outbox.c.not_before.is_(None) | (mail_outbox.c.not_before <= now))
    with db.read() as conn:  # a pass with nothing to send takes no write lock
        rows = conn.execute(select(mail_outbox).where(due).order_by(mail_outbox.c.id).limit(limit)).mappings().all()
    if not rows:
        return []
    claimed = []
    with db.write() as conn:
        for row in rows:
            taken = conn.execute(update(mail_outbox).where(mail_outbox.c.id == row["id"], due)
                                 .values(not_before=now + dt.timedelta(seconds=CLAIM_SECONDS)))
            if taken.rowcount == 1:
                claimed.append(row)
    return claimed


def _mark_sent(db: Database, message_id: int) -> None:
    with db.write() as conn:
        conn.execute(update(mail_outbox).where(mail_outbox.c.id == message_id).values(sent=utcnow()))


def _failed(db: Database, row: RowMapping, exc: BaseException, now: dt.datetime) -> None:
    attempts = row["attempts"] + 1
    log.warning("mail %s to %s not sent (attempt %s): %s", row["id"], row["recipients"], attempts, exc)
    delay = min(MAX_BACKOFF_SECONDS, 2**attempts)
    with db.write() as conn:
        conn.execute(update(mail_outbox).where(mail_outbox.c.id == row["id"]).values(
            attempts=attempts, last_error=str(exc)[:2000], not_before=now + dt.timedelta(seconds=delay),
        ))


def _with_from(stored: str, settings: Settings) -> EmailMessage:
    """The stored message with the From this instance sends as (its settings may have changed since)."""
    message = email.message_from_string(stored, _class=EmailMessage, policy=email.policy.default)
    del message["From"]
    message["From"] = settings.MAIL_FROM or settings.ADMIN_EMAIL
    return message


Deliver = Callable[[int, EmailMessage], str]


@contextmanager
def _transport(settings: Settings) -> Iterator[Deliver]:
    """A function delivering one message (returns where it went): to MAIL_SMTP_HOST over one connection for the
    batch, or into an .eml file when no host is set."""
    if not settings.MAIL_SMTP_HOST:
        directory = os.path.join(settings.INSTANCE_PATH, "mail")
        os.makedirs(directory, exist_ok=True)
        yield lambda message_id, message: _write_eml(directory, message_id, message)
        return
    with _connect(settings) as client:
        def deliver(_message_id: int, message: EmailMessage) -> str:
            refused = client.send_message(message)  # raises when no recipient was accepted
            where = f"accepted by {settings.MAIL_SMTP_HOST}:{settings.MAIL_SMTP_PORT}"
            return where + (f", refused for {', '.join(refused)}" if refused else "")

        yield deliver


def _connect(settings: Settings) -> smtplib.SMTP:
    host, port, mode = settings.MAIL_SMTP_HOST, settings.MAIL_SMTP_PORT, settings.MAIL_SMTP_TLS
    context = ssl.create_default_context()
    client: smtplib.SMTP
    if mode == "ssl":
        client = smtplib.SMTP_SSL(host, port, timeout=SMTP_TIMEOUT_SECONDS, context=context)
    else:
        client = smtplib.SMTP(host, port, timeout=SMTP_TIMEOUT_SECONDS)
    try:
        if mode == "starttls":
            client.starttls(context=context)
        if settings.MAIL_SMTP_USER:
            client.login(settings.MAIL_SMTP_USER, settings.MAIL_SMTP_PASSWORD)
    except BaseException:
        client.close()
        raise
    return client


def _write_eml(directory: str, message_id: int, message: EmailMessage) -> str:
    """Write the message to <directory>/<id>.eml atomically (a temporary file renamed): a reader never sees half a
    message, and a retry after a crash replaces the same file."""
    path = os.path.join(directory, f"{message_id:08d}.eml")
    fd, temporary = tempfile.mkstemp(dir=directory, prefix=".mail-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(message.as_bytes(policy=email.policy.SMTP))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
    return f"written to {path}"
