#!/usr/bin/env python
"""Create a personal access token (creating the database and the user if needed); prints only the token.

    python scripts/create_token.py --email EMAIL --scopes deposit:write,deposit:actions [--name NAME]
"""

from __future__ import annotations

import argparse
import sys

from repository.accounts import tokens
from repository.config import Settings, StartupError
from repository.errors import ApiError
from repository.storage import open_database, upgrade


def main(argv: list[str] | None = None, settings: Settings | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--email", required=True, help="the user's e-mail address")
    parser.add_argument("--scopes", default="deposit:write,deposit:actions", help="comma-separated scopes")
    parser.add_argument("--name", default="token", help="a name to recognise the token by")
    args = parser.parse_args(argv)
    try:
        settings = settings or Settings.from_env()
        db = open_database(settings.DATABASE_URL)
        upgrade(db)
        with db.write() as conn:
            user_id = tokens.create_user(conn, args.email)
            _, token = tokens.create_token(conn, user_id, tokens.parse_scopes(args.scopes), args.name)
    except (StartupError, ApiError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(token)
    return 0


if __name__ == "__main__":
    sys.exit(main())
