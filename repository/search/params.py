"""The query arguments of `GET /api/records/` -> a validated SearchRequest (docs/reference-behaviour.md#search-parameters and #sort-options)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Protocol, overload

from repository.errors import BadRequest, field_error
from repository.search.custom_terms import CUSTOM_TERMS
from repository.search.documents import SORT_ORDERS
from repository.search.query import (
    Bool,
    GeoBox,
    MatchAll,
    MatchNone,
    Node,
    Range,
    Regex,
    Term,
    Terms,
    Wildcard,
    date_range,
    invalid,
    parse_query,
)

WINDOW = 10_000
DEFAULT_SIZE = 10
DEFAULT_FACETS = ("access_right", "type", "file_type", "keywords")
FACETS = DEFAULT_FACETS + ("communities", "publication_date")
# Post-filters narrow the hits but not the aggregations (docs/reference-behaviour.md#search-parameters).
POST_FILTERS = {"type": "resource_type.type", "subtype": "resource_type.subtype", "access_right": "access_right",
                "file_type": "filetype", "keywords": "keywords"}
STATUSES = ("draft", "published")  # the specification's `status` values
LINK_ARGS = ("q", "status", "sort", "size", "page", "from", "all_versions", "communities", "type", "subtype",
             "access_right", "file_type", "keywords", "publication_date", "bounds", "custom", "facets", "cursor",
             "facet_counts")
# How facets count (docs/api/records.md#facet-counts): "post_filter", the reference's (a facet ignores the filters
# given as type, subtype, access_right, file_type and keywords), or "multiselect" (each facet applies every filter
# in force but its own).
FACET_COUNTS = ("post_filter", "multiselect")
# The facet each filter argument belongs to: multiselect counting leaves a facet's own filters out of its counts
# (a subtype is counted inside its type).
FILTER_FACETS = {"type": "type", "subtype": "type", "access_right": "access_right", "file_type": "file_type",
                 "keywords": "keywords", "communities": "communities", "publication_date": "publication_date"}
BOUNDS_FORMAT = ("Invalid bounds: four comma-separated numbers required. "
                 "Example: 143.37158,-38.99357,146.90918,-37.35269")
# Queries whose hits all score alike (constant-score queries; filters add nothing to the score): their relevance
# order is recid order, whatever the rest of the index holds.
CONSTANT_SCORE = (MatchAll, Range, Wildcard, Regex, Terms, GeoBox)
_CUSTOM = re.compile(r"\[([^\[\]]+)\]:(?:\[(.*)\]|(.+))", re.DOTALL)


class Args(Protocol):
    """The part of werkzeug's MultiDict used here (overloaded as MultiDict's own `get` is)."""

    @overload
    def get(self, key: str) -> Any: ...
    @overload
    def get(self, key: str, default: Any) -> Any: ...

    def getlist(self, key: str) -> list[str]: ...


@dataclass(frozen=True)
class SearchRequest:
    """One validated search: the query, filters that count in aggregations, post-filters, order and page."""

    q: str
    query: Node
    filters: tuple[Node, ...]
    post_filters: tuple[Node, ...]
    sort: str  # an option of SORT_ORDERS
    descending: bool
    offset: int
    size: int
    facets: tuple[str, ...]
    after: tuple[Any, ...] | None = None  # search_after values from a cursor
    multiselect: bool = False  # facet_counts=multiselect (repository/search/multiselect.py)
    # (facet, node) of each filter or post-filter that belongs to a facet (FILTER_FACETS), for multiselect counting
    facet_filters: tuple[tuple[str, Node], ...] = ()
    fingerprint: str = ""
    args: tuple[tuple[str, str], ...] = ()  # the recognised arguments as given, for links
    cursor_key: bytes = field(default=b"", repr=False)

    @property
    def constant_score(self) -> bool:
        """True when every hit of the query scores alike (see CONSTANT_SCORE)."""
        return isinstance(self.query, CONSTANT_SCORE)

    @property
    def sort_arg(self) -> str:
        """The `sort` argument that reproduces this order."""
        return ("-" if self.descending != (SORT_ORDERS[self.sort] == "desc") else "") + self.sort

    def cursor_for(self, after: list[Any] | tuple[Any, ...], position: int) -> str:
        """The opaque cursor continuing this search after the hit with sort values `after`."""
        payload = json.dumps({"s": self.sort_arg, "a": list(after), "n": position, "f": self.fingerprint},
                             separators=(",", ":")).encode()
        body = base64.urlsafe_b64encode(payload).decode().rstrip("=")
        return f"{body}.{_sign(self.cursor_key, body)}"

    def link_args(self, page: int | None = None, cursor: str | None = None) -> list[tuple[str, str]]:
        """The arguments of a link to another page (by number) or to the page after a cursor."""
        kept = [(k, v) for k, v in self.args if k not in ("page", "cursor", "from")]
        if cursor is not None:
            return kept + [("cursor", cursor)]
        return kept + [("page", str(page if page is not None else self.offset // self.size + 1))]


def _sign(key: bytes, body: str) -> str:
    return hmac.new(key, body.encode(), hashlib.sha256).hexdigest()[:24]


def _int_arg(args: Args, name: str, default: int) -> int:
    raw = args.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except (TypeError, ValueError):
        raise BadRequest("Invalid pagination parameters.", errors=[field_error(name, "Not a valid integer.")]) from None
    if value < 1:
        raise BadRequest("Invalid pagination parameters.", errors=[field_error(name, "Must be at least 1.")])
    return value


def parse_sort(raw: str | None, has_query: bool) -> tuple[str, bool]:
    """`sort` -> (option, descending); bestmatch is the default with a query, mostrecent without."""
    raw = (raw or "").strip() or ("bestmatch" if has_query else "mostrecent")
    reverse = raw.startswith("-")
    name = raw.lstrip("-")
    if name not in SORT_ORDERS:
        raise invalid(f'Invalid sort option "{raw}". Valid options: {", ".join(SORT_ORDERS)}; '
                      'a leading "-" reverses the order.', "sort")
    return name, (SORT_ORDERS[name] == "desc") != reverse


def parse_bounds(raw: str) -> GeoBox:
    """`minLon,minLat,maxLon,maxLat` -> a box over record locations, with the reference's messages."""
    parts = raw.split(",")
    if len(parts) != 4:
        raise invalid(BOUNDS_FORMAT, "bounds")
    try:
        numbers = [float(p) for p in parts]
    except ValueError:
        raise invalid("Invalid number in bounds.", "bounds") from None
    for part, number in zip(parts, numbers, strict=True):
        if not math.isfinite(number):
            raise invalid(f'Invalid number: "{part.strip()}" is not a permitted value.', "bounds")
    min_lon, min_lat, max_lon, max_lat = numbers
    if not (-90 <= min_lat <= 90 and -90 <= max_lat <= 90):
        raise invalid("Latitude must be between -90 and 90.", "bounds")
    if not (-180 <= min_lon <= 180 and -180 <= max_lon <= 180):
        raise invalid("Longitude must be between -180 and 180.", "bounds")
    if max_lat <= min_lat:
        raise invalid("Top-right latitude must be greater than bottom-left latitude.", "bounds")
    return GeoBox("locations.point", min_lon, min_lat, max_lon, max_lat)


