"""The command line: every operator command behind one preamble (`preamble.py`), one module a group of commands.

    repository-admin COMMAND [ARGS]     the [project.scripts] entry point (`repository-admin --help` lists them)
    python -m repository COMMAND [ARGS] the same without the entry point installed
    python scripts/COMMAND.py [ARGS]    the automation interface (docs/operators/install.md): shims kept at their old paths

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

from repository.cli import (  # noqa: F401  (each registers its commands)
    accounts,
    backups,
    database,
    exports,
    fixity,
    harvests,
    imports,
    index,
    records,
    serving,
    settings,
    validators,
)
from repository.cli.preamble import COMMANDS, Command, CommandError, Context, arg, command, invoke, main, run

__all__ = ["COMMANDS", "Command", "CommandError", "Context", "arg", "command", "invoke", "main", "run"]
