"""For crawlers: `/sitemap.xml`, a sitemap index (https://www.sitemaps.org/protocol.html) of `/sitemap-<n>.xml`
files of record landing pages and `/sitemap-communities-<n>.xml` files of the front page and the communities, and
`/robots.txt`.

Which records: every published version that is not taken down. Each version has its own DOI and landing page
(what `cite-as` names and what a citation points at), so each is a page a reader may arrive at; an older version's
page says that a newer one exists. A restricted or embargoed record's page is public (only its files are not).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from flask import Blueprint, Response
from lxml import etree

from repository import urls
from repository.errors import NotFound
from repository.records import sitemap
from repository.site import content
from repository.timeutil import isoformat
from repository.web.request import services

bp = Blueprint("sitemap", __name__)

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
# Crawlers may re-read these hourly; a new record appears in its file at most an hour late to them.
CACHE = "public, max-age=3600"

# Search (every facet combination is another URL: an endless space, and each record is in the sitemap anyway),
# the API's searches and the pages of signed-in people are not for crawlers. The API's records and files (the
# metadata formats and files FAIR Signposting links to) stay open. Read as RFC 9309 says (`$` ends a path, `?` is
# itself; Python's urllib.robotparser predates it and would read "/api/records/?" as all of /api/records/).
ROBOTS_DISALLOW = ("/search", "/api/records/?", "/api/records/$", "/api/records?", "/api/records$", "/api/deposit",
                   "/deposit", "/account", "/login", "/logout", "/signup")


def _xml(root: etree._Element) -> Response:
    body = etree.tostring(root, xml_declaration=True, encoding="UTF-8")
    response = Response(body, mimetype="application/xml")
    response.headers["Cache-Control"] = CACHE
    return response


def _element(parent: etree._Element, tag: str, loc: str, lastmod: datetime | None) -> None:
    entry = etree.SubElement(parent, f"{{{NS}}}{tag}")
    etree.SubElement(entry, f"{{{NS}}}loc").text = loc
    if lastmod is not None:
        etree.SubElement(entry, f"{{{NS}}}lastmod").text = isoformat(lastmod)


def _urlset(locations: Iterable[tuple[str, datetime | None]]) -> Response:
    root = etree.Element(f"{{{NS}}}urlset", nsmap={None: NS})
    for loc, lastmod in locations:
        _element(root, "url", loc, lastmod)
    return _xml(root)


def _community_files(count: int, per_file: int) -> int:
    # File 0 also holds the front page and the list of communities.
    return (count + 2 + per_file - 1) // per_file


@bp.get("/sitemap.xml")
def sitemap_index() -> Response:
    """The sitemap index: the communities' files, then the record files that list at least one record."""
    s = services()
    base, per_file = s.settings.BASE_URL, s.settings.SITEMAP_SIZE
    count, newest = sitemap.community_count(s.db)
    root = etree.Element(f"{{{NS}}}sitemapindex", nsmap={None: NS})
    for number in range(_community_files(count, per_file)):
        _element(root, "sitemap", urls.sitemap(base, f"communities-{number}"), newest)
    for entry in sitemap.record_files(s.db, per_file):
        _element(root, "sitemap", urls.sitemap(base, str(entry.key)), entry.updated)
    with s.db.read() as conn:
        pages = content.all_pages(conn)
    if pages:
        _element(root, "sitemap", urls.sitemap(base, "pages"), max(p["updated"] for p in pages))
    return _xml(root)


@bp.get("/sitemap-pages.xml")
def pages_sitemap() -> Response:
    """The content pages (About, Terms of use, ...; docs/operators/branding-and-pages.md); 404 while none is
    written."""
    s = services()
    with s.db.read() as conn:
        pages = content.all_pages(conn)
    if not pages:
        raise NotFound("This sitemap does not exist.")
    return _urlset((urls.content_page_html(s.settings.BASE_URL, p["slug"]), p["updated"]) for p in pages)


# Numbers past this are 404 (routing): their id range would overflow the databases' integers (a 500).
MAX_FILE = "int(max=2147483647)"


@bp.get(f"/sitemap-<{MAX_FILE}:number>.xml")
def record_sitemap(number: int) -> Response:
    """The landing pages of the records whose ids fall in file `number`'s range, with their last change; 404 when
    the range holds none."""
    s = services()
    entries = sitemap.record_file(s.db, number, s.settings.SITEMAP_SIZE)
    if not entries:
        raise NotFound("This sitemap does not exist.")
    base = s.settings.BASE_URL
    return _urlset((urls.record_html(base, entry.key), entry.updated) for entry in entries)


@bp.get(f"/sitemap-communities-<{MAX_FILE}:number>.xml")
def community_sitemap(number: int) -> Response:
    """The front page and the list of communities (file 0), and the communities' pages; 404 past the last file."""
    s = services()
    base, per_file = s.settings.BASE_URL, s.settings.SITEMAP_SIZE
    count, _ = sitemap.community_count(s.db)
    if number >= _community_files(count, per_file):
        raise NotFound("This sitemap does not exist.")
    # Shifted by the two pages file 0 starts with, so no file lists more than `per_file` URLs.
    first = number * per_file - 2 if number else 0
    size = max(per_file - 2, 0) if number == 0 else per_file
    pages: list[tuple[str, datetime | None]] = [(urls.home(base), None), (urls.communities_html(base), None)] if number == 0 \
        else []
    pages += [(urls.community_html(base, str(entry.key)), entry.updated)
              for entry in sitemap.community_range(s.db, first, size)]
    return _urlset(pages)


@bp.get("/robots.txt")
def robots() -> Response:
    """What crawlers may read, and where the sitemap is."""
    lines = ["User-agent: *", *(f"Disallow: {path}" for path in ROBOTS_DISALLOW), "",
             f"Sitemap: {urls.sitemap(services().settings.BASE_URL)}", ""]
    response = Response("\n".join(lines), mimetype="text/plain")
    response.headers["Cache-Control"] = CACHE
    return response
