"""The mail a test app sent, read the way an operator of the embedded shape would: the .eml files under
INSTANCE_PATH/mail/ (no MAIL_SMTP_HOST in test settings)."""

from __future__ import annotations

import email
import email.policy
import os
import re
from email.message import EmailMessage

from flask import Flask


def sent_mail(app: Flask, to: str | None = None) -> list[EmailMessage]:
    """Every message the app has sent so far (oldest first), optionally only those to `to`. Sends what is still
    queued first (waiting for the app's mail thread if it is sending)."""
    services = app.extensions["repository"]
    services.mailer.process_pending()
    directory = os.path.join(services.settings.INSTANCE_PATH, "mail")
    if not os.path.isdir(directory):
        return []
    messages = []
    for name in sorted(os.listdir(directory)):
        if name.endswith(".eml"):
            with open(os.path.join(directory, name), "rb") as handle:
                message = email.message_from_binary_file(handle, policy=email.policy.default)
            assert isinstance(message, EmailMessage)
            if to is None or to.lower() in str(message["To"]).lower():
                messages.append(message)
    return messages


def body(message: EmailMessage) -> str:
    part = message.get_body(("plain",))
    assert part is not None
    return str(part.get_content())


def links(message: EmailMessage) -> list[str]:
    """The https links in a message's text, in order."""
    return re.findall(r"https://\S+", body(message))


def last_link(app: Flask, to: str, containing: str = "") -> str:
    """The last link containing `containing` in the newest message to `to`, as a path for the test client."""
    for message in reversed(sent_mail(app, to)):
        found = [link for link in links(message) if containing in link]
        if found:
            return found[-1].removeprefix("https://localhost")
    raise AssertionError(f"no mail to {to} with a link containing {containing!r}")
