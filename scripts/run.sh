#!/usr/bin/env bash
# The README's run command: installs the service into .venv and serves the API over HTTPS on the embedded shape.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv.sh ""
exec .venv/bin/python scripts/serve.py "$@"
