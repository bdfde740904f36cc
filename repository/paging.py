"""Pages of a listing: `page`/`size` validated from the query arguments, and the envelope with absolute links."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from repository.errors import ValidationError, field_error

MAX_SIZE = 1000
# Far beyond any list here; it keeps OFFSET within the 64-bit integers the databases accept.
MAX_PAGE = 1_000_000
_INTEGER = re.compile(r"-?[0-9]+")


@dataclass(frozen=True)
class Page:
    """A validated page request: 1-based `number` and `size`."""

    number: int
    size: int

    @property
    def offset(self) -> int:
        return (self.number - 1) * self.size


def _positive(args: Mapping[str, str], name: str, default: int, maximum: int) -> tuple[int, str | None]:
    raw = args.get(name)
    if raw is None or raw == "":
        return default, None
    if not _INTEGER.fullmatch(raw.strip()):
        return default, f"Not a valid integer: {raw!r}."
    value = int(raw)
    if value < 1:
        return default, "Must be at least 1."
    if value > maximum:
        return default, f"Must be at most {maximum}."
    return value, None


def parse_page(args: Mapping[str, str], default_size: int = 10) -> Page:
    """`page` (1..1000000) and `size` (1..1000) from the query arguments; ValidationError names each bad one."""
    number, page_error = _positive(args, "page", 1, MAX_PAGE)
    size, size_error = _positive(args, "size", default_size, MAX_SIZE)
    errors = [field_error(name, message) for name, message in (("page", page_error), ("size", size_error)) if message]
    if errors:
        raise ValidationError("Invalid pagination parameters.", errors)
    return Page(number, size)


def openapi_parameters(default_size: int = 10) -> list[dict[str, Any]]:
    """The OpenAPI description of `page` and `size`."""
    return [
        {"name": "page", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE, "default": 1}},
        {"name": "size", "in": "query",
         "schema": {"type": "integer", "minimum": 1, "maximum": MAX_SIZE, "default": default_size}},
    ]  # fmt: skip


def envelope(
    hits: list[dict[str, Any]], total: int, page: Page, url: str, args: Mapping[str, str]
) -> dict[str, Any]:
    """`{"hits": {"hits", "total"}, "links": {"self", "prev"?, "next"?}}` with absolute links to `url`."""
    kept = {key: value for key, value in args.items() if key not in ("page", "size", "access_token") and value != ""}

    def link(number: int) -> str:
        return url + "?" + urlencode({**kept, "page": number, "size": page.size})

    links = {"self": link(page.number)}
    if page.number > 1:
        links["prev"] = link(page.number - 1)
    if page.offset + page.size < total:
        links["next"] = link(page.number + 1)
    return {"hits": {"hits": hits, "total": total}, "links": links}
