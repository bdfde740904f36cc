"""Finding records in the browser: the front page (`/`) and the search page (`/search`), whose results and facets
a community's page reuses (`search_view`, and the partials under templates/pages/search/).

The search runs the same code as `GET /api/records/` (`parse_search_args`, then the search backend), so the page
takes every argument the API takes and a bad query is the API's 400, shown on the page. The URL carries the whole
state: every facet link, sort choice and page link is a plain GET link that can be shared."""

from __future__ import annotations

import hashlib
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any
from urllib.parse import urlencode

import orjson
from flask import Blueprint, Response, current_app, render_template, request, session
from markupsafe import Markup
from werkzeug.datastructures import MultiDict

from repository import urls
from repository.communities import store
from repository.errors import ApiError
from repository.pages.base import page_response, render_page
from repository.paging import Page
from repository.search import multiselect
from repository.search.analysis import analyzed, highlight, plain_words
from repository.search.params import LINK_ARGS, page_links, parse_search_args
from repository.search.query import Bool, Node, Text
from repository.web.openapi import doc
from repository.web.request import services
from repository.web.session import COOKIE as SESSION_COOKIE
from repository.web.session import current_user
from serializers.text import strip_html
from serializers.vocabulary import TYPES, type_info

bp = Blueprint("discover", __name__)

# The facets a page asks for, in the order the sidebar shows them.
FACETS = ("access_right", "type", "file_type", "keywords", "communities", "publication_date")
FACET_TITLES = {"access_right": "Access right", "type": "Resource type", "subtype": "Resource subtype",
                "file_type": "File type", "keywords": "Keyword", "communities": "Community",
                "publication_date": "Publication year"}  # fmt: skip
FILTERS = ("type", "subtype", "access_right", "file_type", "keywords", "communities", "publication_date")
ACCESS_LABELS = {"open": "Open access", "embargoed": "Embargoed", "restricted": "Restricted", "closed": "Closed"}
SORTS = (("bestmatch", "Best match"), ("mostrecent", "Most recent"), ("-mostrecent", "Oldest first"),
         ("mostviewed", "Most viewed"), ("-publication_date", "Publication date, newest"),
         ("publication_date", "Publication date, oldest"), ("version", "Version"))  # fmt: skip
# The state a page's URL may carry: the API's arguments, less the facets list and the way they count (the page
# chooses both: its facets count multi-select, docs/search.md#filters).
STATE_ARGS = tuple(a for a in LINK_ARGS if a not in ("facets", "facet_counts"))
PAGE_SIZES = (10, 20, 50, 100)  # the page-size choices of the search form (any size the API takes works in the URL)
PAGES_AROUND = 2  # page links either side of the current one in the pager
# The publication-year histogram groups years into decades past this many distinct years (docs/search.md#filters).
YEARS_SHOWN = 15
CREATORS_SHOWN = 5
SNIPPET_CHARS = 300
RECENT = 6
PARAMS = [{"name": name, "in": "query", "schema": {"type": "string"}, "description": text} for name, text in (
    ("q", "the query syntax of GET /api/records/"), ("sort", "as for the API; bestmatch with a query"),
    ("page", "page number from 1"), ("size", "results per page (default 10)"),
    ("type", "upload type"), ("subtype", "publication or image type"), ("access_right", "access right"),
    ("file_type", "file extension"), ("keywords", "keyword"), ("communities", "community identifier"),
    ("publication_date", "range yyyy--yyyy"), ("all_versions", "true lists every version"),
)]  # fmt: skip


