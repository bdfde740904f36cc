#!/usr/bin/env python
"""Rebuild the search index from the database with no downtime, then verify it; `--check` only verifies.

Exits 1 when the index does not hold exactly the published records at their current revisions, or (`--check`)
when a published deposit's files differ from its record's file snapshot.
"""

from __future__ import annotations

import argparse
import sys
import time

from tqdm import tqdm

from repository.config import Settings, StartupError
from repository.indexing import reindex
from repository.search.backend import open_from_settings
from repository.storage import open_database
from repository.storage.engine import close_all


def main(argv: list[str] | None = None, settings: Settings | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="only compare the index with the database, and each published deposit's files with its "
                             "record's")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--rebuild-all", action="store_true",
                        help="build every record again rather than load the stored documents (after a change of "
                             "vocabularies, or to refresh view counts)")
    args = parser.parse_args(argv)
    try:
        settings = settings or Settings.from_env()
    except StartupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    db = open_database(settings.DATABASE_URL)
    search = open_from_settings(settings)
    try:
        if not args.check:
            total = len(reindex.published_revisions(db))
            started = time.monotonic()
            with tqdm(total=total, unit="rec", disable=args.quiet, file=sys.stderr) as bar:
                loaded = reindex.rebuild(db, settings, search, bar.update, rebuild_all=args.rebuild_all)
            elapsed = time.monotonic() - started
            rate = loaded / elapsed if elapsed else 0.0
            print(f"reindexed {loaded} records in {elapsed:.1f} s ({rate:.0f} records/s)")
        problems = reindex.check(db, search)
        file_problems = reindex.check_files(db) if args.check else []
    finally:
        close_all()
    for problem in problems + file_problems:
        print(problem)
    if problems:
        print(f"index check FAILED: {len(problems)} difference(s)")
    else:
        print("index check passed: the index holds exactly the published records at their current revisions")
    if file_problems:
        print(f"file check FAILED: {len(file_problems)} published deposit(s) whose files differ from their record")
    elif args.check:
        print("file check passed: every published deposit holds exactly its record's files")
    return 1 if problems or file_problems else 0


if __name__ == "__main__":
    sys.exit(main())
