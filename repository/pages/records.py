"""A record's page for people (`links.html`): `/records/<id>`, with its files and their previews (framed from
repository/pages/record_previews.py), a citation in a chosen style, every export format, its versions and counts;
`/records/<id>/latest`.

The page reads the record exactly as the API does (`read.read_record`: one query when the record is cached, a
view counted), plus its file objects (for the SHA-256s and media types) and, for a record with several versions,
one search for the versions list. The citation and the JSON-LD are rendered once per revision and kept."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar
from urllib.parse import urlencode

from flask import Blueprint, Response, current_app, redirect, render_template, request
from markupsafe import Markup
from werkzeug.datastructures import MultiDict
from werkzeug.wrappers import Response as BaseResponse

import serializers
from repository import urls
from repository.communities import store as community_store
from repository.errors import Gone, NotFound
from repository.files import buckets
from repository.files.previews import kind_of
from repository.metadata.fields import sanitize_html
from repository.pages.base import render_page
from repository.pages.record_words import doi_breaks, relation_words
from repository.records import read
from repository.records.deletion import Deleted, deleted_title
from repository.records.render_context import render_context
from repository.search.params import parse_search_args
from repository.timeutil import http_date, isoformat
from repository.web.openapi import doc
from repository.web.request import identity, services
from repository.web.session import COOKIE, current_user
from repository.web.signposting import record_link_header
from repository.web.usage import reader_visit
from serializers.errors import SerializerError
from serializers.text import language_name, license_info, strip_html

bp = Blueprint("record_pages", __name__)
bp.add_app_template_filter(doi_breaks, "doi_breaks")
bp.add_app_template_filter(relation_words, "relation_words")
T = TypeVar("T")

# The styles the picker offers (any installed style works through ?style=, as on the API's text/x-bibliography).
STYLES = (("apa", "APA"), ("harvard-cite-them-right", "Harvard"), ("modern-language-association", "MLA"),
          ("chicago-author-date", "Chicago (author-date)"), ("ieee", "IEEE"), ("nature", "Nature"),
          ("science", "Science"), ("american-chemical-society", "ACS"), ("american-medical-association", "AMA"),
          ("elsevier-harvard", "Elsevier Harvard"))  # fmt: skip
DEFAULT_STYLE = "apa"
# Names people know the registry's formats by; a format missing here is listed under its short name.
FORMAT_LABELS = {"v1": "JSON (service v1)", "json": "JSON", "marcxml": "MARCXML", "bibtex": "BibTeX",
                 "datacite": "DataCite XML", "datacite3": "DataCite XML 3", "dc": "Dublin Core", "csl": "CSL JSON",
                 "jsonld": "JSON-LD (schema.org)", "citation": "Citation (text)", "linkset": "Linkset (JSON)",
                 "linkset-text": "Linkset (text)", "rocrate": "RO-Crate", "croissant": "Croissant",
                 "codemeta": "CodeMeta", "cff": "CITATION.cff"}  # fmt: skip
VERSIONS_SHOWN = 10
RENDERED_KEPT = 512  # citations and JSON-LD documents kept per process (a few KiB each)
PAGES_KEPT = 128  # records' parts of pages kept per process (tens of KiB each)
STATS_MARK = "<!--record-stats-->"  # nh3 drops comments from descriptions: only the template has this one
# A page answers 304 only while what it was made from is unchanged: its templates, the layout's, and the static
# files it names (by content-hashed names, which a new deployment may change).
_MADE_FROM = [Path(__file__).resolve().parent.parent / "templates" / "pages" / "base.html",
              *sorted((Path(__file__).resolve().parent.parent / "templates" / "pages" / "records").glob("*.html")),
              *sorted(p for p in (Path(__file__).resolve().parent.parent / "static").rglob("*") if p.is_file())]
PAGE_VERSION = hashlib.sha256(b"".join(p.read_bytes() for p in _MADE_FROM)).hexdigest()[:8]


# Inside <script>, "</script" ends the element and "<!--" followed by "<script" makes an HTML5 parser swallow the
# rest of the page: no "<" may appear at all. JSON has these characters only inside strings, where the \u escape
# means the same; ">" and "&" go too, and the line separators old JavaScript parsers refuse.
_SCRIPT_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028",
                                 "\u2029": "\\u2029"})


def script_safe(json_text: str) -> str:
    """JSON text that means the same and can be placed inside an HTML <script> element as it is."""
    return json_text.translate(_SCRIPT_ESCAPES)


class Kept(Generic[T]):
    """Values made once and kept per app, least recently used out first: renderings that depend only on a record's
    revision (its citation in a style, its JSON-LD, the page a guest sees)."""

    def __init__(self, size: int) -> None:
        self._items: OrderedDict[tuple, T] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def get(self, key: tuple, make: Callable[[], T]) -> T:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = make()
        with self._lock:
            self._items[key] = value
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return value


@dataclass(frozen=True)
class RecordParts:
    """What a record's page shows of the record (its layout apart): the title, the additions to <head>, the content
    with STATS_MARK in place of the counts; its status and its Signposting links."""

    title: str
    head: str
    content: str
    status: int
    link: str


@bp.record_once
def _install(state: Any) -> None:
    state.app.extensions["record_pages"] = {"renderings": Kept[str](RENDERED_KEPT), "parts": Kept[RecordParts](PAGES_KEPT)}


def _kept(name: str) -> Kept:
    kept: Kept = current_app.extensions["record_pages"][name]
    return kept


@bp.get("/records/<int:recid>")
@doc(tags=["pages"], parameters=[
    {"name": "style", "in": "query", "schema": {"type": "string", "default": DEFAULT_STYLE},
     "description": "citation style of the citation box (a CSL style name, as text/x-bibliography's ?style=)"},
    {"name": "preview", "in": "query", "schema": {"type": "string"}, "description": "the file shown in the preview"},
], responses={"200": {"description": "The record's page", "content": {"text/html": {}}},
              "301": {"description": "A concept id: its latest version's page"},
              "304": {"description": "If-None-Match held the page's ETag"},
              "400": {"description": "The page, with a citation style that cannot be rendered"},
              "404": {"description": "No such record (an HTML page)"},
              "410": {"description": "Taken down: the tombstone page"}})  # fmt: skip
def record_page(recid: int) -> BaseResponse:
    """The record's page (HTML): 301 for a concept id (to its latest version), 410 with a tombstone for a record
    taken down, 404 for an unknown id, 304 when If-None-Match holds the page's ETag. `?style=` chooses the
    citation style (400 with the page for one that cannot be rendered), `?preview=` the file previewed."""
    s = services()
    style = request.args.get("style") or DEFAULT_STYLE
    chosen = request.args.get("preview", "")
    user = current_user()
    variant = _variant(style, chosen, user)
    try:
        found = read.read_record(s.db, s.settings, s.search, s.record_cache, s.stats, recid, identity(),
                                 visit=reader_visit(), variant=lambda: (variant, True),
                                 unchanged=request.if_none_match.contains_weak)  # fmt: skip
    except read.Moved as moved:
        query = "?" + request.query_string.decode() if request.query_string else ""
        return redirect(urls.record_html(s.settings.BASE_URL, moved.recid) + query, 301)
    except Gone as gone:
        return _tombstone(recid, gone)
    guest = identity() is None and COOKIE not in request.cookies
    headers = {"ETag": found.etag, "Last-Modified": http_date(found.row["updated"]), "Vary": "Cookie, Authorization",
               # Every guest may keep it, asking again each time (the counts move); a signed-in page holds a name
               # and a form token: stored nowhere.
               "Cache-Control": "public, no-cache" if guest else "private, no-store",
               # The page frames its own previews (a CSV table, a PDF in the browser's viewer), nothing else.
               "Content-Security-Policy": "default-src 'self'; frame-src 'self'; frame-ancestors 'none'; "
                                          "form-action 'self'; base-uri 'none'; object-src 'none'"}  # fmt: skip
    review = found.row.get("review")
    if review:  # in review: no search engine indexes it (docs/operators/moderation.md)
        headers["X-Robots-Tag"] = "noindex"
    if found.record is None:
        return Response(status=304, headers=headers)
    record = found.record
    # The record's part of the page is the same for every reader who sees the same files, until the record
    # changes: made once; only the counts are filled in at each read, and the layout (who is signed in) around it.
    key = (recid, found.row["revision"], "files" in record, style, chosen)
    parts = _kept("parts").get(key, lambda: _record_parts(record, found.row, style, chosen))
    content = parts.content.replace(STATS_MARK, _stats_html(record.get("stats", {})), 1)
    response = render_page("records/record.html", parts.status, title=parts.title, head=Markup(parts.head),
                           content=Markup(content), review=review)  # fmt: skip
    response.headers.update({**headers, "Link": parts.link})
    return response


def _record_parts(record: dict, row: dict, style: str, chosen: str) -> RecordParts:
    s = services()
    context = {**_page_context(record, row, style, chosen), "site_name": s.settings.REPOSITORY_NAME}
    return RecordParts(record["metadata"].get("title", ""), render_template("pages/records/_head.html", **context),
                       render_template("pages/records/_content.html", **context),
                       400 if context["citation_error"] else 200, record_link_header(record, s.settings))


def _stats_html(stats: dict) -> str:
    template = current_app.jinja_env.get_template("pages/records/_stats.html")
    return template.render(stats=stats)


@bp.get("/records/<int:recid>/latest")
def latest_page(recid: int) -> BaseResponse:
    """`links.latest_html`: 302 to the page of the newest published version of the record's concept (404 for an
    unknown id, 410 when every version was taken down)."""
    newest = read.newest_version(services().db, recid)
    return redirect(urls.record_html(services().settings.BASE_URL, newest), 302)


def _variant(style: str, chosen: str, user: dict | None) -> str:
    """What else the page's ETag depends on: the query, who is signed in, the templates."""
    parts = "\n".join((style, chosen, str(user["id"]) if user else "", PAGE_VERSION))
    return "page." + hashlib.sha256(parts.encode()).hexdigest()[:12]


