"""Accounts people make themselves: sign-up with a password and a confirmed address, sign-in, password reset,
changes of password and address. Every link sent by mail is signed and expiring (repository.accounts.links) and
names the state it was made for, so it works once.

Nothing here tells a caller whether an address is registered: sign-up, reset and resend give the same answer for
any address; what differs is the mail sent to that address (which only its owner reads)."""

from __future__ import annotations

import hashlib

from sqlalchemy import Connection, insert, update

from repository import urls
from repository.accounts import mail, users
from repository.accounts.links import LinkInvalid, make_link_token, read_link_token
from repository.accounts.passwords import hash_password, needs_rehash, verify_password
from repository.accounts.tokens import EMAIL_RE, get_user_by_email
from repository.config import Settings
from repository.errors import ValidationError, field_error
from repository.storage.tables.accounts import users as user_table
from repository.storage.upsert import inserted_id
from repository.timeutil import utcnow

MAX_PASSWORD = 1024  # argon2 takes any length; the bound keeps a request's hashing work bounded
MAX_EMAIL = 254  # RFC 5321's longest usable address
CONFIRM, RESET, EMAIL = "confirm", "reset", "email"
WRONG = "The e-mail address or the password is not right."


class SignInRefused(Exception):
    """A sign-in that does not go through; the message is safe to show (it never says which part was wrong)."""


class NotConfirmed(SignInRefused):
    """The password was right but the address is not confirmed yet."""


class Deactivated(SignInRefused):
    """The password was right but the account is deactivated."""


class LinkUsed(LinkInvalid):
    """A genuine link whose work is already done (an address confirmed, a password already reset with it)."""


def normal_email(email: str) -> str:
    return email.strip().lower()


def email_problem(email: str) -> str | None:
    """Why `email` cannot be an account's address, or None."""
    if len(email) > MAX_EMAIL:
        return f"An e-mail address has at most {MAX_EMAIL} characters."
    if not EMAIL_RE.match(email) or any(ord(c) < 32 for c in email):
        return "Enter an e-mail address such as name@example.org."
    return None


def password_problem(password: str, email: str, settings: Settings) -> str | None:
    """Why `password` cannot be the password of the account of `email`, or None."""
    if len(password) < settings.PASSWORD_MIN_LENGTH:
        return f"A password has at least {settings.PASSWORD_MIN_LENGTH} characters."
    if len(password) > MAX_PASSWORD:
        return f"A password has at most {MAX_PASSWORD} characters."
    if password.strip().lower() == normal_email(email):
        return "The password cannot be your e-mail address."
    return None


def _check(field: str, problem: str | None) -> None:
    if problem is not None:
        raise ValidationError(problem, [field_error(field, problem)])


def _site(settings: Settings) -> str:
    return settings.BASE_URL.rstrip("/")


def _fingerprint(password_hash: str | None) -> str:
    """What a reset link remembers of the password it replaces: once that changes, the link is spent."""
    return hashlib.sha256((password_hash or "").encode()).hexdigest()[:24]


# --- sign-up and confirmation -------------------------------------------------------------------------------
def register(conn: Connection, email: str, password: str, settings: Settings, secret: bytes) -> int | None:
    """Sign up `email`: a new, unconfirmed account and the mail with its confirmation link; for an address already
    registered, a mail saying so (with a reset link) and nothing else, so the caller's answer is the same either
    way. An account the operator made (no password) is claimed only through that mail. ValidationError for a bad
    address or password. The new account's id (None when the address was registered already)."""
    email = normal_email(email)
    _check("email", email_problem(email))
    _check("password", password_problem(password, email, settings))
    password_hash = hash_password(password)  # either way: a registered address answers no faster
    existing = get_user_by_email(conn, email)
    if existing is not None:
        _mail_already_registered(conn, existing, settings, secret)
        return None
    user_id = inserted_id(conn.execute(insert(user_table).values(
        email=email, active=True, created=utcnow(), password_hash=password_hash, email_confirmed=None,
    )))
    _mail_confirmation(conn, user_id, email, settings, secret)
    return user_id


