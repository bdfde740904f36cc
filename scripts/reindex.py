#!/usr/bin/env python
"""Rebuild the search index from the database with no downtime, then verify it; `--check` only verifies.

    python scripts/reindex.py [--check] [--rebuild-all] [--quiet]
"""

# A shim kept for the automation interface (docs/operators/install.md): the command is `repository-admin reindex` (repository/cli/).
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
