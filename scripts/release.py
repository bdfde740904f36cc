#!/usr/bin/env python
"""Archive a release from a local git checkout: a published (versioned) software record, no platform needed.

    python scripts/release.py --tag v1.2.0 [--path CHECKOUT] --email OWNER [--name owner/repo] [--tree-url URL]

Reads .service.json / .zenodo.json / CITATION.cff at the tag, takes creators from the git history (by commits),
builds the archive with `git archive` and publishes through the same code path as a platform's webhook. A later
tag of the same `--name` becomes a new version. Settings come from the environment (DATABASE_URL, ...).
Exit code: 0 published, 1 the release failed (its errors are printed), 2 a usage error.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import subprocess
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from repository.accounts import tokens
from repository.config import Settings, StartupError  # noqa: E402
from repository.errors import ApiError  # noqa: E402
from repository.releases import store  # noqa: E402
from repository.releases.ingest import process_release  # noqa: E402
from repository.releases.localgit import LocalRelease  # noqa: E402

# `owner/name` at the end of a remote URL: git@host:owner/name.git or https://host/owner/name(.git).
REMOTE_NAME = re.compile(r"[:/]([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+?)(?:\.git)?/?$")


def default_name(path: Path) -> str:
    """`owner/name` from the `origin` remote, else `local/<directory name>`."""
    done = subprocess.run(["git", "-C", str(path), "remote", "get-url", "origin"], capture_output=True, text=True)
    found = REMOTE_NAME.search(done.stdout.strip()) if done.returncode == 0 else None
    return found.group(1) if found else f"local/{path.resolve().name}"


def main(argv: list[str] | None = None, settings: Settings | None = None) -> int:
    parser = argparse.ArgumentParser(prog="release.py", description=__doc__.splitlines()[0])
    parser.add_argument("--tag", required=True, help="the release's tag")
    parser.add_argument("--path", type=Path, default=Path("."), help="the git checkout (default: here)")
    parser.add_argument("--email", required=True, help="the owner of the records (created if new)")
    parser.add_argument("--name", help="owner/name of the software (default: from the origin remote)")
    parser.add_argument("--tree-url", default="", help="browsable URL of the source at the tag (isSupplementTo)")
    args = parser.parse_args(argv)
    if not (args.path / ".git").exists() and subprocess.run(
        ["git", "-C", str(args.path), "rev-parse", "--git-dir"], capture_output=True
    ).returncode != 0:
        print(f"release.py: error: {args.path} is not a git checkout", file=sys.stderr)
        return 2
    name = args.name or default_name(args.path)
    svc = None
    try:
        # The outbox is applied right after publishing; no polling thread in a command.
        settings = dataclasses.replace(settings or Settings.from_env(), BACKGROUND_WORKER=False)
        from app import create_app

        svc = create_app(settings).extensions["repository"]
        with svc.db.write() as conn:
            user_id = tokens.create_user(conn, args.email)
            repo = store.find_repository(conn, user_id, "local", name)
            if repo is None or not repo["enabled"]:
                repo = store.enable(conn, user_id, "local", name, None)
            release_id = store.receive(conn, repo, args.tag, args.tag)
    except (StartupError, ApiError) as exc:
        print(f"release.py: error: {exc}", file=sys.stderr)
        if svc is not None:
            svc.db.dispose()
        return 2
    row = process_release(svc, release_id, LocalRelease(args.path, name, args.tag, args.tree_url))
    svc.db.dispose()
    if row["status"] != "published":
        print(f"{name} {args.tag}: failed", file=sys.stderr)
        for error in row["errors"]:
            where = f"{error.get('source') or ''} {error.get('field') or ''}".strip()
            hint = f" Hint: {error['hint']}" if error.get("hint") else ""
            print(f"  {where + ': ' if where else ''}{error['message']}{hint}", file=sys.stderr)
        return 1
    print(f"{name} {args.tag}: published as record {row['recid']} ({settings.BASE_URL}/api/records/{row['recid']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
