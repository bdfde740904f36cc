"""Records and releases: takedowns, the owners' deletion requests, archiving a release from a checkout."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass

from repository import urls
from repository.cli.preamble import CommandError, Context, arg, command


@command("takedown", needs="services", overrides={"BACKGROUND_WORKER": False}, arguments=[
    arg("--recid", type=int, required=True, help="the record id (a version, not the concept)"),
    arg("--reason", default="", help="the public reason, shown on the tombstone and in the API's 410"),
    arg("--note", default="", help="a private note for the administrators"),
])
def takedown(args: argparse.Namespace, ctx: Context) -> int:
    """Take a published record down: a tombstone (410, OAI `deleted`), out of search, its DOI hidden; the same
    path as the administration pages (docs/operators/administration.md#records), written to the audit log."""
    from repository.accounts.audit import Actor
    from repository.records.moderation import take_down_record

    with ctx.db.write() as conn:
        # The outbox is applied after the commit: out of search on return.
        take_down_record(conn, Actor.operator(), args.recid, args.reason.strip(), args.note.strip())
    print(f"record {args.recid} taken down")
    return 0


@command("deletion-requests", needs="database")
def deletion_requests(args: argparse.Namespace, ctx: Context) -> int:
    """List the owners' open requests to delete a version (docs/operators/corrections.md), oldest first: request
    id, record id, date, user id, reason, note; `takedown --recid` deletes one and closes its requests."""
    from repository.records.deletion import open_requests
    from repository.timeutil import isoformat

    with ctx.db.read() as conn:
        found = open_requests(conn)
    for request in found:
        note = " ".join(request["note"].split())
        print(f"{request['id']}\t{request['recid']}\t{isoformat(request['created'])}\t{request['user_id']}\t"
              f"{request['reason']}\t{note}")
    print(f"{len(found)} open deletion request(s)", file=sys.stderr)
    return 0


# `owner/name` at the end of a remote URL: git@host:owner/name.git or https://host/owner/name(.git).
REMOTE_NAME = re.compile(r"[:/]([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+?)(?:\.git)?/?$")


def default_release_name(path: Path) -> str:
    """`owner/name` from the `origin` remote, else `local/<directory name>`."""
    done = subprocess.run(["git", "-C", str(path), "remote", "get-url", "origin"], capture_output=True,
                          text=True)
    found = REMOTE_NAME.search(done.stdout.strip()) if done.returncode == 0 else None
    return found.group(1) if found else f"local/{path.resolve().name}"


def _require_checkout(args: argparse.Namespace) -> None:
    if not (args.path / ".git").exists() and subprocess.run(
        ["git", "-C", str(args.path), "rev-parse", "--git-dir"], capture_output=True
    ).returncode != 0:
        raise CommandError(f"{args.path} is not a git checkout")


@command("release", needs="services", overrides={"BACKGROUND_WORKER": False}, named_errors=True,
         check=_require_checkout, arguments=[
    arg("--tag", required=True, help="the release's tag"),
    arg("--path", type=Path, default=Path("."), help="the git checkout (default: here)"),
    arg("--email", required=True, help="the owner of the records (created if new)"),
    arg("--name", help="owner/name of the software (default: from the origin remote)"),
    arg("--tree-url", default="", help="browsable URL of the source at the tag (isSupplementTo)"),
])
def release(args: argparse.Namespace, ctx: Context) -> int:
    """Archive a release from a local git checkout: a published (versioned) software record, no platform needed.

    Reads .service.json / .zenodo.json / CITATION.cff at the tag, takes creators from the git history (by
    commits), builds the archive with `git archive` and publishes through the same code path as a platform's
    webhook; the outbox is applied right after publishing (no polling thread in a command). A later tag of the
    same `--name` becomes a new version. Exit code: 0 published, 1 the release failed (its errors are printed), 2
    a usage error."""
    from repository.accounts import tokens
    from repository.releases import store
    from repository.releases.ingest import process_release
    from repository.releases.localgit import LocalRelease

    name = args.name or default_release_name(args.path)
    with ctx.db.write() as conn:
        user_id = tokens.create_user(conn, args.email)
        repo = store.find_repository(conn, user_id, "local", name)
        if repo is None or not repo["enabled"]:
            repo = store.enable(conn, user_id, "local", name, None)
        release_id = store.receive(conn, repo, args.tag, args.tag)
    row = process_release(ctx.services, release_id, LocalRelease(args.path, name, args.tag, args.tree_url))
    if row["status"] != "published":
        print(f"{name} {args.tag}: failed", file=sys.stderr)
        for error in row["errors"]:
            where = f"{error.get('source') or ''} {error.get('field') or ''}".strip()
            hint = f" Hint: {error['hint']}" if error.get("hint") else ""
            print(f"  {where + ': ' if where else ''}{error['message']}{hint}", file=sys.stderr)
        return 1
    print(f"{name} {args.tag}: published as record {row['recid']} "
          f"({urls.record_api(ctx.settings.BASE_URL, row['recid'])})")
    return 0
