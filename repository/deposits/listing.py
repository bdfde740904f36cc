"""The caller's deposition list: status, all_versions, q, sort, page and size, with a `Link` header for paging.

A user's own depositions are few, so they are filtered here rather than in the search index (which holds
published records only); `q` is parsed by the same query parser as record search and evaluated on each draft.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlencode

from sqlalchemy import Connection

from repository import urls
from repository.config import Settings
from repository.errors import BadRequest, field_error
from repository.paging import parse_page
from repository.storage.tables.deposits import deposit_select, deposits


def _truthy(value: str | None) -> bool:
    return value is not None and value.strip().lower() in {"", "1", "true", "yes"}


def latest_versions(rows: list[dict]) -> list[dict]:
    """Per concept, its latest published version and any unpublished draft (a first version, or a new version
    being prepared): a published version stays the latest until a newer one is published. Order is kept."""
    published: dict[int, int] = {}
    for row in rows:
        if row["status"] == "published":
            published[row["conceptrecid"]] = max(row["id"], published.get(row["conceptrecid"], row["id"]))
    return [r for r in rows if r["status"] != "published" or published[r["conceptrecid"]] == r["id"]]


def list_deposits(
    conn: Connection, settings: Settings, owner_id: int, args: Mapping[str, str]
) -> tuple[list[dict], str]:
    """The page of the owner's depositions and the `Link` header value."""
    status = args.get("status")
    if status not in (None, "", "draft", "published"):
        raise BadRequest("Invalid status.", errors=[field_error("status", "Must be draft or published.")])
    sort = args.get("sort") or ("bestmatch" if args.get("q") else "mostrecent")
    if sort.lstrip("-") not in {"bestmatch", "mostrecent"}:
        raise BadRequest("Invalid sort.", errors=[field_error("sort", "Must be bestmatch or mostrecent, optionally with a leading -.")])
    paging = parse_page(args)
    page, size = paging.number, paging.size

    query = deposit_select().where(deposits.c.owner_id == owner_id)
    rows = [dict(r) for r in conn.execute(query.order_by(deposits.c.modified.desc(), deposits.c.id.desc())).mappings()]
    if not _truthy(args.get("all_versions")):
        rows = latest_versions(rows)
    if status == "draft":
        rows = [r for r in rows if r["status"] == "draft" or r["editing"]]
    elif status == "published":
        rows = [r for r in rows if r["status"] == "published"]
    if args.get("q"):
        from repository.deposits.query import matching

        rows = matching(args["q"], rows)
    if sort.startswith("-"):
        rows.reverse()
    total = len(rows)
    start = (page - 1) * size
    page_rows = rows[start : start + size]

    def link(number: int) -> str:
        params = {k: v for k, v in args.items() if k not in {"page", "access_token"}}
        params.update(page=str(number), size=str(size))
        return f"<{settings.BASE_URL}{urls.DEPOSITIONS}?{urlencode(params)}>"

    links = [f'{link(page)}; rel="self"']
    if page > 1:
        links.append(f'{link(page - 1)}; rel="prev"')
    if start + size < total:
        links.append(f'{link(page + 1)}; rel="next"')
    return page_rows, ", ".join(links)
