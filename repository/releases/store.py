"""Repositories enabled for archiving and their releases: rows, states and their JSON.

A release goes received -> processing -> published | failed; a failed one can be retried (back to received).
Claiming (received -> processing) is one conditional UPDATE, so of several processes only one archives a release.
"""

from __future__ import annotations

import datetime as dt
import re
import secrets
from typing import Any

from sqlalchemy import Connection, insert, select, update
from sqlalchemy.exc import IntegrityError

from repository import urls
from repository.errors import BadRequest, Conflict, NotFound, ValidationError, field_error
from repository.storage.tables.releases import release_repositories, releases
from repository.storage.upsert import inserted_id
from repository.timeutil import isoformat, utcnow

PLATFORMS = ("github", "local")
FULL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}")
DUPLICATE = "The release has already been received."
STATUSES = ("received", "processing", "published", "failed")
STUCK_AFTER = dt.timedelta(hours=1)  # far longer than any archive takes: its server process has died


def check_full_name(value: Any) -> str:
    """`owner/name` as platforms allow it; ValidationError otherwise."""
    if not isinstance(value, str) or not FULL_NAME.fullmatch(value.strip()):
        raise ValidationError(errors=[field_error("repository", "Give the repository as 'owner/name'.")])
    return value.strip()


def enable(conn: Connection, owner_id: int, platform: str, full_name: object, token: str | None) -> dict:
    """Enable archiving of a repository (again): a new webhook secret each time; Conflict if another user has it."""
    if platform not in PLATFORMS:
        raise ValidationError(errors=[field_error("platform", "Not a valid choice: " + ", ".join(PLATFORMS) + ".")])
    full_name = check_full_name(full_name)
    now = utcnow()
    secret = secrets.token_hex(32)
    row = conn.execute(
        select(release_repositories)
        .where(release_repositories.c.platform == platform, release_repositories.c.name_key == full_name.lower())
        .with_for_update()
    ).mappings().first()
    if row is None:
        try:
            repo_id = inserted_id(conn.execute(
                insert(release_repositories).values(
                    owner_id=owner_id, platform=platform, full_name=full_name, name_key=full_name.lower(),
                    secret=secret, token=token or None, enabled=True, created=now, updated=now,
                )  # fmt: skip
            ))
        except IntegrityError:  # enabled by someone else at the same moment: roll back
            raise Conflict("The repository was enabled by another request at the same time; retry.") from None
    else:
        if row["owner_id"] != owner_id:
            raise Conflict(f"The repository {full_name} is already archived by another account.")
        repo_id = row["id"]
        values: dict[str, Any] = {"secret": secret, "enabled": True, "full_name": full_name, "updated": now}
        if token is not None:
            values["token"] = token or None
        conn.execute(update(release_repositories).where(release_repositories.c.id == repo_id).values(**values))
    return get_repository(conn, repo_id, owner_id)


def disable(conn: Connection, repo_id: int, owner_id: int) -> None:
    """Stop archiving: the webhook answers 409 from now on; releases and records stay."""
    get_repository(conn, repo_id, owner_id)
    conn.execute(
        update(release_repositories)
        .where(release_repositories.c.id == repo_id)
        .values(enabled=False, updated=utcnow())
    )


def get_repository(conn: Connection, repo_id: int, owner_id: int | None = None) -> dict:
    """The repository `repo_id` (of `owner_id` if given); NotFound otherwise."""
    row = conn.execute(select(release_repositories).where(release_repositories.c.id == repo_id)).mappings().first()
    if row is None or (owner_id is not None and row["owner_id"] != owner_id):
        raise NotFound("Repository not found.")
    return dict(row)


def find_repository(conn: Connection, owner_id: int, platform: str, full_name: str) -> dict | None:
    row = conn.execute(
        select(release_repositories).where(
            release_repositories.c.platform == platform,
            release_repositories.c.name_key == full_name.lower(),
            release_repositories.c.owner_id == owner_id,
        )
    ).mappings().first()
    return dict(row) if row else None


def list_repositories(conn: Connection, owner_id: int) -> list[dict]:
    query = select(release_repositories).where(release_repositories.c.owner_id == owner_id)
    return [dict(row) for row in conn.execute(query.order_by(release_repositories.c.id)).mappings()]


