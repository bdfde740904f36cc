#!/usr/bin/env python
"""Bring the database schema to the newest revision (the scaled shape runs this before starting servers)."""

from __future__ import annotations

import sys

from repository.config import Settings, StartupError
from repository.storage import open_database, upgrade
from repository.storage.migrate import current_revision


def main(settings: Settings | None = None) -> int:
    try:
        settings = settings or Settings.from_env()
    except StartupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    db = open_database(settings.DATABASE_URL)
    upgrade(db)
    print(f"database at revision {current_revision(db)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
