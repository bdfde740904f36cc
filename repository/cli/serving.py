"""Running the service: the server and the background worker."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass

from repository import urls
from repository.cli.preamble import Context, arg, command


@command("serve", migrate=True, passes_unknown=True, arguments=[
    arg("--bind", default=None, help="address:port (default: host and port of BASE_URL)"),
    arg("--workers", type=int, default=3),
    arg("--threads", type=int, default=4),
])
def serve(args: argparse.Namespace, ctx: Context) -> int:
    """Serve the API over HTTPS with gunicorn: the embedded shape's one command.

    Creates the instance directory, a self-signed certificate (unless TLS_CERT/TLS_KEY exist) and the database,
    then runs `gunicorn 'app:create_app()'` with TLS and the service's gunicorn settings
    (repository/serving/gunicorn_conf.py). Extra arguments are passed to gunicorn."""
    from urllib.parse import urlsplit

    from repository.serving.tls import ensure_self_signed

    settings = ctx.settings
    base = urlsplit(settings.BASE_URL)
    bind = args.bind or f"{base.hostname}:{base.port or (443 if base.scheme == 'https' else 80)}"
    os.makedirs(settings.INSTANCE_PATH, exist_ok=True)
    host = bind.rsplit(":", 1)[0]
    if ensure_self_signed(settings.TLS_CERT, settings.TLS_KEY, sorted({host, "127.0.0.1", "localhost"})):
        print(f"created a self-signed certificate: {settings.TLS_CERT}", file=sys.stderr)
    print(f"serving {urls.api_root(settings.BASE_URL)} — clients trust it with "
          f"REQUESTS_CA_BUNDLE={settings.TLS_CERT} or curl --cacert {settings.TLS_CERT}", file=sys.stderr)
    ctx.close()  # the server opens its own
    # This interpreter runs gunicorn (`-m`), not a `gunicorn` executable beside it, which only a venv is sure to have.
    os.execv(sys.executable, [
        sys.executable, "-m", "gunicorn", "app:create_app()",
        "--config", "python:repository.serving.gunicorn_conf",
        "--bind", bind,
        "--certfile", settings.TLS_CERT, "--keyfile", settings.TLS_KEY,
        "--workers", str(args.workers), "--threads", str(args.threads),
        *ctx.unknown,
    ])


@command("worker", needs="services", overrides={"BACKGROUND_WORKER": False}, arguments=[
    arg("--interval", type=float, default=2.0, help="seconds between passes"),
    arg("--once", action="store_true", help="one pass, then exit"),
    arg("--heartbeat", type=Path, metavar="FILE", help="touch FILE after every pass (for a health check)"),
])
def worker(args: argparse.Namespace, ctx: Context) -> int:
    """The background worker of the scaled shape: applies the outbox (indexing, DOI registration) with retries,
    lifts embargoes on their date, writes view counts and removes orphan files left by crashes.

    This process is the worker: BACKGROUND_WORKER is off, so no worker thread runs inside it."""
    from repository.outbox import GRACE_SECONDS

    indexer = ctx.services.indexer
    if args.once:
        done = indexer.run_pass(grace=0.0)
        ctx.services.validation_jobs.wait_idle(timeout=3600)  # the validation jobs its pass started
        if args.heartbeat is not None:
            args.heartbeat.touch()
        print(f"applied {done} outbox rows")
        return 0
    with _stop_on_signal() as stop:
        while True:
            indexer.run_pass(grace=GRACE_SECONDS)  # its first pass sweeps the file store (then every interval)
            if args.heartbeat is not None:
                args.heartbeat.touch()  # the compose health check looks at its age
            if stop.wait(args.interval):
                return 0


@contextmanager
def _stop_on_signal() -> Iterator[threading.Event]:
    """An Event set by SIGTERM or SIGINT; the previous handlers come back on exit, so a caller's process (a test)
    keeps its own handling, and its forked children too."""
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
