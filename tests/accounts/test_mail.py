"""The mail outbox over real components: .eml files in the embedded shape, a real SMTP server (aiosmtpd) started
here, refusals and a dead server retried by a later pass, rollbacks and header injection."""

from __future__ import annotations

import datetime as dt
import email
import email.policy
import os
import socket
import ssl
from collections.abc import Callable, Iterator

import pytest
from aiosmtpd.controller import Controller
from helpers.http import free_port
from sqlalchemy import func, select

from repository.accounts import mail
from repository.accounts.mail import MailError, enqueue, send_pending
from repository.ondemand import wait_all_idle
from repository.services import Services, build_services
from repository.serving.tls import ensure_self_signed
from repository.storage.tables.mail import mail_outbox
from repository.timeutil import utcnow

BODY = "Hello Ada,\n\nconfirm your address: https://localhost/confirm/abc — merci, über.\n"


class Inbox:
    """An aiosmtpd handler keeping what it accepts; `refuse` makes it answer DATA with a permanent error."""

    def __init__(self) -> None:
        self.envelopes: list = []
        self.refuse = False

    async def handle_DATA(self, server, session, envelope) -> str:  # type: ignore[no-untyped-def]
        if self.refuse:
            return "550 mailbox unavailable"
        self.envelopes.append(envelope)
        return "250 OK"


@pytest.fixture
def make_services(make_settings) -> Iterator[Callable[..., Services]]:  # type: ignore[no-untyped-def]
    built: list[Services] = []

    def make(**overrides) -> Services:  # type: ignore[no-untyped-def]
        services = build_services(make_settings(**overrides))
        built.append(services)
        return services

    yield make
    for services in built:
        wait_all_idle()  # every background thread's connection back in the pool before the pool goes
        services.db.dispose()


@pytest.fixture
def smtp() -> Iterator[tuple[Inbox, int]]:
    inbox, port = Inbox(), free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    yield inbox, port
    controller.stop()


def _smtp_settings(port: int, **more: object) -> dict:
    return {"MAIL_SMTP_HOST": "127.0.0.1", "MAIL_SMTP_PORT": port, "MAIL_SMTP_TLS": "none",
            "MAIL_FROM": "repository@example.org", **more}


def _queue(services: Services, to: str = "Ada Lovelace <ada@example.org>", subject: str = "Confirm your address",
           body: str = BODY) -> int:
    with services.db.write() as conn:
        return enqueue(conn, to, subject, body)


def _row(services: Services, message_id: int) -> dict:
    with services.db.read() as conn:
        return dict(conn.execute(select(mail_outbox).where(mail_outbox.c.id == message_id)).mappings().one())


def test_without_smtp_host_each_message_becomes_an_eml_file_after_the_commit(make_services, caplog):
    services = make_services()
    caplog.set_level("INFO", logger="repository.accounts.mail")
    message_id = _queue(services, subject="Confirm your address — über")
    services.mailer.wait_idle()  # the commit handed it to the mail thread

    directory = os.path.join(services.settings.INSTANCE_PATH, "mail")
    assert os.listdir(directory) == [f"{message_id:08d}.eml"]  # no temporary file left behind
    path = os.path.join(directory, f"{message_id:08d}.eml")
    with open(path, "rb") as handle:
        parsed = email.message_from_bytes(handle.read(), policy=email.policy.default)
    assert parsed["To"] == "Ada Lovelace <ada@example.org>"
    assert parsed["From"] == services.settings.ADMIN_EMAIL  # MAIL_FROM unset
    assert parsed["Subject"] == "Confirm your address — über"
    assert parsed["Message-ID"] and parsed["Date"]
    assert parsed.get_content().replace("\r\n", "\n") == BODY  # the file has the CRLF lines of the wire
    assert path in caplog.text
    row = _row(services, message_id)
    assert row["sent"] is not None and row["attempts"] == 0
    assert send_pending(services.db, services.settings) == 0  # sent once only


def test_the_worker_pass_sends_what_no_commit_handed_over(make_services):
    services = make_services()
    with services.db.read() as conn:  # not a write(): no after-commit, the message is left to the worker's pass
        message_id = enqueue(conn, ["ada@example.org", "bob@example.org"], "Weekly digest", "Nothing new.")
        conn.commit()
    directory = os.path.join(services.settings.INSTANCE_PATH, "mail")
    assert not os.path.exists(directory)
    services.indexer.run_pass()
    with open(os.path.join(directory, f"{message_id:08d}.eml"), "rb") as handle:
        parsed = email.message_from_bytes(handle.read(), policy=email.policy.default)
    assert parsed["To"] == "ada@example.org, bob@example.org"
    assert _row(services, message_id)["sent"] is not None


def test_a_rollback_sends_nothing(make_services):
    services = make_services()
    with pytest.raises(RuntimeError), services.db.write() as conn:
        enqueue(conn, "ada@example.org", "Never", BODY)
        raise RuntimeError("the request failed")
    services.mailer.wait_idle()
    assert send_pending(services.db, services.settings) == 0
    assert not os.path.exists(os.path.join(services.settings.INSTANCE_PATH, "mail"))
    with services.db.read() as conn:
        assert conn.execute(select(func.count()).select_from(mail_outbox)).scalar() == 0


