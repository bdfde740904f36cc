#!/usr/bin/env python
"""The background worker of the scaled shape: applies the outbox (indexing, DOI registration) with retries,
lifts embargoes on their date, writes view counts and removes orphan files left by crashes."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading

from app import create_app
from repository.config import Settings, StartupError
from repository.indexing.outbox import GRACE_SECONDS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--interval", type=float, default=2.0, help="seconds between passes")
    parser.add_argument("--once", action="store_true", help="one pass, then exit")
    args = parser.parse_args(argv)
    try:
        # This process is the worker: no extra worker thread inside it.
        settings = Settings.build(os.environ, BACKGROUND_WORKER=False)
    except StartupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    extras = create_app(settings).extensions["repository"].extras
    indexer = extras["indexer"]
    if args.once:
        done = indexer.run_pass(grace=0.0)
        extras["validation_jobs"].wait_idle(timeout=3600)  # the validation jobs its pass started
        print(f"applied {done} outbox rows")
        return 0
    stop = threading.Event()
    # Restored on return: a caller's process (a test) keeps its own handling, and its forked children too.
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        while True:
            indexer.run_pass(grace=GRACE_SECONDS)  # its first pass sweeps the file store (then every interval)
            if stop.wait(args.interval):
                return 0
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


if __name__ == "__main__":
    sys.exit(main())