def parse_custom(raw: str, terms: frozenset[str] = CUSTOM_TERMS) -> Term:
    """`[term]:[value]` (relationships: `[term]:[subject:object]`) -> an exact filter on the custom field."""
    match = _CUSTOM.fullmatch(raw.strip())
    if not match:
        raise invalid("The parameter should have the format: custom=[term]:[value].", "custom")
    term, value = match.group(1).strip(), (match.group(2) if match.group(2) is not None else match.group(3)).strip()
    if term not in terms:
        raise invalid(f'The "{term}" term is not supported.', "custom")
    if not value:
        raise invalid("The parameter should have the format: custom=[term]:[value].", "custom")
    return Term("custom", f"{term}:{value}".lower())


def parse_date_filter(raw: str) -> Range | MatchNone:
    """`yyyy--yyyy` with either side optional; `>` on the left or `<` on the right makes that side strict."""
    if raw.count("--") != 1:
        raise invalid("Invalid range format.", "publication_date")
    low: str | None
    high: str | None
    low, high = (part.strip() for part in raw.split("--"))
    strict_low, strict_high = low.startswith(">"), high.startswith("<")
    low, high = low.lstrip(">").strip() or None, high.lstrip("<").strip() or None
    if low is None and high is None:
        raise invalid("Invalid range format.", "publication_date")
    try:
        return date_range("publication_date", low, high, not strict_low, not strict_high, "publication_date")
    except BadRequest:
        raise invalid("Invalid range format.", "publication_date") from None


