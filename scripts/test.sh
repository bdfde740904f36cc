#!/usr/bin/env bash
# The README's test command: installs what the tests need into .venv, then runs the suite.
# TEST_DATABASE_URL=postgresql+psycopg://root@127.0.0.1:5432/<db> runs the same suite on PostgreSQL.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3.11}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test]'
# SQLite: one database file per test, so two processes (the machine's two cores) share the suite. PostgreSQL: the
# tests share one database and empty it between tests, so they run one at a time.
if [ -z "${TEST_DATABASE_URL:-}" ]; then
  exec .venv/bin/python -m pytest -n 2 "$@"
fi
exec .venv/bin/python -m pytest "$@"