def _tombstone(recid: int, gone: Gone) -> Response:
    """410 with a page saying the record was taken down (or deleted by its owner: its title, the reason and the
    date), and where a live version is, if one is."""
    try:
        newest: int | None = read.newest_version(services().db, recid)
    except (Gone, NotFound):
        newest = None
    shown = None
    if isinstance(gone, Deleted):
        with services().db.read() as conn:
            shown = {**gone.deletion, "date": isoformat(gone.deletion["created"]),
                     "record_title": deleted_title(conn, recid)}  # fmt: skip
    return render_page("records/tombstone.html", 410, recid=recid, newest=newest, deletion=shown)


def _files(record: dict, row: dict) -> list[dict]:
    """The record's files as the page shows them: the record's entries with their SHA-256 and preview kind."""
    if "files" not in record:
        return []
    with services().db.read() as conn:
        objs = {o["key"]: o for o in buckets.list_objects(conn, row["bucket_id"])}
    shown = []
    for entry in record["files"]:
        obj = objs.get(entry["key"])
        extra = {"sha256": obj["sha256"], "mimetype": obj["mimetype"]} if obj else {"sha256": None, "mimetype": ""}
        shown.append({**entry, **extra, "md5": entry["checksum"].removeprefix("md5:")})
    first_image = _first_image(shown)
    for entry in shown:
        # The first image has thumbnails (PNG), whatever its format: a TIFF is previewed too.
        entry["preview"] = "image" if entry["key"] == first_image else kind_of(entry["key"], entry["mimetype"])
    return shown