@dataclass
class SearchView:
    """What the search partials show (templates/pages/search/): the form's state, the cards, facets and pages."""

    action: str  # the path the page's links and form go to (`/search`, `/communities/<id>/`)
    state: list[tuple[str, str]]  # the page's arguments as given (without empty ones and without `facets`)
    q: str = ""
    sort: str = ""
    all_versions: bool = False
    total: int = 0
    cards: list[dict[str, Any]] = field(default_factory=list)
    facets: list[dict[str, Any]] = field(default_factory=list)
    active: list[dict[str, str]] = field(default_factory=list)  # the filters in force, each with its remove link
    page: int = 1
    pages: int = 1
    prev_url: str | None = None
    next_url: str | None = None
    error: ApiError | None = None
    fallback: str | None = None  # the parser's complaint when `q` was searched as plain words instead
    searched: str = ""  # the words searched when falling back
    suggestion: str | None = None  # "did you mean", when nothing matched
    suggestion_url: str | None = None
    size: int = 10
    page_links: list[dict[str, Any]] = field(default_factory=list)  # the pager's numbers (None: a gap)
    years: dict[str, Any] | None = None  # the publication-year histogram and range form
    key: bytes = b""  # what the facets and results show, digested (rendered_results' cache key)
    rendered: Markup | None = None  # the facets and results as rendered before for the same key
    sorts: tuple[tuple[str, str], ...] = SORTS

    @property
    def hidden(self) -> list[tuple[str, str]]:
        """The state the search form carries unseen (its own fields and the page number are not among it)."""
        return [(k, v) for k, v in self.state
                if k not in ("q", "sort", "all_versions", "size", "page", "cursor", "from")]

    @property
    def sizes(self) -> tuple[int, ...]:
        """The page-size choices, with the page's own size if it is another."""
        return PAGE_SIZES if self.size in PAGE_SIZES else tuple(sorted((*PAGE_SIZES, self.size)))

    def hidden_except(self, *names: str) -> list[tuple[str, str]]:
        """The state a small form (the page jump, the year range) carries unseen, less the arguments it sets."""
        return [(k, v) for k, v in self.state if k not in names and k not in ("cursor", "from")]

    @property
    def clear_url(self) -> str:
        """This search without any filter (the query, order and page size kept)."""
        return self.url([(k, v) for k, v in self.state if k not in FILTERS and k not in ("page", "cursor", "from")])

    def url(self, args: list[tuple[str, str]]) -> str:
        return self.action + ("?" + "&".join(_encoded(k, v) for k, v in args) if args else "")


@lru_cache(maxsize=4096)
def _encoded(name: str, value: str) -> str:
    # A results page links each facet value with the rest of its state: the same pairs are encoded many times.
    return urlencode([(name, value)])


