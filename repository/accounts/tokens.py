"""Users and personal access tokens: random, shown once, stored as a hash, compared in constant time."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, insert, or_, select, update

from repository.accounts import audit
from repository.errors import BadRequest, NotFound, ValidationError
from repository.storage.tables.accounts import tokens, users
from repository.storage.upsert import inserted_id
from repository.timeutil import utcnow

ADMIN_SCOPE = "admin"  # the administration API (docs/api/administration.md): only for administrators
SCOPES = ("deposit:write", "deposit:actions")  # what every user may give a token
KNOWN_SCOPES = (*SCOPES, ADMIN_SCOPE)
NAME_MAX = 100  # a name people choose in the applications area or the API
# `last_used` is written at most this often per token: one short write a minute, not one per request.
LAST_USED_EVERY = timedelta(seconds=60)
# One address: no separator or bracket a mail header would read as a second address or a display name.
EMAIL_RE = re.compile(r"^[^@\s,;<>\"]+@[^@\s,;<>\"]+$")


@dataclass(frozen=True)
class Identity:
    """Who is calling: a user and the scopes of the token used. A signed-in browser session (`token_id` None,
    `session` True) holds every scope; its writes need a CSRF token (repository.web.session)."""

    user_id: int
    email: str
    scopes: frozenset[str]
    token_id: int | None
    session: bool = False
    # When the token was last noted as used (read with it): tells whether to note this use (`note_use`).
    last_used: datetime | None = field(default=None, compare=False, repr=False)

    def has_scope(self, scope: str) -> bool:
        return scope in self.scopes

    def use_unnoted(self) -> bool:
        """Whether this token request should update the token's `last_used` (never for a browser session)."""
        return self.token_id is not None and (self.last_used is None or utcnow() - self.last_used >= LAST_USED_EVERY)


def hash_token(token: str) -> str:
    """SHA-256 is enough here: tokens carry 256 random bits, so no slow hash is needed against guessing."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def create_user(conn: Connection, email: str) -> int:
    """Create a user (or return the existing one with that e-mail); returns the user id."""
    email = email.strip().lower()
    if not EMAIL_RE.match(email):
        raise BadRequest(f"Not a valid e-mail address: {email!r}.")
    existing = conn.execute(select(users.c.id).where(users.c.email == email)).scalar()
    if existing is not None:
        return existing
    return inserted_id(conn.execute(insert(users).values(email=email, active=True, created=utcnow())))


def get_user_by_email(conn: Connection, email: str) -> dict | None:
    row = conn.execute(select(users).where(users.c.email == email.strip().lower())).mappings().first()
    return dict(row) if row else None


def parse_scopes(raw: str | list[str]) -> list[str]:
    """Split and check scopes; unknown ones are refused naming them."""
    items = raw.split(",") if isinstance(raw, str) else list(raw)
    scopes = sorted({s.strip() for s in items if s.strip()})
    unknown = [s for s in scopes if s not in KNOWN_SCOPES]
    if unknown:
        raise BadRequest(f"Unknown scope(s): {', '.join(unknown)}. Known scopes: {', '.join(KNOWN_SCOPES)}.")
    return scopes


def scopes_for(user: dict) -> tuple[str, ...]:
    """The scopes `user` may hold: every one for an administrator, all but `admin` for anyone else."""
    return KNOWN_SCOPES if ADMIN_SCOPE in (user.get("roles") or "").split() and user.get("active") else SCOPES


def _refuse_admin_scope(conn: Connection, user_id: int, scopes: list[str]) -> None:
    user = conn.execute(select(users.c.roles, users.c.active).where(users.c.id == user_id)).mappings().first()
    if ADMIN_SCOPE in scopes and (user is None or ADMIN_SCOPE not in scopes_for(dict(user))):
        message = f"Only administrators may hold the scope {ADMIN_SCOPE!r}."
        raise ValidationError(message, errors=[{"field": "scopes", "message": message}])


def create_token(conn: Connection, user_id: int, scopes: list[str], name: str = "token") -> tuple[int, str]:
    """Create a token; returns (token id, the token itself — shown this once only). ValidationError for the
    `admin` scope unless the user is an administrator."""
    _refuse_admin_scope(conn, user_id, parse_scopes(scopes))
    token = secrets.token_urlsafe(32)  # 256 bits
    token_id = inserted_id(conn.execute(
        insert(tokens).values(
            user_id=user_id,
            name=name,
            token_hash=hash_token(token),
            scopes=" ".join(parse_scopes(scopes)),
            created=utcnow(),
        )
    ))
    audit.record(conn, audit.owner(conn, user_id), "token.create", "token", token_id, name=name,
                 scopes=parse_scopes(scopes))
    return token_id, token


def new_token(conn: Connection, user_id: int, name: Any, scopes: Any) -> tuple[dict, str]:
    """Create a token from what a person sent (the applications area, `POST /api/tokens/`): a name (1 to
    NAME_MAX characters) and a list of known scopes, possibly empty. Returns (the token as listed, the token
    itself — shown this once only); ValidationError naming every problem."""
    errors = []
    if not isinstance(name, str) or not name.strip():
        errors.append({"field": "name", "message": "A name is required (a string that says what the token is for)."})
    elif len(name.strip()) > NAME_MAX:
        errors.append({"field": "name", "message": f"The name is longer than {NAME_MAX} characters."})
    if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes):
        errors.append({"field": "scopes", "message": f"A list of scopes, among: {', '.join(KNOWN_SCOPES)}."})
    elif unknown := sorted({s for s in scopes if s not in KNOWN_SCOPES}):
        errors.append({"field": "scopes", "message": f"Unknown scope(s): {', '.join(unknown)}. "
                                                     f"Known scopes: {', '.join(KNOWN_SCOPES)}."})
    if errors:
        raise ValidationError(errors=errors)
    token_id, token = create_token(conn, user_id, scopes, name.strip())
    created = get_token(conn, token_id, user_id)
    assert created is not None  # just inserted, in this transaction
    return created, token


_LISTED = (tokens.c.id, tokens.c.name, tokens.c.scopes, tokens.c.created, tokens.c.revoked, tokens.c.last_used)


def list_tokens(conn: Connection, user_id: int) -> list[dict]:
    """The user's tokens, oldest first: id, name, scopes (a list), created, revoked, last_used (never the secret)."""
    rows = conn.execute(select(*_LISTED).where(tokens.c.user_id == user_id).order_by(tokens.c.id)).mappings()
    return [dict(r, scopes=r["scopes"].split()) for r in rows]


