#!/usr/bin/env python
"""Take a published record down: a tombstone (410, OAI `deleted`), out of search, its DOI hidden.

    python scripts/takedown.py --recid N
"""

from __future__ import annotations

import argparse
import sys

from app import create_app
from repository.config import Settings, StartupError
from repository.errors import ApiError
from repository.records.takedown import take_down


def main(argv: list[str] | None = None, settings: Settings | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recid", type=int, required=True, help="the record id (a version, not the concept)")
    args = parser.parse_args(argv)
    try:
        services = create_app(settings or Settings.from_env()).extensions["repository"]
        with services.db.write() as conn:
            take_down(conn, args.recid)
    except (StartupError, ApiError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    services.extras["indexer"].process_pending()
    print(f"record {args.recid} taken down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
