"""FAIR Signposting (https://signposting.org/FAIR/) of a record: the typed links between its landing page, its
persistent identifier, its files, its metadata formats, its authors and its license, and the linkset (RFC 9264) that
holds them all (level 2), as `application/linkset+json` and as `application/linkset`.

URLs: the landing page is `links.html`; each metadata format is the record's API URL with `?format=<name>` (one
URL per format, so a client that follows a link gets that format whatever it sends as `Accept`); a file is its
download URL (`links.self` of the record's file); the linksets are the API URL with `?format=linkset` and
`?format=linkset-text`.
"""

from __future__ import annotations

import mimetypes
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from repository import urls

from .context import RenderContext
from .text import doi_url, license_info
from .vocabulary import type_info

LINKSET_JSON = "application/linkset+json"
LINKSET_TEXT = "application/linkset"
HTML = "text/html"


@dataclass(frozen=True)
class Link:
    """One typed link of a Link header or a linkset: its target, relation type, the target's media type and the
    schema it follows (`profile`, RFC 6906)."""

    href: str
    rel: str
    type: str = ""
    profile: str = ""

    def attributes(self) -> dict[str, str]:
        """The target attributes that are set (`type`, `profile`)."""
        return {name: value for name, value in (("type", self.type), ("profile", self.profile)) if value}

    def header(self, anchor: str = "") -> str:
        """The link in Link header syntax (RFC 8288), with an `anchor` when it is not the resource itself."""
        text = f'<{self.href}>; rel="{self.rel}"'
        for name, value in self.attributes().items():
            text += f'; {name}="{value}"'
        return text + (f'; anchor="{anchor}"' if anchor else "")


def file_media_type(key: str) -> str:
    """The media type of a file, from its name: the one the bucket stores for it (the same guess)."""
    return mimetypes.guess_type(key, strict=False)[0] or "application/octet-stream"


def landing_page(record: dict[str, Any], ctx: RenderContext) -> str:
    """The record's landing page (HTML)."""
    return record.get("links", {}).get("html") or ctx.record_html(record["id"])


def api_url(record: dict[str, Any], ctx: RenderContext) -> str:
    """The record's metadata resource without a format (its API URL)."""
    return record.get("links", {}).get("self") or urls.record_api(ctx.base_url, record["id"])


def format_url(record: dict[str, Any], ctx: RenderContext, name: str) -> str:
    """The record in one format of the registry (`?format=` wins over `Accept`)."""
    return f"{api_url(record, ctx)}?format={name}"


def linkset_links(record: dict[str, Any], ctx: RenderContext) -> list[Link]:
    """`linkset` links to the record's linkset in both forms."""
    return [Link(format_url(record, ctx, "linkset"), "linkset", LINKSET_JSON),
            Link(format_url(record, ctx, "linkset-text"), "linkset", LINKSET_TEXT)]


def author_urls(record: dict[str, Any]) -> list[str]:
    """Persistent identifiers (URLs) of the creators that have one: ORCID, else GND."""
    urls = []
    for creator in record.get("metadata", {}).get("creators", []):
        if creator.get("orcid"):
            urls.append(f"https://orcid.org/{creator['orcid']}")
        elif creator.get("gnd"):
            urls.append(f"https://d-nb.info/gnd/{creator['gnd']}")
    return urls


# (short name, media type, profile) of each format of the registry that describes a record
Formats = Sequence[tuple[str, str, str]]
# The formats that describe a given record (some formats describe some kinds of record only)
FormatsOf = Callable[[dict[str, Any]], Formats]


def landing_links(record: dict[str, Any], ctx: RenderContext, formats: Formats) -> list[Link]:
    """Every link of the landing page (FAIR Signposting's landing page pattern), in relation order: `cite-as`,
    `describedby` (each of `formats`), `item` (the files in `record`: only those its reader may read are there),
    `license`, `author`, `type`."""
    md = record.get("metadata", {})
    links: list[Link] = []
    if record.get("doi"):
        links.append(Link(doi_url(record["doi"]), "cite-as"))
    for name, media_type, profile in formats:
        links.append(Link(format_url(record, ctx, name), "describedby", media_type, profile))
    for item in record.get("files", []):
        links.append(Link(item["links"]["self"], "item", file_media_type(item["key"])))
    licence = license_info((md.get("license") or {}).get("id"), ctx.licenses).get("url")
    if licence:
        links.append(Link(licence, "license"))
    links += [Link(url, "author") for url in author_urls(record)]
    links.append(Link(f"https://schema.org/{type_info(md).schema_org}", "type"))
    links.append(Link("https://schema.org/AboutPage", "type"))
    return links


def linkset(record: dict[str, Any], ctx: RenderContext, formats_of: FormatsOf) -> list[tuple[str, list[Link]]]:
    """The level-2 linkset: (anchor, links) for the landing page, then each file (`collection`: its landing
    page), then each metadata format (`describes`: the landing page)."""
    landing = landing_page(record, ctx)
    back = [Link(landing, "collection", HTML)]
    formats = formats_of(record)
    contexts = [(landing, landing_links(record, ctx, formats))]
    contexts += [(item["links"]["self"], back) for item in record.get("files", [])]
    contexts += [(format_url(record, ctx, name), [Link(landing, "describes", HTML)]) for name, _, _ in formats]
    return contexts


def render_json(records: list[dict[str, Any]], ctx: RenderContext, formats_of: FormatsOf) -> bytes:
    """The linkset of `records` (one, or a search page's) as `application/linkset+json` (RFC 9264 §4.2): one object
    per anchor, relation types as keys."""
    objects = []
    for record in records:
        for anchor, links in linkset(record, ctx, formats_of):
            obj: dict[str, Any] = {"anchor": anchor}
            for link in links:
                target = {"href": link.href} | link.attributes()
                obj.setdefault(link.rel, []).append(target)
            objects.append(obj)
    return orjson.dumps({"linkset": objects})


def render_text(records: list[dict[str, Any]], ctx: RenderContext, formats_of: FormatsOf) -> bytes:
    """The linkset of `records` as `application/linkset` (RFC 9264 §4.1): Link header syntax, every link with its
    anchor, one link per line."""
    lines = [link.header(anchor) for record in records for anchor, links in linkset(record, ctx, formats_of)
             for link in links]
    return (",\n".join(lines) + "\n").encode() if lines else b""


Render = Callable[[list[dict[str, Any]], RenderContext, FormatsOf], bytes]


def renderers(render: Render, formats: FormatsOf) -> tuple[
        Callable[[dict[str, Any], RenderContext], bytes], Callable[[list[dict[str, Any]], RenderContext], bytes]]:
    """`render` as the registry's two renderers (one record, a page). The registry lists the formats and is made of
    these renderers, so it hands over a function that reads them, for a record, when a linkset is rendered."""
    return (lambda record, ctx: render([record], ctx, formats)), (lambda page, ctx: render(page, ctx, formats))