def _mail_confirmation(conn: Connection, user_id: int, email: str, settings: Settings, secret: bytes) -> None:
    link = urls.account_confirm_html(_site(settings), make_link_token(secret, CONFIRM, {"uid": user_id, "email": email}))
    mail.enqueue(conn, email, f"Confirm your address for {settings.REPOSITORY_NAME}", (
        f"Someone, probably you, signed up to {settings.REPOSITORY_NAME} with this address.\n\n"
        f"To confirm it, open this link within {settings.CONFIRM_LINK_HOURS} hours:\n\n{link}\n\n"
        "If you did not sign up, ignore this message: no account is used until its address is confirmed.\n"))


def _mail_already_registered(conn: Connection, user: dict, settings: Settings, secret: bytes) -> None:
    if not user["active"]:
        return  # a deactivated account is the operator's business: no mail that invites to use it
    link = _reset_link(user, settings, secret)
    mail.enqueue(conn, user["email"], f"Your account at {settings.REPOSITORY_NAME}", (
        f"Someone, probably you, tried to sign up to {settings.REPOSITORY_NAME} with this address, which already "
        "has an account. No new account was made.\n\n"
        f"If you forgot your password or never set one, choose one within {settings.RESET_LINK_HOURS} hours "
        f"here:\n\n{link}\n\nIf it was not you, ignore this message: nothing has changed.\n"))


def resend_confirmation(conn: Connection, email: str, settings: Settings, secret: bytes) -> None:
    """Mail a new confirmation link if `email` names an active account still waiting for one; otherwise nothing
    (the caller answers the same either way)."""
    user = get_user_by_email(conn, normal_email(email)) if email_problem(normal_email(email)) is None else None
    if user is not None and user["active"] and user["email_confirmed"] is None and user["password_hash"]:
        _mail_confirmation(conn, user["id"], user["email"], settings, secret)


def confirm(conn: Connection, token: str, settings: Settings, secret: bytes) -> dict:
    """Confirm the address a sign-up link names; the user. LinkExpired, LinkInvalid, or LinkUsed once confirmed."""
    payload = read_link_token(secret, CONFIRM, token, settings.CONFIRM_LINK_HOURS * 3600)
    user = _user_of(conn, payload)
    if user is None or user["email"] != payload.get("email"):
        raise LinkInvalid("This link is not valid.")
    if user["email_confirmed"] is not None:
        raise LinkUsed("This address is already confirmed: sign in.")
    conn.execute(update(user_table).where(user_table.c.id == user["id"]).values(email_confirmed=utcnow()))
    return dict(user, email_confirmed=utcnow())


def _user_of(conn: Connection, payload: dict) -> dict | None:
    user_id = payload.get("uid")
    return users.get_user(conn, user_id) if isinstance(user_id, int) and 0 < user_id < 2**31 else None


# --- sign-in ------------------------------------------------------------------------------------------------
def authenticate_password(conn: Connection, email: str, password: str) -> dict:
    """The user whose address and password these are, ready to be signed in; SignInRefused (same message for an
    unknown address and a wrong password, after the same work), NotConfirmed when the address awaits confirmation.
    Only reads: the caller then calls `upgrade_hash` when `hash_outdated(user)`."""
    email = normal_email(email)
    user = get_user_by_email(conn, email) if len(email) <= MAX_EMAIL and len(password) <= MAX_PASSWORD else None
    if not verify_password(user["password_hash"] if user else None, password[:MAX_PASSWORD]) or user is None:
        raise SignInRefused(WRONG)
    if not user["active"]:
        raise Deactivated("This account has been deactivated. Write to the service's operator.")
    if user["email_confirmed"] is None:
        raise NotConfirmed("Your e-mail address is not confirmed yet: open the link of the mail we sent, or ask "
                           "for a new one below.")
    return user


