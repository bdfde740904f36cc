#!/usr/bin/env python
"""Archive a release from a local git checkout: a published (versioned) software record, no platform needed.

    python scripts/release.py --tag v1.2.0 [--path CHECKOUT] --email OWNER [--name owner/repo] [--tree-url URL]
"""

# A shim kept for the automation interface (docs/operators/install.md): the command is `repository-admin release` (repository/cli/).
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