MAX_CURSOR = 2048  # characters: a real cursor is about 150


def _decode_cursor(raw: str, key: bytes) -> dict[str, Any]:
    """The payload of a cursor this service signed, with the shape `cursor_for` gives it; 400 otherwise (a cursor
    signed with a known secret may still carry anything)."""
    body, _, signature = raw.partition(".")
    try:
        if len(raw) > MAX_CURSOR or not hmac.compare_digest(signature, _sign(key, body)):
            raise ValueError("bad signature")
        data = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)), parse_constant=_no_constant)
        if not (isinstance(data, dict) and isinstance(data.get("a"), list) and _whole(data.get("n"))
                and isinstance(data.get("f"), str)):
            raise ValueError("bad payload")
        return data
    except (ValueError, TypeError, AttributeError, RecursionError):
        raise invalid("Invalid cursor: use the links.next URL of a previous page.", "cursor") from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} in a cursor")  # NaN and Infinity: json accepts them, no engine does


def _whole(value: Any, low: int = 0, high: int = 2**63 - 1) -> bool:
    """An int (not a bool) within the engines' 64-bit range."""
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _after_fits(sort: str, after: tuple[Any, ...]) -> bool:
    """Score + recid for bestmatch, one hex sort key otherwise (what the backends put in cursors)."""
    if sort == "bestmatch":
        return (len(after) == 2 and isinstance(after[0], int | float) and not isinstance(after[0], bool)
                and abs(after[0]) < 1e300 and _whole(after[1], -(2**63)))
    return (len(after) == 1 and isinstance(after[0], str) and 0 < len(after[0]) <= 256
            and all(c in "0123456789abcdef" for c in after[0]))