def test_an_smtp_server_receives_the_message(make_services, smtp):
    inbox, port = smtp
    services = make_services(**_smtp_settings(port))
    message_id = _queue(services)
    services.mailer.wait_idle()

    assert len(inbox.envelopes) == 1
    envelope = inbox.envelopes[0]
    assert envelope.mail_from == "repository@example.org"
    assert envelope.rcpt_tos == ["ada@example.org"]
    parsed = email.message_from_bytes(envelope.content, policy=email.policy.default)
    assert parsed["Subject"] == "Confirm your address" and parsed["From"] == "repository@example.org"
    assert parsed.get_content().replace("\r\n", "\n") == BODY
    assert _row(services, message_id)["sent"] is not None
    assert not os.path.exists(os.path.join(services.settings.INSTANCE_PATH, "mail"))


def test_a_refused_message_stays_queued_and_a_later_pass_sends_it(make_services, smtp):
    inbox, port = smtp
    inbox.refuse = True
    services = make_services(**_smtp_settings(port))
    before = utcnow()
    message_id = _queue(services)
    services.mailer.wait_idle()
    after = utcnow()

    row = _row(services, message_id)
    assert row["sent"] is None and row["attempts"] == 1 and "550" in row["last_error"]
    # Backoff: the first failure waits 2 s from the attempt (made between `before` and `after`), and a pass
    # before then does not retry it.
    assert before + dt.timedelta(seconds=2) <= row["not_before"] <= after + dt.timedelta(seconds=2)
    assert send_pending(services.db, services.settings, now=row["not_before"] - dt.timedelta(seconds=1)) == 0
    assert _row(services, message_id)["attempts"] == 1
    inbox.refuse = False
    assert send_pending(services.db, services.settings, now=utcnow() + dt.timedelta(hours=2)) == 1
    assert [e.rcpt_tos for e in inbox.envelopes] == [["ada@example.org"]]
    assert _row(services, message_id)["sent"] is not None


def test_a_dead_server_delays_nothing_and_loses_nothing(make_services):
    port = free_port()  # nothing listens there yet
    services = make_services(**_smtp_settings(port))
    first, second = _queue(services), _queue(services, to="bob@example.org")
    services.mailer.wait_idle()
    assert [_row(services, i)["attempts"] for i in (first, second)] == [1, 1]
    later = utcnow() + dt.timedelta(hours=2)
    assert send_pending(services.db, services.settings, now=later) == 0  # still down: counted again
    assert [_row(services, i)["attempts"] for i in (first, second)] == [2, 2]

    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        assert send_pending(services.db, services.settings, now=later + dt.timedelta(hours=2)) == 2
    finally:
        controller.stop()
    assert sorted(e.rcpt_tos[0] for e in inbox.envelopes) == ["ada@example.org", "bob@example.org"]


def test_a_commit_never_waits_for_the_mail_server(make_services):
    with socket.socket() as silent:  # takes connections and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        services = make_services(**_smtp_settings(silent.getsockname()[1]))
        message_id = _queue(services)
        row = _row(services, message_id)  # the write returned while the mail thread waits for a greeting
        assert row["sent"] is None and row["attempts"] == 0
    services.mailer.wait_idle()  # the server is gone: the attempt fails and is counted
    row = _row(services, message_id)
    assert row["sent"] is None and row["attempts"] == 1


def test_starttls_with_the_server_certificate(make_services, tmp_path, monkeypatch):
    cert, key = str(tmp_path / "cert.pem"), str(tmp_path / "key.pem")
    ensure_self_signed(cert, key, ["127.0.0.1", "localhost"])
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    inbox, port = Inbox(), free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port, tls_context=context, require_starttls=True)
    controller.start()
    try:
        monkeypatch.setenv("SSL_CERT_FILE", cert)  # the client trusts this server's certificate, and only it
        services = make_services(**_smtp_settings(port, MAIL_SMTP_TLS="starttls"))
        message_id = _queue(services)
        services.mailer.wait_idle()
    finally:
        controller.stop()
    assert [e.rcpt_tos for e in inbox.envelopes] == [["ada@example.org"]]
    assert _row(services, message_id)["sent"] is not None


@pytest.mark.parametrize("to, subject", [
    ("ada@example.org", "Hello\r\nBcc: eve@example.org"),
    ("ada@example.org", "Hello\nBcc: eve@example.org"),
    ("ada@example.org\r\nBcc: eve@example.org", "Hello"),
    ("Ada <ada@example.org>\nBcc: eve@example.org", "Hello"),
    ("not an address", "Hello"),
    ("ada@example.org,postmaster", "Hello"),  # one address that the To header would read as two
    ("", "Hello"),
])
def test_line_breaks_and_non_addresses_are_refused(make_services, to, subject):
    services = make_services()
    with pytest.raises(MailError), services.db.write() as conn:
        enqueue(conn, to, subject, BODY)
    with services.db.read() as conn:
        assert conn.execute(select(func.count()).select_from(mail_outbox)).scalar() == 0


def test_two_senders_do_not_send_the_same_message_twice(make_services):
    services = make_services()
    services.db.hooks.pop(mail.SEND)  # leave the message to the passes below
    message_id = _queue(services)
    claimed = mail._claim(services.db, 10, utcnow())
    assert [row["id"] for row in claimed] == [message_id]
    assert send_pending(services.db, services.settings) == 0  # claimed by the first sender, which is still at it
