"""A user's personal data (docs/operators/administration.md#personal-data): everything the service holds about
them as one JSON document (access under the GDPR), and the erasure of an account: the personal data go, what they
published stays public with its creators as written."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, delete, or_, select, update

from repository.accounts import admin, audit, users
from repository.accounts.audit import Actor
from repository.accounts.signup import resend_confirmation
from repository.config import Settings
from repository.errors import Conflict, Forbidden
from repository.storage.tables.access_requests import access_requests
from repository.storage.tables.accounts import tokens, user_identities
from repository.storage.tables.accounts import users as users_table
from repository.storage.tables.audit import audit_log
from repository.storage.tables.corrections import deletion_requests
from repository.storage.tables.deposits import deposits
from repository.storage.tables.records import records
from repository.storage.tables.site import terms_acceptances
from repository.timeutil import isoformat


def _plain(row: Any) -> dict:
    """A row as JSON-ready values: plain `str` keys (the column names are a subclass), times as ISO 8601."""
    return {str(k): isoformat(v) if hasattr(v, "isoformat") else v for k, v in row.items()}


def _rows(conn: Connection, query: Any) -> list[dict]:
    return [_plain(row) for row in conn.execute(query).mappings()]


def export(conn: Connection, user_id: int) -> dict:
    """Everything held about user `user_id` (never a password or token hash), as JSON-ready values."""
    user = admin.get(conn, user_id)
    account = _plain({k: v for k, v in user.items() if k != "password_hash"})
    account["has_password"] = bool(user["password_hash"])
    return {
        "account": account,
        "linked_sign_ins": _rows(conn, select(user_identities.c.provider, user_identities.c.subject,
                                              user_identities.c.created).where(user_identities.c.user_id == user_id)),
        "tokens": _rows(conn, select(tokens.c.id, tokens.c.name, tokens.c.scopes, tokens.c.created,
                                     tokens.c.revoked, tokens.c.last_used).where(tokens.c.user_id == user_id)),
        "deposits": _rows(conn, select(deposits.c.id, deposits.c.status, deposits.c.doi, deposits.c.created,
                                       deposits.c.modified).where(deposits.c.owner_id == user_id)),
        "records": _rows(conn, select(records.c.id, records.c.doi, records.c.created, records.c.deleted)
                         .where(records.c.owner_id == user_id)),
        "access_requests": _rows(conn, select(access_requests.c.id, access_requests.c.recid,
                                              access_requests.c.justification, access_requests.c.status,
                                              access_requests.c.created)
                                 .where(or_(access_requests.c.requester_user_id == user_id,
                                            access_requests.c.requester_email == user["email"]))),
        "deletion_requests": _rows(conn, select(deletion_requests).where(deletion_requests.c.user_id == user_id)),
        "audit_log": _rows(conn, select(audit_log).where(or_(
            audit_log.c.actor_id == user_id,
            (audit_log.c.target_kind == "user") & (audit_log.c.target_id == str(user_id))))
            .order_by(audit_log.c.id)),
        "terms_accepted": _rows(conn, select(terms_acceptances.c.version, terms_acceptances.c.accepted)
                                .where(terms_acceptances.c.user_id == user_id).order_by(terms_acceptances.c.id)),
    }


def erase(conn: Connection, actor: Actor, user_id: int) -> None:
    """Delete user `user_id`'s account: their address, password, sign-ins, tokens and role go, the account can
    never sign in again, and their access requests forget the address; their records, deposits and the audit log's
    entries stay (the records with their creators as written). Forbidden for oneself; Conflict for the last
    administrator."""
    user = admin.get(conn, user_id)
    if actor.user_id == user_id:
        raise Forbidden("You cannot delete your own account here.")
    if users.is_admin(user) and user["active"] and admin.admins_left(conn, user_id) == 0:
        raise Conflict("This is the last administrator: make another user an administrator first.")
    gone = f"deleted-{user_id}@invalid"
    conn.execute(delete(tokens).where(tokens.c.user_id == user_id))
    conn.execute(delete(user_identities).where(user_identities.c.user_id == user_id))
    conn.execute(update(access_requests).where(access_requests.c.requester_user_id == user_id)
                 .values(requester_email=gone, requester_user_id=None))  # fmt: skip
    conn.execute(update(users_table).where(users_table.c.id == user_id).values(
        email=gone, password_hash=None, email_confirmed=None, roles="", last_login=None, active=False,
        block_reason=None, auth_epoch=users_table.c.auth_epoch + 1))
    # The entry names the account by id only: its address is what was just erased.
    audit.record(conn, actor, "user.delete", "user", user_id, after={"email": gone})


def resend(conn: Connection, actor: Actor, user_id: int, settings: Settings, secret: bytes) -> None:
    """Mail user `user_id` a new confirmation link; Conflict when their address is confirmed already, or when the
    account cannot use one (blocked, or without a password: it signs in through a provider)."""
    user = admin.get(conn, user_id)
    if user["email_confirmed"] is not None:
        raise Conflict("This address is confirmed already.")
    if not user["active"] or not user["password_hash"]:
        raise Conflict("This account cannot confirm an address: it is blocked, or signs in without a password.")
    resend_confirmation(conn, user["email"], settings, secret)
    audit.record(conn, actor, "user.resend_confirmation", "user", user_id)