def parse_search_args(args: Args, *, cursor_key: bytes = b"", window: int = WINDOW,
                      custom_terms: frozenset[str] = CUSTOM_TERMS) -> SearchRequest:
    """Validate the search arguments; every problem is a BadRequest naming its parameter."""
    q = (args.get("q") or "").strip()
    query = parse_query(q)
    sort, descending = parse_sort(args.get("sort"), bool(q))
    size = _int_arg(args, "size", DEFAULT_SIZE)
    if args.get("page") not in (None, "") and args.get("from") not in (None, ""):
        raise BadRequest("Invalid pagination parameters.",
                         errors=[field_error("from", "Cannot be combined with page.")])
    if args.get("from") not in (None, ""):
        offset = _int_arg(args, "from", 1) - 1
    else:
        offset = (_int_arg(args, "page", 1) - 1) * size

    filters: list[Node] = []
    named: list[tuple[str, Node]] = []
    status = args.get("status")
    if status not in (None, "", *STATUSES):
        raise invalid(f'Invalid status "{status}": use {" or ".join(STATUSES)}.', "status")
    if status == "draft":
        filters.append(MatchNone())  # records are published: no record is a draft
    all_versions = args.get("all_versions")
    if all_versions is None or all_versions.strip().lower() not in ("", "1", "true"):
        filters.append(Term("relations.version.is_last", True))
    communities = [c for c in args.getlist("communities") if c]
    if communities:
        filters.append(Terms("communities", tuple(communities)))
        named.append(("communities", filters[-1]))
    if args.get("bounds"):
        filters.append(parse_bounds(args.get("bounds")))
    filters.extend(parse_custom(raw, custom_terms) for raw in args.getlist("custom") if raw)
    if args.get("publication_date"):
        filters.append(parse_date_filter(args.get("publication_date")))
        named.append(("publication_date", filters[-1]))
    post_filters = []
    for name, index_field in POST_FILTERS.items():
        values = [v for v in args.getlist(name) if v]
        if values:
            post_filters.append(Terms(index_field, tuple(values)))
            named.append((FILTER_FACETS[name], post_filters[-1]))
    counting = (args.get("facet_counts") or "").strip() or FACET_COUNTS[0]
    if counting not in FACET_COUNTS:
        raise invalid(f'Invalid facet_counts "{counting}": use {" or ".join(FACET_COUNTS)}.', "facet_counts")

    facets = DEFAULT_FACETS
    if args.get("facets"):
        facets = tuple(f.strip() for f in args.get("facets").split(",") if f.strip())
        unknown = [f for f in facets if f not in FACETS]
        if unknown:
            raise invalid(f'Unknown facet "{unknown[0]}". Available: {", ".join(FACETS)}.', "facets")

    recognised = tuple((k, v) for k in LINK_ARGS for v in args.getlist(k))
    fingerprint = hashlib.sha256(json.dumps(
        [q, sort, descending, [(k, v) for k, v in recognised
                               if k not in ("page", "size", "cursor", "facets", "facet_counts")]],
    ).encode()).hexdigest()[:16]
    after = None
    raw_cursor = args.get("cursor")
    if raw_cursor:
        data = _decode_cursor(raw_cursor, cursor_key)
        if data.get("f") != fingerprint:
            raise invalid("The cursor belongs to another search: keep q, sort and the filters unchanged.", "cursor")
        after, offset = tuple(data["a"]), data["n"]
        if not _after_fits(sort, after) or offset < 0:
            raise invalid("Invalid cursor: use the links.next URL of a previous page.", "cursor")
    if size > window or (after is None and offset + size > window):
        raise BadRequest(f"Maximum number of {window} results have been reached.",
                         errors=[field_error("page", f"page * size must not exceed {window}; "
                                                     "follow links.next (a cursor) to read further.")])
    return SearchRequest(
        q=q, query=query, filters=tuple(filters), post_filters=tuple(post_filters), sort=sort,
        descending=descending, offset=offset, size=size, facets=facets, after=after,
        multiselect=counting == "multiselect", facet_filters=tuple(named),
        fingerprint=fingerprint, args=recognised, cursor_key=cursor_key)


def page_links(req: SearchRequest, next_cursor: str | None,
               window: int = WINDOW) -> dict[str, list[tuple[str, str]]]:
    """Arguments of the `self`, `prev` and `next` links: page numbers inside the window, the cursor beyond it."""
    links: dict[str, list[tuple[str, str]]] = {"self": list(req.args)}
    if req.after is not None:  # a cursor walk goes on by cursor only
        if next_cursor:
            links["next"] = req.link_args(cursor=next_cursor)
        return links
    page = req.offset // req.size + 1
    if page > 1:
        links["prev"] = req.link_args(page=page - 1)
    if next_cursor:
        fits = (page + 1) * req.size <= window
        links["next"] = req.link_args(page=page + 1) if fits else req.link_args(cursor=next_cursor)
    return links


def combined(req: SearchRequest, with_post_filters: bool = True) -> Node:
    """The whole query of a request as one tree (the embedded engine needs it in one piece)."""
    filters = req.filters + (req.post_filters if with_post_filters else ())
    return Bool(must=(req.query,), filter=filters) if filters else req.query
