"""Password hashes: argon2id with argon2-cffi's defaults (RFC 9106's second recommended parameters), rehashed at
sign-in when those defaults grow. A password is never logged, echoed or stored in any other form."""

from __future__ import annotations

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

_hasher = PasswordHasher()
# Verified against when no account matches, so an unknown address costs as long as a wrong password (no timing
# tells whether an address is registered).
_DUMMY = _hasher.hash("not a password of anyone")


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(stored: str | None, password: str) -> bool:
    """Whether `password` matches the `stored` hash; an account without a password (None) never matches, after the
    same work as a real check."""
    try:
        return _hasher.verify(stored or _DUMMY, password) and stored is not None
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def needs_rehash(stored: str) -> bool:
    return _hasher.check_needs_rehash(stored)