def page_state(args: MultiDict, fixed: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """The recognised, non-empty arguments of a page's URL, in the order given; `fixed` ones belong to the path."""
    return [(k, v.strip()) for k, values in args.lists() if k in STATE_ARGS and k not in fixed
            for v in values if v.strip()]


def _toggled(state: list[tuple[str, str]], name: str, value: str, also: tuple[str, str] | None = None,
             replace: bool = False) -> list[tuple[str, str]]:
    """`state` with the filter `name=value` removed if present, else added (with `also`, e.g. a subtype's type);
    `replace` keeps one value of `name`. A changed filter starts again at the first page."""
    kept = [(k, v) for k, v in state if k not in ("page", "cursor", "from")]
    if (name, value) in kept:
        return [(k, v) for k, v in kept if (k, v) != (name, value)]
    if replace:
        kept = [(k, v) for k, v in kept if k != name]
    if also is not None and also not in kept:
        kept.append(also)
    return kept + [(name, value)]


def _label(name: str, value: str, titles: dict[str, str]) -> str:
    if name == "access_right":
        return ACCESS_LABELS.get(value, value)
    if name == "type":
        return TYPES[value].title if value in TYPES else value
    if name == "communities":
        return titles.get(value, value)
    if name == "publication_date" and value.count("--") == 1 and value.split("--")[0] == value.split("--")[1]:
        return value.split("--")[0]
    return value


def _subtype_label(type_: str, subtype: str) -> str:
    entry = TYPES.get(f"{type_}-{subtype}")
    return entry.title if entry else subtype


def _facets(view: SearchView, aggregations: dict[str, Any], titles: dict[str, str]) -> list[dict[str, Any]]:
    """Each facet's buckets as links that add or remove their filter; a chosen value the counts left out (none
    of the hits has it) is still listed, so that it can be removed."""
    out = []
    for name in FACETS:
        if name not in aggregations or name == "publication_date":  # the year histogram shows it (_years)
            continue
        chosen = [v for k, v in view.state if k == name]
        entries = []
        for bucket in aggregations[name].get("buckets", []):
            if name == "publication_date":
                year = bucket["key_as_string"]
                value, label = f"{year}--{year}", year
                url = view.url(_toggled(view.state, name, value, replace=True))
            else:
                value, label = str(bucket["key"]), _label(name, str(bucket["key"]), titles)
                url = view.url(_toggled(view.state, name, value))
            entry = {"value": value, "label": label, "count": bucket["doc_count"], "selected": value in chosen,
                     "url": url, "children": []}
            if name == "type":
                subs = [v for k, v in view.state if k == "subtype"]
                entry["children"] = [
                    {"value": s["key"], "label": _subtype_label(value, s["key"]), "count": s["doc_count"],
                     "selected": s["key"] in subs and value in chosen,
                     "url": view.url(_toggled(view.state, "subtype", s["key"], also=("type", value)))}
                    for s in bucket.get("subtype", {}).get("buckets", [])
                ]
            entries.append(entry)
        listed = {e["value"] for e in entries}
        entries += [{"value": v, "label": _label(name, v, titles), "count": 0, "selected": True, "children": [],
                     "url": view.url(_toggled(view.state, name, v))} for v in chosen if v not in listed]
        if entries:
            out.append({"name": name, "title": FACET_TITLES[name], "entries": entries})
    return out


def _active(view: SearchView, titles: dict[str, str]) -> list[dict[str, str]]:
    active = []
    for name, value in view.state:
        if name in FILTERS:
            label = _label(name, value, titles)
            if name == "subtype":
                types = [v for k, v in view.state if k == "type"]
                label = _subtype_label(types[0], value) if len(types) == 1 else value
            active.append({"title": FACET_TITLES[name], "label": label, "url": view.url(_toggled(view.state, name, value))})
    return active


def plain_snippet(html: str | None, limit: int = SNIPPET_CHARS) -> str:
    """A description's text without its markup (descriptions are HTML; a card shows no HTML of a depositor's),
    cut at a word before `limit` characters."""
    # Paragraphs and list items stay apart (docs/researchers/record-page.md#descriptions-as-text).
    text = strip_html(html)
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0].rstrip(" ,.;:") + "…"


def card(record: dict[str, Any], stems: frozenset[str] = frozenset()) -> dict[str, Any]:
    """What a result card shows of a record of the search results; `stems`: the words to highlight in its title and
    snippet (query_stems)."""
    md = record.get("metadata", {})
    creators = [c.get("name", "") for c in md.get("creators", []) if isinstance(c, dict)]
    right = md.get("access_right", "open")
    snippet = plain_snippet(md.get("description"))
    return {
        "id": record["id"], "url": urls.record_html("", record["id"]), "title": md.get("title") or "Untitled",
        "creators": creators[:CREATORS_SHOWN], "more_creators": max(0, len(creators) - CREATORS_SHOWN),
        "date": md.get("publication_date", ""), "type": type_info(md).title,
        "access_right": right, "access_label": ACCESS_LABELS.get(right, right),
        "doi": record.get("doi") or md.get("doi"), "version": md.get("version"),
        "snippet": snippet, "title_html": highlight(md.get("title") or "Untitled", stems),
        "snippet_html": highlight(snippet, stems),
    }  # fmt: skip


def community_titles(identifiers: list[str]) -> dict[str, str]:
    """The titles of the communities named (unknown ones are left out)."""
    # No community has another kind of name (and PostgreSQL refuses some characters in a query, NUL).
    valid = [i for i in identifiers if store.IDENTIFIER.fullmatch(i)]
    if not valid:
        return {}
    with services().db.read() as conn:
        return store.titles(conn, valid)


