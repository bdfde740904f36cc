"""Password hashes: argon2id (argon2-cffi) with one of its named parameter profiles, PASSWORD_HASH_PROFILE — by
default RFC 9106's low-memory recommendation (3 passes over 64 MiB) — and rehashed at sign-in when the profile
grows. A password is never logged, echoed or stored in any other form."""

from __future__ import annotations

from argon2 import PasswordHasher, profiles
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

PROFILES = {
    "rfc9106-low-memory": profiles.RFC_9106_LOW_MEMORY,
    "rfc9106-high-memory": profiles.RFC_9106_HIGH_MEMORY,
    "cheapest": profiles.CHEAPEST,  # the test suite's: a hash in microseconds, no protection against guessing
}


class _Hashing:
    """The process's hasher (one profile per process, set from the settings by build_services) and a hash that
    unknown addresses are verified against, so an unknown address costs as long as a wrong password."""

    def __init__(self, profile: str) -> None:
        self.profile = profile
        self.hasher = PasswordHasher.from_parameters(PROFILES[profile])
        self.dummy = self.hasher.hash("not a password of anyone")


_current = _Hashing("rfc9106-low-memory")


def use_profile(profile: str) -> None:
    global _current
    if profile != _current.profile:
        _current = _Hashing(profile)


def hash_password(password: str) -> str:
    return _current.hasher.hash(password)


def verify_password(stored: str | None, password: str) -> bool:
    """Whether `password` matches the `stored` hash (whatever profile made it); an account without a password
    (None) never matches, after the same work as a real check."""
    try:
        return _current.hasher.verify(stored or _current.dummy, password) and stored is not None
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def needs_rehash(stored: str) -> bool:
    """Whether `stored` was made with other parameters than the process's profile (then rehashed at sign-in)."""
    return _current.hasher.check_needs_rehash(stored)
