"""The preamble every command runs behind: its declaration (`command`), what it needs (`Context`), one error
path (`invoke`); `repository.cli` registers the commands and holds the entry points."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from repository.config import Settings, StartupError
from repository.errors import ApiError

if TYPE_CHECKING:
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