def _first_image(files: list[dict]) -> str:
    """The key of the record's first image: the one its thumbnails show (api/thumbnails.py)."""
    return next((f["key"] for f in files if f["mimetype"].startswith("image/")), "")


def _versions(record: dict) -> tuple[list[dict], int]:
    """Up to VERSIONS_SHOWN versions of the record's concept, newest first (the API's versions search), and how
    many there are; no search for a record with one version."""
    relation = record["metadata"].get("relations", {}).get("version", [{}])[0]
    if relation.get("count", 1) <= 1:
        return [record], 1
    s = services()
    args = MultiDict({"q": f"conceptrecid:{record['conceptrecid']}", "all_versions": "true", "sort": "-version",
                      "size": str(VERSIONS_SHOWN)})
    result = s.search.search(parse_search_args(args, cursor_key=s.secret, window=s.settings.SEARCH_WINDOW))
    return result.hits, result.total


def _citation(record: dict, style: str) -> tuple[str, str]:
    """(the record cited in `style`, '') or ('', why it cannot be)."""
    ctx = render_context(services().settings, services().db, style)
    try:
        text = _kept("renderings").get((record["id"], record["revision"], "citation", style),
                                       lambda: serializers.REGISTRY["citation"].render(record, ctx).decode())
    except SerializerError as exc:
        return "", exc.message
    return text, ""


