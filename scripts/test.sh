#!/usr/bin/env bash
# The README's test command: installs what the tests need into .venv, then runs the suite.
# TEST_DATABASE_URL=postgresql+psycopg://root@127.0.0.1:5432/<db> runs the same suite on PostgreSQL.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv.sh '[test]'
# The whole suite, slow tests included (`-m ""` replaces the `-m 'not slow'` of a plain `pytest`); later arguments
# win, so `bash scripts/test.sh -m 'not slow' tests/oai` runs a part. SQLite: one database file per test, so two
# processes (addopts' `-n 2`, the machine's two cores) share the suite. PostgreSQL: the tests share one database and
# empty it between tests, so they run one at a time (`-n 0`).
if [ -z "${TEST_DATABASE_URL:-}" ]; then
  exec .venv/bin/python -m pytest -m "" "$@"
fi
exec .venv/bin/python -m pytest -m "" -n 0 "$@"