def year_range(args: MultiDict) -> MultiDict:
    """`args` with the year range form's `year_from`/`year_to` turned into the `publication_date` filter they mean
    (`2001--2010`, either side open); the form works without JavaScript (docs/search.md#filters)."""
    low, high = (args.get(k, "").strip() for k in ("year_from", "year_to"))
    if "year_from" not in args and "year_to" not in args:
        return args
    out = MultiDict([(k, v) for k, v in args.items(multi=True)
                     if k not in ("year_from", "year_to", "publication_date", "page")])
    if low or high:
        out.add("publication_date", f"{low}--{high}")
    return out


def _q_error(exc: ApiError) -> bool:
    """Whether `exc` is the parser refusing `q` (the page then searches its plain words)."""
    return exc.status == 400 and any(e.get("field") == "q" for e in exc.errors or [])


def search_view(args: MultiDict, action: str, fixed: MultiDict | None = None) -> SearchView:
    """Run the search a page's URL asks for (plus `fixed` arguments its path implies, e.g. a community) with the
    API's own parsing and backend, its facets counted multi-select. A `q` the parser refuses is searched as plain
    words, with the parser's message kept to tell the visitor; any other bad argument leaves its ApiError in
    `error` (the page answers its status)."""
    fixed = fixed or MultiDict()
    view = SearchView(action=action, state=page_state(year_range(args), tuple(fixed.keys())))
    view.q = next((v for k, v in view.state if k == "q"), "")
    view.all_versions = any(k == "all_versions" and v.lower() in ("1", "true") for k, v in view.state)
    s = services()
    window = s.settings.SEARCH_WINDOW
    query = MultiDict(view.state)
    for key, value in fixed.items(multi=True):
        query.add(key, value)
    query["facets"] = ",".join(f for f in FACETS if f not in fixed)
    query["facet_counts"] = "multiselect"
    try:
        try:
            req = parse_search_args(query, cursor_key=s.secret, window=window)
        except ApiError as exc:
            if not _q_error(exc):
                raise
            view.fallback, view.searched = exc.message, plain_words(view.q)
            query["q"] = view.searched
            req = parse_search_args(query, cursor_key=s.secret, window=window)
        result = multiselect.search(s.search, req)
    except ApiError as exc:
        if exc.status >= 500:
            raise
        view.error = exc
        return view
    view.sort = req.sort_arg
    view.size = req.size
    view.total = result.total
    view.page = req.offset // req.size + 1
    view.pages = max(1, math.ceil(min(result.total, window) / req.size))
    links = page_links(req, result.next_cursor, window)
    drop = {"facets", "facet_counts", *fixed.keys()}
    if "prev" in links:
        view.prev_url = view.url([(k, v) for k, v in links["prev"] if k not in drop])
    if "next" in links:
        view.next_url = view.url([(k, v) for k, v in links["next"] if k not in drop])
    view.page_links = _page_numbers(view, req.after is not None)
    if not result.total and view.q and view.fallback is None:
        _suggest(view, s.search)
    buckets = result.aggregations.get("communities", {}).get("buckets", [])
    chosen = [v for k, v in view.state if k == "communities"]
    titles = community_titles(sorted({str(b["key"]) for b in buckets} | set(chosen))) if buckets or chosen else {}
    view.key = _content_key(view, result, titles)
    view.rendered = _remembered("parts", view.key)
    if view.rendered is None:
        stems = query_stems(req.query)
        view.cards = [card(r, stems) for r in result.hits]
        view.facets = _facets(view, result.aggregations, titles)
        view.years = _years(view, result.aggregations.get("publication_date"))
    view.active = _active(view, titles)
    return view


def query_stems(node: Node) -> frozenset[str]:
    """The stems of the words a query searches as text (what a results page highlights)."""
    found: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Text):
            found.update(analyzed(item.text, "words"))
        elif isinstance(item, Bool):
            stack.extend((*item.must, *item.should, *item.filter))  # words a record must not have are not shown
    return frozenset(found)


