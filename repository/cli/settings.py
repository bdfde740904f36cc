"""The settings table of the documentation, generated from the one settings declaration."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass

from repository.cli.preamble import Context, command


@command("settings-table", needs="nothing")
def settings_table(args: argparse.Namespace, ctx: Context) -> int:
    """Print the settings table of docs/operators/settings.md, generated from the declarations in repository/config.py."""
    from repository.config import settings_table as table

    print(table())
    return 0