def _jsonld(record: dict) -> Markup:
    settings, db = services().settings, services().db
    text = _kept("renderings").get(
        (record["id"], record["revision"], "jsonld", "files" in record),
        lambda: script_safe(serializers.REGISTRY["jsonld"].render(record, render_context(settings, db)).decode()),
    )
    return Markup(text)


def _community_titles(m: dict) -> dict[str, str]:
    """The titles of the record's communities, by identifier (one that is gone shows its identifier)."""
    identifiers = [c["id"] for c in m.get("communities") or [] if isinstance(c, dict) and c.get("id")]
    if not identifiers:
        return {}
    with services().db.read() as conn:
        return community_store.titles(conn, identifiers)


def _access(record: dict) -> dict[str, Any]:
    """What applies to the files: the access right, the embargo's end, the conditions, whether they are shown."""
    m = record["metadata"]
    return {"right": m.get("access_right", "open"), "embargo_date": m.get("embargo_date"),
            "conditions": Markup(sanitize_html(m.get("access_conditions") or "")),
            "files_shown": "files" in record, "request_url": urls.access_request_html("", record["id"])}  # fmt: skip


def _page_context(record: dict, row: dict, style: str, chosen: str) -> dict[str, Any]:
    """What the record's template shows (the counts apart: STATS_MARK holds their place)."""
    s = services()
    m = record["metadata"]
    files = _files(record, row)
    previewable = [f for f in files if f["preview"]]
    shown = next((f for f in previewable if f["key"] == chosen), previewable[0] if previewable else None)
    versions, version_count = _versions(record)
    citation, citation_error = _citation(record, style)
    relation = m.get("relations", {}).get("version", [{}])[0]
    newest = relation.get("last_child", {}).get("pid_value")
    licenses = render_context(s.settings, s.db).licenses
    styles = STYLES if any(name == style for name, _ in STYLES) or citation_error else (*STYLES, (style, style))
    return {
        "record": record, "m": m, "files": files, "first_image": _first_image(files), "shown": shown,
        "versions": versions, "version_count": version_count,
        "newer": newest if not relation.get("is_last", True) and newest else None,
        "citation": citation, "citation_error": citation_error, "style": style, "styles": styles,
        "exports": [(name, FORMAT_LABELS.get(name, name), ser.mimetype, ser.filename(record))
                    for name, ser in serializers.REGISTRY.items() if ser.applies(record)],
        "jsonld": _jsonld(record), "description": Markup(sanitize_html(m.get("description") or "")),
        "summary": strip_html(m.get("description")),
        "community_titles": _community_titles(m),
        "notes": Markup(sanitize_html(m.get("notes") or "")), "method": Markup(sanitize_html(m.get("method") or "")),
        "license": license_info((m.get("license") or {}).get("id"), licenses),
        "language": language_name(m.get("language")) or m.get("language"),
        "access": _access(record), "stats_html": Markup(STATS_MARK),
        "archive_url": urls.record_archive(services().settings.BASE_URL, record["id"]),
        "crate_url": urls.record_archive(services().settings.BASE_URL, record["id"], "?format=rocrate"),
        "versions_url": urls.record_search_html("", {"q": f"conceptrecid:{record['conceptrecid']}",
                                                     "all_versions": "true", "sort": "-version"}),
        "preview_query": lambda key: "?" + urlencode({"preview": key, **({"style": style} if style != DEFAULT_STYLE
                                                                           else {})}) + "#preview",
    }  # fmt: skip
