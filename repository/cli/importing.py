"""`repository-admin import SOURCE ...`: one command, one sub-command a kind of source (docs/operators/migration.md).

Each source declares itself with `@source(name, ...)` as a command does with `@command`: its arguments, what it
needs and its body. `import` reads the first argument and runs that source's command through the same preamble,
with the settings it was handed, so `repository-admin import dump|oai|csv ...` read as separate commands while
`repository-admin --help` lists one."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from repository.cli.preamble import Body, Command, Context, arg, command, invoke

SOURCES: dict[str, Command] = {}


def source(name: str, **declaration: Any) -> Callable[[Body], Body]:
    """Register the decorated function as `import <name>`; its docstring's first line is its summary."""

    def register(run: Body) -> Body:
        summary = (run.__doc__ or "").strip().splitlines()[0]
        SOURCES[name] = Command(f"import-{name}", run, declaration.pop("summary", summary), **declaration)
        return run

    return register


def _listing() -> str:
    return "\n".join(f"  {name:<8}{cmd.summary}" for name, cmd in sorted(SOURCES.items()))


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = f"sources:\n{_listing()}\n\n`repository-admin import SOURCE --help` describes one."


@command("import", needs="nothing", configure=_configure, arguments=[
    arg("source", metavar="SOURCE", nargs="?", help="where the records come from: one of the sources below"),
    arg("args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS),  # the source's own, `--help` included
])
def import_(args: argparse.Namespace, ctx: Context) -> int:
    """Bring records in from elsewhere: a full public export, an OAI-PMH repository or a spreadsheet."""
    if args.source is None:
        ctx.parser.error("the following arguments are required: SOURCE")
    chosen = SOURCES.get(args.source)
    if chosen is None:
        ctx.parser.error(f"argument SOURCE: invalid choice: {args.source!r} (choose from {', '.join(sorted(SOURCES))})")
    return invoke(chosen, args.args, ctx.given, prog=f"{ctx.parser.prog} {args.source}")
