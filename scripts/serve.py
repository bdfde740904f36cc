#!/usr/bin/env python
"""Serve the API over HTTPS with gunicorn: the embedded shape's one command.

Creates the instance directory, a self-signed certificate (unless TLS_CERT/TLS_KEY exist) and the database,
then runs `gunicorn 'app:create_app()'` with TLS and the service's gunicorn settings
(repository/serving/gunicorn_conf.py: an asyncio front that reads each request before a thread runs the app,
header and body deadlines, no forwarded headers applied by gunicorn). Extra arguments are passed to gunicorn.
"""

from __future__ import annotations

import argparse
import os
import sys
from urllib.parse import urlsplit

from repository.config import Settings, StartupError
from repository.serving.tls import ensure_self_signed
from repository.storage import open_database, upgrade


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bind", default=None, help="address:port (default: host and port of BASE_URL)")
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--threads", type=int, default=4)
    args, extra = parser.parse_known_args(argv)
    try:
        settings = Settings.from_env()
    except StartupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    base = urlsplit(settings.BASE_URL)
    bind = args.bind or f"{base.hostname}:{base.port or (443 if base.scheme == 'https' else 80)}"
    os.makedirs(settings.INSTANCE_PATH, exist_ok=True)
    host = bind.rsplit(":", 1)[0]
    if ensure_self_signed(settings.TLS_CERT, settings.TLS_KEY, sorted({host, "127.0.0.1", "localhost"})):
        print(f"created a self-signed certificate: {settings.TLS_CERT}", file=sys.stderr)
    upgrade(open_database(settings.DATABASE_URL))
    print(
        f"serving {settings.BASE_URL}/api/ — clients trust it with "
        f"REQUESTS_CA_BUNDLE={settings.TLS_CERT} or curl --cacert {settings.TLS_CERT}",
        file=sys.stderr,
    )
    command = [
        "gunicorn", "app:create_app()",
        "--config", "python:repository.serving.gunicorn_conf",
        "--bind", bind,
        "--certfile", settings.TLS_CERT, "--keyfile", settings.TLS_KEY,
        "--workers", str(args.workers), "--threads", str(args.threads),
        *extra,
    ]
    bindir = os.path.dirname(sys.executable)
    os.execv(os.path.join(bindir, "gunicorn"), command)
    return 0


if __name__ == "__main__":
    sys.exit(main())
