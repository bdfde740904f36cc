"""FAIR Signposting level 1: the `Link` headers of a record's landing page, of its files and of its metadata
formats (the links themselves: serializers.linkset, which also renders the level-2 linkset).

A Link header the size of a record with hundreds of files or authors would not pass the proxies in front of the
service (nginx keeps all response headers in one 4-8 KiB buffer by default): past `HEADER_BUDGET` bytes the
landing page leaves out its `item` links, then its `author` links, whole (a partial list would read as complete);
the linkset, always linked, has them all, as the profile advises for many links.
"""

from __future__ import annotations

import functools
from typing import Any

from repository.config import Settings
from repository.records.render_context import render_context
from repository.web.request import services
from serializers import linkset, metadata_formats
from serializers.context import RenderContext
from serializers.linkset import Link

HEADER_BUDGET = 4096  # bytes of the landing page's Link header value


def _header(links: list[Link]) -> str:
    return ", ".join(link.header() for link in links)


def record_link_header(record: dict[str, Any], settings: Settings) -> str:
    """The `Link` header value of the record's landing page: `cite-as`, `describedby` (each metadata format),
    `item` (each file in `record`, i.e. those its reader may read), `license`, `author`, `type` and `linkset`."""
    ctx = render_context(settings, services().db)
    links = linkset.landing_links(record, ctx, metadata_formats(record)) + linkset.linkset_links(record, ctx)
    for left_out in ("item", "author"):
        value = _header(links)
        if len(value) <= HEADER_BUDGET:
            return value
        links = [link for link in links if link.rel != left_out]
    return _header(links)


def metadata_link_header(record: dict[str, Any], settings: Settings) -> str:
    """The Signposting links of a metadata resource (the record in a format): `describes` its landing page, and the
    linkset."""
    ctx = RenderContext(base_url=settings.BASE_URL)
    return _metadata_links(linkset.landing_page(record, ctx), linkset.api_url(record, ctx))


@functools.lru_cache(maxsize=4096)
def _metadata_links(landing_page: str, api_url: str) -> str:
    # Two URLs make the whole value, which every record read in a metadata format sends: kept for the records read
    # most (building it was 3.5% of a read's CPU).
    stub = {"id": None, "links": {"html": landing_page, "self": api_url}}
    ctx = RenderContext(base_url="")
    return _header([Link(landing_page, "describes", linkset.HTML), *linkset.linkset_links(stub, ctx)])


def file_link_header(recid: int, settings: Settings) -> str:
    """The Signposting links of a content resource (a file of record `recid`): the landing page it belongs to
    (`collection`), and the record's linkset."""
    stub = {"id": recid}  # the URLs follow from the id alone (links.html, links.self)
    ctx = RenderContext(base_url=settings.BASE_URL)
    return _header([Link(linkset.landing_page(stub, ctx), "collection", linkset.HTML),
                    *linkset.linkset_links(stub, ctx)])
