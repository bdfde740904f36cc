#!/usr/bin/env python
"""List or revoke a user's personal access tokens.

    python scripts/tokens.py list --email EMAIL
    python scripts/tokens.py revoke --email EMAIL --id TOKEN_ID
"""

# A shim kept for the automation interface (docs/operators/install.md): the command is `repository-admin tokens` (repository/cli/).
from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from repository.config import Settings


def main(argv: list[str] | None = None, settings: Settings | None = None) -> int:
    from repository.cli import run  # in-process (the tests): the same command, with these settings

    return run(__file__, argv, settings)


if __name__ == "__main__":  # as a file: the package runs the command, see repository/cli/
    os.execv(sys.executable, [sys.executable, "-m", "repository", *sys.argv])