def receive(conn: Connection, repo: dict, platform_release_id: str, tag: object) -> int:
    """Record a release event; Conflict for one already received (a failed tag may come back as a new release)."""
    if not repo["enabled"]:
        raise Conflict("This repository is not enabled for archiving: enable it again to archive its releases.")
    if not isinstance(tag, str) or not tag.strip() or len(tag) > 255:
        raise BadRequest("The release has no valid tag name.")
    now = utcnow()
    existing = conn.execute(
        select(releases).where(releases.c.repository_id == repo["id"], releases.c.tag == tag).with_for_update()
    ).mappings().first()
    if existing is None:
        values = dict(repository_id=repo["id"], platform_release_id=platform_release_id, tag=tag,
                      status="received", errors=[], received=now, updated=now)  # fmt: skip
        try:
            return inserted_id(conn.execute(insert(releases).values(**values)))
        except IntegrityError:  # the same release delivered twice at the same moment: roll back
            raise Conflict(DUPLICATE) from None
    # A tag whose release failed and was deleted and made again on the platform: archive the new one.
    if existing["status"] == "failed" and existing["platform_release_id"] != platform_release_id:
        _set(conn, existing["id"], status="received", errors=[], platform_release_id=platform_release_id)
        return existing["id"]
    raise Conflict(DUPLICATE)


def retry(conn: Connection, release_id: int, repo_id: int) -> None:
    """A failed release (or one stuck for an hour, its server process gone) back to received; BadRequest else."""
    row = get_release(conn, release_id, repo_id)
    stuck = row["status"] in ("received", "processing") and row["updated"] < utcnow() - STUCK_AFTER
    if row["status"] != "failed" and not stuck:
        raise BadRequest(f"Only a failed release can be retried; this one is {row['status']}.")
    _set(conn, release_id, status="received", errors=[])


def claim(conn: Connection, release_id: int) -> bool:
    """Take a received release for processing; False if it is not (any more) waiting."""
    done = conn.execute(
        update(releases)
        .where(releases.c.id == release_id, releases.c.status == "received")
        .values(status="processing", updated=utcnow())
    )
    return done.rowcount == 1


def finish(conn: Connection, release_id: int, status: str, errors: list[dict] | None = None,
           recid: int | None = None) -> None:  # fmt: skip
    _set(conn, release_id, status=status, errors=errors or [], recid=recid)


def _set(conn: Connection, release_id: int, **values: Any) -> None:
    conn.execute(update(releases).where(releases.c.id == release_id).values(updated=utcnow(), **values))


def set_concept(conn: Connection, repo_id: int, conceptrecid: int) -> None:
    conn.execute(
        update(release_repositories).where(release_repositories.c.id == repo_id).values(conceptrecid=conceptrecid)
    )


def get_release(conn: Connection, release_id: int, repo_id: int | None = None) -> dict:
    row = conn.execute(select(releases).where(releases.c.id == release_id)).mappings().first()
    if row is None or (repo_id is not None and row["repository_id"] != repo_id):
        raise NotFound("Release not found.")
    return dict(row)


def list_releases(conn: Connection, repo_id: int) -> list[dict]:
    query = select(releases).where(releases.c.repository_id == repo_id).order_by(releases.c.id.desc())
    return [dict(row) for row in conn.execute(query).mappings()]


def repository_json(repo: dict, base_url: str, secret: bool = False) -> dict[str, Any]:
    """A repository; the webhook secret only when `secret` (in the answer to enabling it)."""
    links = {
        "self": urls.release_repository_api(base_url, repo["id"]),
        "releases": urls.release_list_api(base_url, repo["id"]),
        "webhook": webhook_url(base_url, repo["id"]),
    }
    if repo["conceptrecid"]:
        links["latest"] = urls.record_api(base_url, repo["conceptrecid"])
    body: dict[str, Any] = {
        "id": repo["id"],
        "platform": repo["platform"],
        "repository": repo["full_name"],
        "enabled": repo["enabled"],
        "has_token": bool(repo["token"]),
        "conceptrecid": str(repo["conceptrecid"]) if repo["conceptrecid"] else None,
        "created": isoformat(repo["created"]),
        "updated": isoformat(repo["updated"]),
        "links": links,
    }
    if secret:
        body["webhook"] = {"url": links["webhook"], "secret": repo["secret"], "content_type": "application/json",
                           "events": ["release"]}  # fmt: skip
    return body


def release_json(row: dict, base_url: str) -> dict[str, Any]:
    links = {"self": urls.release_api(base_url, row["repository_id"], row["id"])}
    if row["recid"]:
        links["record"] = urls.record_api(base_url, row["recid"])
        links["deposition"] = urls.deposit_api(base_url, row["recid"])
    if row["status"] == "failed":
        links["retry"] = links["self"] + "/actions/retry"
    return {
        "id": row["id"],
        "tag": row["tag"],
        "status": row["status"],
        "errors": row["errors"] or [],
        "record_id": row["recid"],
        "received": isoformat(row["received"]),
        "updated": isoformat(row["updated"]),
        "links": links,
    }


def webhook_url(base_url: str, repo_id: int) -> str:
    return urls.release_hook(base_url, repo_id)