def hash_outdated(user: dict) -> bool:
    """Whether the user's hash was made with weaker parameters than today's (replace it at sign-in)."""
    return bool(user["password_hash"]) and needs_rehash(user["password_hash"])


def upgrade_hash(conn: Connection, user: dict, password: str) -> None:
    """Hash the password just checked again with today's parameters."""
    _set_password(conn, user["id"], password)


def _set_password(conn: Connection, user_id: int, password: str) -> None:
    conn.execute(update(user_table).where(user_table.c.id == user_id)
                 .values(password_hash=hash_password(password)))


# --- password reset -----------------------------------------------------------------------------------------
def _reset_link(user: dict, settings: Settings, secret: bytes) -> str:
    payload = {"uid": user["id"], "fp": _fingerprint(user["password_hash"])}
    return urls.password_reset_html(_site(settings), make_link_token(secret, RESET, payload))


def request_reset(conn: Connection, email: str, settings: Settings, secret: bytes) -> None:
    """Mail a password reset link if `email` names an active account; otherwise nothing (same answer)."""
    email = normal_email(email)
    user = get_user_by_email(conn, email) if email_problem(email) is None else None
    if user is None or not user["active"]:
        return
    link = _reset_link(user, settings, secret)
    mail.enqueue(conn, user["email"], f"Choose a new password for {settings.REPOSITORY_NAME}", (
        f"Someone, probably you, asked to choose a new password for {settings.REPOSITORY_NAME}.\n\n"
        f"Open this link within {settings.RESET_LINK_HOURS} hours to choose it:\n\n{link}\n\n"
        "If it was not you, ignore this message: your password has not changed.\n"))


def check_reset(conn: Connection, token: str, settings: Settings, secret: bytes) -> dict:
    """The user a reset link is for; LinkExpired, LinkInvalid, or LinkUsed once the password has changed."""
    payload = read_link_token(secret, RESET, token, settings.RESET_LINK_HOURS * 3600)
    user = _user_of(conn, payload)
    if user is None or not user["active"]:
        raise LinkInvalid("This link is not valid.")
    if payload.get("fp") != _fingerprint(user["password_hash"]):
        raise LinkUsed("This link has already been used: ask for a new one if you need to.")
    return user


def reset_password(conn: Connection, token: str, password: str, settings: Settings, secret: bytes) -> dict:
    """Set the password a reset link allows (the address is then confirmed, and every session ends); the user as
    it now is. The link errors of `check_reset`, ValidationError for a bad password."""
    user = check_reset(conn, token, settings, secret)
    _check("password", password_problem(password, user["email"], settings))
    _set_password(conn, user["id"], password)
    if user["email_confirmed"] is None:  # the mail was read: the address is the owner's
        conn.execute(update(user_table).where(user_table.c.id == user["id"]).values(email_confirmed=utcnow()))
    users.end_sessions(conn, user["id"])
    fresh = users.get_user(conn, user["id"])
    assert fresh is not None
    return fresh


# --- changes from the settings page -------------------------------------------------------------------------
def _check_current(user: dict, password: str) -> None:
    if not verify_password(user["password_hash"], password[:MAX_PASSWORD]):
        _check("current_password", "This is not your current password.")


def change_password(conn: Connection, user_id: int, current: str, new: str, settings: Settings) -> dict:
    """Replace the password (the current one must be given) and end every session; the user as it now is (to sign
    the current browser in again). ValidationError naming the field at fault."""
    user = users.get_user(conn, user_id)
    assert user is not None
    _check_current(user, current)
    _check("new_password", password_problem(new, user["email"], settings))
    _set_password(conn, user_id, new)
    users.end_sessions(conn, user_id)
    fresh = users.get_user(conn, user_id)
    assert fresh is not None
    return fresh


