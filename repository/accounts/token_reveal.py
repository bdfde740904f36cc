"""A new token's secret carried across the redirect after its creation (post/redirect/get), shown once.

The secret rides in the session cookie until the page that shows it is read. The cookie is signed, not encrypted,
so the secret is encrypted in it (Fernet, with a key derived from the service's secret for this purpose alone) and
expires after a few minutes: a cookie logged or left in a browser's storage does not give the token away."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from cryptography.fernet import Fernet, InvalidToken

# Long enough for a slow redirect, short enough that a stale reveal is not shown by a later visit.
REVEAL_SECONDS = 600


def _fernet(service_secret: bytes) -> Fernet:
    key = hashlib.sha256(b"repository.token-reveal\0" + service_secret).digest()
    return Fernet(base64.urlsafe_b64encode(key))


def seal(service_secret: bytes, token_id: int, secret: str) -> dict[str, Any]:
    """What the session holds for the page after creating token `token_id`."""
    return {"id": token_id, "sealed": _fernet(service_secret).encrypt(secret.encode()).decode()}


def unseal(service_secret: bytes, held: Any) -> tuple[int, str] | None:
    """(token id, secret) of a sealed reveal still within REVEAL_SECONDS; None for anything else."""
    if not isinstance(held, dict) or not isinstance(held.get("id"), int) or not isinstance(held.get("sealed"), str):
        return None
    try:
        secret = _fernet(service_secret).decrypt(held["sealed"].encode(), ttl=REVEAL_SECONDS)
    except InvalidToken:
        return None
    return held["id"], secret.decode()
