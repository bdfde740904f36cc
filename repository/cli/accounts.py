"""Accounts: tokens, administrators, deactivating and reactivating users."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass

from repository.cli.preamble import CommandError, Context, arg, command


@command("create-token", migrate=True, arguments=[
    arg("--email", required=True, help="the user's e-mail address"),
    arg("--scopes", default="deposit:write,deposit:actions", help="comma-separated scopes"),
    arg("--name", default="token", help="a name to recognise the token by"),
])
def create_token(args: argparse.Namespace, ctx: Context) -> int:
    """Create a personal access token (creating the database and the user if needed); prints only the token."""
    from repository.accounts import tokens

    with ctx.db.write() as conn:
        user_id = tokens.create_user(conn, args.email)
        _, token = tokens.create_token(conn, user_id, tokens.parse_scopes(args.scopes), args.name)
    print(token)
    return 0


def _tokens_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="command", required=True)
    listing = sub.add_parser("list", help="list the user's tokens")
    listing.add_argument("--email", required=True)
    revoke = sub.add_parser("revoke", help="revoke one token")
    revoke.add_argument("--email", required=True)
    revoke.add_argument("--id", type=int, required=True, help="token id, as shown by list")


@command("tokens", migrate=True, configure=_tokens_arguments)
def tokens_command(args: argparse.Namespace, ctx: Context) -> int:
    """List or revoke a user's personal access tokens."""
    from repository.accounts import tokens
    from repository.timeutil import isoformat

    with ctx.db.write() as conn:
        user = tokens.get_user_by_email(conn, args.email)
        if user is None:
            raise CommandError(f"no user with e-mail {args.email}", code=1)
        if args.command == "revoke":
            tokens.revoke_token(conn, args.id, user["id"])
            print(f"revoked token {args.id}")
            return 0
        for token in tokens.list_tokens(conn, user["id"]):
            state = f"revoked {isoformat(token['revoked'])}" if token["revoked"] else "active"
            scopes = ",".join(token["scopes"])
            print(f"{token['id']}\t{token['name']}\t{scopes}\t{isoformat(token['created'])}\t{state}")
    return 0


@command("create-admin", migrate=True, arguments=[
    arg("email", metavar="EMAIL", help="the administrator's e-mail address"),
    arg("--password-stdin", action="store_true",
        help="read the password from the first line of standard input (else: print a link to choose one)"),
])
def create_admin(args: argparse.Namespace, ctx: Context) -> int:
    """Create an administrator (or make an existing user one), with a confirmed address.

    With `--password-stdin` the password is read from standard input (never from the command line, which other
    users of the machine can see). Without it, an account that has no password yet gets a one-time link to choose
    one, printed on stdout (valid RESET_LINK_HOURS); an existing password is left as it is."""
    from repository.accounts import signup
    from repository.services import secret_key

    password = sys.stdin.readline().rstrip("\r\n") if args.password_stdin else None
    with ctx.db.write() as conn:
        user, created = signup.make_admin(conn, args.email, password, ctx.settings)
    print(f"{'created' if created else 'updated'} administrator {user['email']} (id {user['id']})")
    if password is None and not user["password_hash"]:
        link = signup.reset_link_for(user, ctx.settings, secret_key(ctx.settings).encode())
        print(f"choose a password within {ctx.settings.RESET_LINK_HOURS} hours at: {link}")
    return 0


def _switch_user(email: str, ctx: Context, active: bool) -> int:
    from repository.accounts import tokens, users

    with ctx.db.write() as conn:
        user = tokens.get_user_by_email(conn, email)
        if user is None:
            raise CommandError(f"no user with e-mail {email}", code=1)
        changed = users.reactivate(conn, user["id"]) if active else users.deactivate(conn, user["id"])
    state = "active" if active else "deactivated"
    print(f"{user['email']} {'is now' if changed else 'was already'} {state}")
    return 0


@command("deactivate-user", arguments=[arg("email", metavar="EMAIL", help="the user's e-mail address")])
def deactivate_user(args: argparse.Namespace, ctx: Context) -> int:
    """Deactivate a user: their browser sessions and tokens stop working at once; nothing of theirs is deleted."""
    return _switch_user(args.email, ctx, active=False)


@command("reactivate-user", arguments=[arg("email", metavar="EMAIL", help="the user's e-mail address")])
def reactivate_user(args: argparse.Namespace, ctx: Context) -> int:
    """Reactivate a deactivated user: they can sign in again, and their tokens not revoked work again."""
    return _switch_user(args.email, ctx, active=True)


def _users_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="command", required=True)
    role = sub.add_parser("set-role", help="make a user an administrator or a moderator, or neither")
    role.add_argument("email", metavar="EMAIL")
    role.add_argument("role", choices=("admin", "moderator", "none"))
    block = sub.add_parser("block", help="block a user: sessions and tokens stop working at once")
    block.add_argument("email", metavar="EMAIL")
    block.add_argument("--reason", required=True, help="why (kept on the account and in the audit log)")
    unblock = sub.add_parser("unblock", help="unblock a user")
    unblock.add_argument("email", metavar="EMAIL")


@command("users", migrate=True, configure=_users_arguments)
def users_command(args: argparse.Namespace, ctx: Context) -> int:
    """Roles and blocks (docs/operators/administration.md): `set-role EMAIL admin|moderator|none`, `block EMAIL
    --reason TEXT`, `unblock EMAIL`; each is written to the audit log."""
    from repository.accounts import admin, audit, tokens

    actor = audit.Actor.operator()
    with ctx.db.write() as conn:
        user = tokens.get_user_by_email(conn, args.email)
        if user is None:
            raise CommandError(f"no user with e-mail {args.email}", code=1)
        if args.command == "set-role":
            done = admin.set_role(conn, actor, user["id"], args.role)
            print(f"{done['email']} is now {admin.staff_role(done) or 'neither administrator nor moderator'}")
        elif args.command == "block":
            admin.block(conn, actor, user["id"], admin.parse_reason(args.reason))
            print(f"{user['email']} is blocked")
        else:
            admin.unblock(conn, actor, user["id"])
            print(f"{user['email']} is unblocked")
    return 0