def _suggest(view: SearchView, backend: Any) -> None:
    """"Did you mean" for a search of plain words that found nothing: each word no title or description holds,
    replaced by the nearest frequent term of those fields (SearchReader.suggest)."""
    if view.q.split() != plain_words(view.q).split():
        return  # query syntax: a suggestion of its words alone would change what it means
    words = list(analyzed(view.q, "exact"))
    suggested = backend.suggest(words)
    if suggested != words:
        view.suggestion = " ".join(suggested)
        view.suggestion_url = view.url([(k, v) for k, v in view.state if k not in ("q", "page", "cursor", "from")]
                                       + [("q", view.suggestion)])


def _page_numbers(view: SearchView, by_cursor: bool) -> list[dict[str, Any]]:
    """The pager's page numbers: the first, the last and PAGES_AROUND either side of the current one, with gaps
    (None) between; none for a cursor walk (past the window, pages have no numbers)."""
    if by_cursor or view.pages <= 1:
        return []
    shown = sorted({1, view.pages, *range(max(1, view.page - PAGES_AROUND),
                                          min(view.pages, view.page + PAGES_AROUND) + 1)})
    kept = [(k, v) for k, v in view.state if k not in ("page", "cursor", "from")]
    out: list[dict[str, Any]] = []
    for number in shown:
        if out and number - out[-1]["number"] > 1:
            out.append({"number": None})
        out.append({"number": number, "current": number == view.page,
                    "url": view.url(kept + ([("page", str(number))] if number > 1 else []))})
    return out


def _years(view: SearchView, aggregation: dict[str, Any] | None) -> dict[str, Any] | None:
    """The publication-year histogram: a bar per year (per decade past YEARS_SHOWN years), each a link to that
    range, the range in force marked, and the from-to form's values. A bar's height is in tenths of the highest
    (a class: the pages' Content-Security-Policy refuses inline styles)."""
    counts = {int(b["key_as_string"]): int(b["doc_count"]) for b in (aggregation or {}).get("buckets", [])}
    chosen = next((v for k, v in view.state if k == "publication_date"), "")
    low, _, high = chosen.partition("--")
    if not counts and not chosen:
        return None
    span = 10 if len(counts) > YEARS_SHOWN else 1
    grouped: dict[int, int] = {}
    for year, count in counts.items():
        grouped[year - year % span] = grouped.get(year - year % span, 0) + count
    most = max(grouped.values(), default=1)
    bars = []
    for start, count in sorted(grouped.items()):
        end = start + span - 1
        value = f"{start}--{end}"
        bars.append({"label": f"{start}s" if span > 1 else str(start), "count": count,
                     "height": max(1, round(10 * count / most)), "selected": value == chosen,
                     "url": view.url(_toggled(view.state, "publication_date", value, replace=True))})
    return {"bars": bars, "decades": span > 1, "low": low.strip().lstrip(">")[:4], "high": high.strip().lstrip("<")[:4],
            "first": min(counts, default=None), "last": max(counts, default=None)}


# The facets and results of a search, rendered (most of a search page's cost), by what they show: the page's
# state, the search's answer (hits, total, counts, cursor) and the community titles. A key is a digest of all of
# it, so an entry is never stale: a publish, an edit or a take-down that changes an answer changes its key; an
# entry nobody asks for any more falls out of the LRU.
RENDERED_ENTRIES = 512


@dataclass
class _Rendered:
    """Each app's caches (an app's pages carry its settings, e.g. the site's name): the rendered facets and results,
    and whole search pages of guests without a session (nothing of a person's on them: no name, no form token, no
    notice), both by the same key; such a page then costs what the API's search costs."""

    parts: OrderedDict[bytes, Markup] = field(default_factory=OrderedDict)
    guest_pages: OrderedDict[bytes, str] = field(default_factory=OrderedDict)
    lock: threading.Lock = field(default_factory=threading.Lock)  # the server's threads share them


