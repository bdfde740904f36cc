"""Accounts behind an OpenID Connect provider (ORCID, an institution's IdP): the identities a provider vouches for
(`user_identities`: the provider's issuer and the subject it names), and the one rule for whom a sign-in reaches.

- an identity already linked signs its user in;
- otherwise, an address the provider says it verified (`email_verified` true) links the identity to the account
  with that address (which is then confirmed; an unconfirmed account's password is dropped, as nobody proved it
  was the owner's), or to a new account without a password (when sign-up is open);
- an address the provider did not verify links nothing: ORCID gives none at all, so the person is asked for an
  address, mailed a link (purpose "oidc-email"), and the identity is linked when that link is opened in the same
  browser (`link_confirmed_email`): an account is never reached through an address nobody proved.

A deactivated user is refused whichever way they come."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from sqlalchemy import Connection, insert, select, update

from repository.accounts.signup import MAX_EMAIL
from repository.accounts.tokens import EMAIL_RE, get_user_by_email
from repository.accounts.users import get_user
from repository.errors import BadRequest, Forbidden
from repository.storage.tables.accounts import user_identities, users
from repository.storage.upsert import inserted_id
from repository.timeutil import utcnow

LINK_PURPOSE = "oidc-email"
_PROVIDER_WIDTH = 64  # user_identities.provider
_SUBJECT_WIDTH = 255  # user_identities.subject (OpenID Connect's own bound on `sub`, which providers may not keep)


@dataclass(frozen=True)
class ProviderClaims:
    """What a validated ID token (and the userinfo answer) said about the person."""

    issuer: str
    subject: str
    email: str | None = None
    email_verified: bool = False

    @property
    def verified_email(self) -> str | None:
        """The address the provider verified, if it is a usable one (an account's address is at most MAX_EMAIL
        characters: a longer one is not taken, and the person is asked for one)."""
        email = (self.email or "").strip()
        if self.email_verified and EMAIL_RE.match(email) and len(email) <= MAX_EMAIL:
            return email.lower()
        return None


def provider_key(issuer: str) -> str:
    """The `provider` column's value for an issuer: the issuer itself (https://orcid.org), or, for an issuer longer
    than the column (some institutions' IdPs), a digest of it that stays the same for that issuer."""
    if len(issuer) <= _PROVIDER_WIDTH:
        return issuer
    return "sha256:" + hashlib.sha256(issuer.encode("utf-8")).hexdigest()[: _PROVIDER_WIDTH - 7]


def subject_key(subject: str) -> str:
    """The `subject` column's value for a `sub`: itself, or, for one longer than the column, a digest of it that
    stays the same for that `sub` (as provider_key does for issuers)."""
    if len(subject) <= _SUBJECT_WIDTH:
        return subject
    return "sha256:" + hashlib.sha256(subject.encode("utf-8")).hexdigest()


def find_identity_user(conn: Connection, issuer: str, subject: str) -> dict | None:
    """The user linked to (issuer, subject), whatever their state, or None."""
    user_id = conn.execute(select(user_identities.c.user_id).where(
        user_identities.c.provider == provider_key(issuer), user_identities.c.subject == subject_key(subject))).scalar()
    return get_user(conn, user_id) if user_id is not None else None


def link_identity(conn: Connection, user_id: int, issuer: str, subject: str) -> None:
    conn.execute(insert(user_identities).values(user_id=user_id, provider=provider_key(issuer),
                                                subject=subject_key(subject), created=utcnow()))


def sign_in_user(conn: Connection, claims: ProviderClaims, signup_enabled: bool) -> dict | None:
    """The user a provider's sign-in reaches (linking or creating the account as the module says), or None when the
    provider vouched for no address: the caller then asks for one. Forbidden for a deactivated user, or when a new
    account would be needed and sign-up is closed."""
    user = find_identity_user(conn, claims.issuer, claims.subject)
    if user is not None:
        return _usable(user)
    email = claims.verified_email
    if email is None:
        return None
    return _link_or_create(conn, claims.issuer, claims.subject, email, signup_enabled)


def link_confirmed_email(conn: Connection, issuer: str, subject: str, email: str, signup_enabled: bool) -> dict:
    """After the person opened the mailed link for `email`: link the identity to the account with that address or a
    new one. BadRequest when the identity was linked meanwhile (the link is single use); Forbidden as above."""
    if find_identity_user(conn, issuer, subject) is not None:
        raise BadRequest("This link has already been used. Sign in with the provider again.")
    return _link_or_create(conn, issuer, subject, email, signup_enabled)


def check_email(email: str) -> str:
    """The address normalised; BadRequest when it is not one."""
    email = (email or "").strip().lower()
    if not EMAIL_RE.match(email) or len(email) > MAX_EMAIL:
        raise BadRequest("Enter a valid e-mail address.")
    return email


def _link_or_create(conn: Connection, issuer: str, subject: str, email: str, signup_enabled: bool) -> dict:
    """Link (issuer, subject) to the account of `email`, whose owner the provider or our mail just proved."""
    user = get_user_by_email(conn, email)
    if user is None:
        if not signup_enabled:
            raise Forbidden("No account uses this address, and new accounts cannot be created here. Ask the "
                            "operator of this service for one.")
        now = utcnow()
        user_id = inserted_id(conn.execute(insert(users).values(email=email, active=True, created=now,
                                                                email_confirmed=now, password_hash=None)))
    else:
        _usable(user)
        user_id = user["id"]
        if user["email_confirmed"] is None:
            # Nobody had proved the address: whoever signed up with it may not be its owner, so their password and
            # sessions end here (else a sign-up made in advance for someone else's address would open their
            # account). The owner sets a password with a reset if they want one.
            conn.execute(update(users).where(users.c.id == user_id).values(
                email_confirmed=utcnow(), password_hash=None, auth_epoch=users.c.auth_epoch + 1))
    link_identity(conn, user_id, issuer, subject)
    found = get_user(conn, user_id)
    assert found is not None
    return found


def _usable(user: dict) -> dict:
    if not user["active"]:
        raise Forbidden("This account is deactivated. Ask the operator of this service if you think it should not be.")
    return user