def get_token(conn: Connection, token_id: int, user_id: int) -> dict | None:
    """One of the user's tokens as `list_tokens` shows it, or None (no such token, or another user's)."""
    row = conn.execute(select(*_LISTED).where(tokens.c.id == token_id, tokens.c.user_id == user_id)).mappings().first()
    return dict(row, scopes=row["scopes"].split()) if row else None


def revoke_token(conn: Connection, token_id: int, user_id: int | None = None) -> None:
    """Revoke a token (of `user_id` if given); NotFound if there is no such live token."""
    query = update(tokens).where(tokens.c.id == token_id, tokens.c.revoked.is_(None))
    if user_id is not None:
        query = query.where(tokens.c.user_id == user_id)
    if conn.execute(query.values(revoked=utcnow())).rowcount != 1:
        raise NotFound(f"No active token with id {token_id}.")
    owner_id = conn.execute(select(tokens.c.user_id).where(tokens.c.id == token_id)).scalar_one()
    audit.record(conn, audit.owner(conn, user_id if user_id is not None else owner_id), "token.revoke", "token",
                 token_id, owner=owner_id)


def authenticate(conn: Connection, token: str) -> Identity | None:
    """The identity behind a token, or None when it is unknown, revoked or its user inactive."""
    digest = hash_token(token)
    row = (
        conn.execute(
            select(tokens.c.id, tokens.c.token_hash, tokens.c.scopes, tokens.c.last_used,
                   users.c.id.label("user_id"), users.c.email)
            .join(users, users.c.id == tokens.c.user_id)
            .where(tokens.c.token_hash == digest, tokens.c.revoked.is_(None), users.c.active.is_(True))
        )
        .mappings()
        .first()
    )
    # The lookup is by digest; the constant-time comparison keeps the check itself free of timing leaks.
    if row is None or not hmac.compare_digest(row["token_hash"], digest):
        return None
    return Identity(row["user_id"], row["email"], frozenset(row["scopes"].split()), row["id"],
                    last_used=row["last_used"])


def note_use(conn: Connection, token_id: int) -> bool:
    """Set the token's `last_used` to now unless it was set less than a minute ago (by another request or worker
    process meanwhile: the condition is in the UPDATE). Returns whether it was written."""
    now = utcnow()
    stale = or_(tokens.c.last_used.is_(None), tokens.c.last_used <= now - LAST_USED_EVERY)
    return conn.execute(update(tokens).where(tokens.c.id == token_id, stale).values(last_used=now)).rowcount == 1
