"""`python -m repository COMMAND ...`: the command line of repository/cli/ without its entry point installed."""

import sys

from repository.cli import main

sys.exit(main())