def _caches() -> _Rendered:
    found: _Rendered = current_app.extensions.setdefault("search_pages", _Rendered())
    return found


def _remembered(kind: str, key: bytes) -> Any:
    caches = _caches()
    cache = getattr(caches, kind)
    with caches.lock:
        found = cache.get(key)
        if found is not None:
            cache.move_to_end(key)
        return found


def _remember(kind: str, key: bytes, value: Any) -> None:
    caches = _caches()
    cache = getattr(caches, kind)
    with caches.lock:
        cache[key] = value
        while len(cache) > RENDERED_ENTRIES:
            cache.popitem(last=False)


def _content_key(view: SearchView, result: Any, titles: dict[str, str]) -> bytes:
    # A card shows only what a record's revision fixes (`card`), so each hit is named by id, revision and update
    # time rather than dumped whole (20 hits are ~100 KB of JSON: ~175 µs a page to digest).
    hits = [(hit.get("id"), hit.get("revision"), hit.get("updated")) for hit in result.hits]
    shown = (view.action, view.state, view.page, view.pages, view.prev_url, view.next_url, view.sort, titles,
             result.total, hits, result.aggregations, view.fallback, view.suggestion)
    return hashlib.blake2b(orjson.dumps(shown, option=orjson.OPT_NON_STR_KEYS), digest_size=20).digest()


def rendered_results(view: SearchView) -> Markup:
    """The search's facets and results (templates/pages/search/_results_and_facets.html), from the cache when
    the same answer was rendered before."""
    if view.rendered is not None:
        return view.rendered
    html = Markup(render_template("pages/search/_results_and_facets.html", search=view))
    if view.key:
        _remember("parts", view.key, html)
    return html


def public_when_anonymous(response: Response) -> Response:
    """Let browsers and shared caches keep a page nobody is signed in to (revalidated by its ETag each time, so a
    new record shows at once); a signed-in person's page (their name, a form token) stays `private, no-store`."""
    if current_user() is None and not session.modified and response.status_code == 200:
        response.headers["Cache-Control"] = "public, no-cache"
        response.headers["Vary"] = "Cookie"
        response.add_etag()
        response.make_conditional(request)
    return response


@bp.get("/")
def front() -> Response:
    """The front page: a search box, the newest records, communities, and how many there are of each."""
    s = services()
    req = parse_search_args(MultiDict({"sort": "mostrecent", "size": str(RECENT), "facets": "type"}),
                            cursor_key=s.secret, window=s.settings.SEARCH_WINDOW)
    result = s.search.search(req)
    with s.db.read() as conn:
        communities, community_count = store.search(conn, None, ("ranking", False), Page(1, 6))
    types = [{"label": _label("type", str(b["key"]), {}), "count": b["doc_count"],
              "url": urls.record_search_html("", {"type": b["key"]})}
             for b in result.aggregations.get("type", {}).get("buckets", [])]
    response = render_page(
        "discover/front.html", recent=[card(r) for r in result.hits], record_count=result.total, types=types,
        communities=[{"id": c.identifier, "title": c.title, "snippet": plain_snippet(c.description, 160)}
                     for c in communities],
        community_count=community_count)
    return public_when_anonymous(response)


@bp.get("/search")
@doc(parameters=PARAMS)
def search() -> Response:
    """Search published records with the API's query syntax and filters: result cards, facets that add or remove
    a filter, paging. A bad query answers 400 with its message on the page."""
    view = search_view(request.args, urls.record_search_html(""))
    status = view.error.status if view.error else 200
    guest = view.key and SESSION_COOKIE not in request.cookies
    html = _remembered("guest_pages", view.key) if guest else None
    if html is not None:
        return public_when_anonymous(page_response(html, status))
    response = render_page("discover/search.html", status, search=view, site_query=view.q,
                           results=rendered_results(view))
    if guest:
        _remember("guest_pages", view.key, response.get_data(as_text=True))
    return public_when_anonymous(response)
