"""Signed, expiring links sent by mail (confirm an address, reset a password, confirm an access request): the
payload signed with the service's secret and a salt per purpose, so a link made for one purpose is worthless for
another. Single use comes from the payload: it names the state the link was made for (the address not yet
confirmed, the password hash it replaces...), and the handler refuses a link whose state has passed."""

from __future__ import annotations

from typing import Any

from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer


class LinkInvalid(ValueError):
    """A link that was tampered with, made for another purpose, or cut short."""


class LinkExpired(LinkInvalid):
    """A genuine link past its time."""


def make_link_token(secret: bytes, purpose: str, payload: dict[str, Any]) -> str:
    return URLSafeTimedSerializer(secret, salt=f"repository.link.{purpose}").dumps(payload)


def read_link_token(secret: bytes, purpose: str, token: str, max_age_seconds: int) -> dict[str, Any]:
    """The payload of a link made for `purpose` within the last `max_age_seconds`; LinkExpired or LinkInvalid."""
    serializer = URLSafeTimedSerializer(secret, salt=f"repository.link.{purpose}")
    try:
        payload = serializer.loads(token, max_age=max_age_seconds)
    except SignatureExpired:
        raise LinkExpired("This link has expired.") from None
    except BadSignature:
        raise LinkInvalid("This link is not valid.") from None
    if not isinstance(payload, dict):
        raise LinkInvalid("This link is not valid.")
    return payload
