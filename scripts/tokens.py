#!/usr/bin/env python
"""List or revoke a user's personal access tokens.

    python scripts/tokens.py list --email EMAIL
    python scripts/tokens.py revoke --email EMAIL --id TOKEN_ID
"""

from __future__ import annotations

import argparse
import sys

from repository.accounts import tokens as accounts
from repository.config import Settings, StartupError
from repository.errors import ApiError
from repository.storage import open_database, upgrade
from repository.timeutil import isoformat


def main(argv: list[str] | None = None, settings: Settings | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    listing = sub.add_parser("list", help="list the user's tokens")
    listing.add_argument("--email", required=True)
    revoke = sub.add_parser("revoke", help="revoke one token")
    revoke.add_argument("--email", required=True)
    revoke.add_argument("--id", type=int, required=True, help="token id, as shown by list")
    args = parser.parse_args(argv)
    try:
        settings = settings or Settings.from_env()
        db = open_database(settings.DATABASE_URL)
        upgrade(db)
        with db.write() as conn:
            user = accounts.get_user_by_email(conn, args.email)
            if user is None:
                print(f"error: no user with e-mail {args.email}", file=sys.stderr)
                return 1
            if args.command == "list":
                for token in accounts.list_tokens(conn, user["id"]):
                    state = "revoked " + isoformat(token["revoked"]) if token["revoked"] else "active"
                    scopes = ",".join(token["scopes"])
                    print(f"{token['id']}\t{token['name']}\t{scopes}\t{isoformat(token['created'])}\t{state}")
            else:
                accounts.revoke_token(conn, args.id, user["id"])
                print(f"revoked token {args.id}")
    except (StartupError, ApiError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
