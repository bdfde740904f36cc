#!/usr/bin/env bash
# The README's test command: installs what the tests need into .venv, then runs the suite.
# TEST_DATABASE_URL=postgresql+psycopg://root@127.0.0.1:5432/<db> runs the same suite on PostgreSQL.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv.sh '[test]'
# Redis for the shared rate-limit counters' tests (PostgreSQL too when TEST_DATABASE_URL names it: .ci/run starts it).
bash scripts/services.sh redis
# The browser tests (tests/pages/test_browser_*.py) need Debian's Chromium and axe-core from npm. BROWSER_TESTS=skip
# opts out of them (they are then reported as skipped); otherwise both are installed here or the run stops saying how.
if [ "${BROWSER_TESTS:-}" != "skip" ]; then
  if ! command -v chromium >/dev/null; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
      echo "test.sh: installing Debian's chromium for the browser tests"
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    fi
    command -v chromium >/dev/null || {
      echo "test.sh: chromium is missing: run 'sudo apt-get install chromium' (Debian), or BROWSER_TESTS=skip to leave the browser tests out" >&2
      exit 1
    }
  fi
  command -v npm >/dev/null || {
    echo "test.sh: npm is missing (axe-core comes from npm): install Node.js and npm, or BROWSER_TESTS=skip" >&2
    exit 1
  }
  # Installed again only when package-lock.json changed since the last install.
  if [ ! -f node_modules/axe-core/axe.min.js ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    npm ci --no-audit --no-fund --loglevel=error
  fi
fi
# The whole suite, slow tests included (`-m ""` replaces the `-m 'not slow'` of a plain `pytest`); later arguments
# win, so `bash scripts/test.sh -m 'not slow' tests/oai` runs a part. Two processes (addopts' `-n 2`, the machine's
# two cores) share the suite: on SQLite each test has a database file of its own; on PostgreSQL each process has a
# database of its own beside TEST_DATABASE_URL's (<database>_gw0, <database>_gw1: tests/conftest.py).
exec .venv/bin/python -m pytest -m "" "$@"