def change_email(conn: Connection, user_id: int, current: str, new_email: str, settings: Settings,
                 secret: bytes) -> None:
    """Ask to move the account to `new_email` (the current password must be given): a confirmation link goes to
    the new address, a notice to the old one; the address changes once the link is opened. An address that already
    has an account gets a mail saying so instead (the answer to the caller is the same)."""
    user = users.get_user(conn, user_id)
    assert user is not None
    _check_current(user, current)
    new_email = normal_email(new_email)
    _check("email", email_problem(new_email))
    if new_email == user["email"]:
        _check("email", "This is already your address.")
    name = settings.REPOSITORY_NAME
    if get_user_by_email(conn, new_email) is not None:
        mail.enqueue(conn, new_email, f"Your account at {name}", (
            f"Someone asked to move another account of {name} to this address, which already has an account. "
            "Nothing has changed.\n"))
    else:
        token = make_link_token(secret, EMAIL, {"uid": user_id, "old": user["email"], "new": new_email})
        mail.enqueue(conn, new_email, f"Confirm your new address for {name}", (
            f"Someone, probably you, asked to use this address for their account at {name}.\n\n"
            f"To confirm it, open this link within {settings.CONFIRM_LINK_HOURS} hours:\n\n"
            f"{urls.email_change_confirm_html(_site(settings), token)}\n\n"
            "If it was not you, ignore this message: nothing changes until the link is opened.\n"))
    mail.enqueue(conn, user["email"], f"A change of address was asked for at {name}", (
        f"Someone signed in to your account at {name} asked to change its address to {new_email}. It changes once "
        "the link sent there is opened.\n\nIf it was not you, change your password now.\n"))


def confirm_email_change(conn: Connection, token: str, settings: Settings, secret: bytes) -> dict:
    """Switch the account to the address a change link confirms, and tell the old address; the user as it now is.
    LinkExpired, LinkInvalid (also when the address was taken meanwhile), or LinkUsed once switched."""
    payload = read_link_token(secret, EMAIL, token, settings.CONFIRM_LINK_HOURS * 3600)
    user = _user_of(conn, payload)
    new_email = payload.get("new")
    if user is None or not user["active"] or not isinstance(new_email, str):
        raise LinkInvalid("This link is not valid.")
    if user["email"] != payload.get("old"):
        raise LinkUsed("This link has already been used.")
    if get_user_by_email(conn, new_email) is not None:
        raise LinkInvalid("This address has an account of its own now: it cannot become this account's address.")
    conn.execute(update(user_table).where(user_table.c.id == user["id"])
                 .values(email=new_email, email_confirmed=utcnow()))
    mail.enqueue(conn, user["email"], f"Your address at {settings.REPOSITORY_NAME} changed", (
        f"The address of your account at {settings.REPOSITORY_NAME} is now {new_email}. Mail about it goes there "
        "from now on.\n\nIf you did not ask for this, write to the service's operator.\n"))
    fresh = users.get_user(conn, user["id"])
    assert fresh is not None
    return fresh


# --- the operator's commands --------------------------------------------------------------------------------
def make_admin(conn: Connection, email: str, password: str | None, settings: Settings) -> tuple[dict, bool]:
    """Create the account of `email` or find it, confirm it, give it the admin role and, when given, the password;
    (the user, whether it was created). ValidationError for a bad address or password."""
    email = normal_email(email)
    _check("email", email_problem(email))
    if password is not None:
        _check("password", password_problem(password, email, settings))
    user = get_user_by_email(conn, email)
    created = user is None
    if user is None:
        user_id = inserted_id(conn.execute(insert(user_table).values(email=email, active=True, created=utcnow())))
    else:
        user_id = user["id"]
    values: dict = {} if user is not None and user["email_confirmed"] else {"email_confirmed": utcnow()}
    if password is not None:
        values["password_hash"] = hash_password(password)
    if values:
        conn.execute(update(user_table).where(user_table.c.id == user_id).values(**values))
    users.add_role(conn, user_id, users.ADMIN)
    fresh = users.get_user(conn, user_id)
    assert fresh is not None
    return fresh, created


def reset_link_for(user: dict, settings: Settings, secret: bytes) -> str:
    """A password reset link for `user` (the operator hands it over for a new admin without a password)."""
    return _reset_link(user, settings, secret)
