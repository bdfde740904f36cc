"""`q` in the query_string syntax -> a small backend-neutral query tree with fields resolved against the mapping."""

from __future__ import annotations

import calendar
import fnmatch
import functools
import re
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import re2
from luqum import tree as lq
from luqum.exceptions import IllegalCharacterError, ParseError
from luqum.parser import parser as _luqum

from repository.errors import BadRequest, field_error
from repository.search.mapping import SOURCE_FIELD, Field, fields


# --- the tree both backends translate ------------------------------------------------------------
@dataclass(frozen=True)
class MatchAll:
    pass


@dataclass(frozen=True)
class MatchNone:
    pass


@dataclass(frozen=True)
class Term:
    """Exact value of a keyword, number or boolean field (already normalized as the field indexes it)."""

    field: str
    value: Any


@dataclass(frozen=True)
class Terms:
    field: str
    values: tuple[Any, ...]


@dataclass(frozen=True)
class Text:
    """Analyzed text on a text field: all its words, in order (a phrase when there are several)."""

    field: str
    text: str


@dataclass(frozen=True)
class Wildcard:
    """A pattern in the OpenSearch wildcard syntax: `*`, `?`, and `\\` escaping a literal one."""

    field: str
    pattern: str


@dataclass(frozen=True)
class Regex:
    field: str
    pattern: str


@dataclass(frozen=True)
class Range:
    """Bounds are ints (number fields) or aware UTC datetimes (date fields)."""

    field: str
    gte: Any = None
    gt: Any = None
    lte: Any = None
    lt: Any = None


@dataclass(frozen=True)
class Exists:
    field: str


@dataclass(frozen=True)
class GeoBox:
    """A box over geo points; min_lon > max_lon crosses the antimeridian."""

    field: str
    min_lon: float
    min_lat: float
    max_lon: float
    max_lat: float


@dataclass(frozen=True)
class Bool:
    """Lucene semantics: with no must/filter at least one should matches; `filter` does not score."""

    must: tuple[Node, ...] = ()
    should: tuple[Node, ...] = ()
    must_not: tuple[Node, ...] = ()
    filter: tuple[Node, ...] = ()


Node = MatchAll | MatchNone | Term | Terms | Text | Wildcard | Regex | Range | Exists | GeoBox | Bool

# --- bounds --------------------------------------------------------------------------------------
# Every `q` is measured against these before an engine sees it (records, the deposition list, any other caller of
# parse_query), so that one request cannot cost seconds of CPU: a thousand `*` made the engine build dozens of
# huge automata (~10 s). Module constants rather than settings: they protect the server whatever the corpus or
# the engine, and they sit far above what people type in a search box or clients build (a DOI list of 150
# quoted DOIs fits; see tests/test_query_bounds.py).
MAX_Q_LENGTH = 4000  # characters
MAX_DEPTH = 32  # nesting of groups, fields, operators and +/- prefixes
# Leaf clauses once an unfielded word has spread over the default fields (each one is a look-up in a field's
# terms): OpenSearch's own default `indices.query.bool.max_clause_count`, so both engines refuse the same queries.
MAX_CLAUSES = 1024
# Wildcard and regular-expression clauses become automata that walk a field's term dictionary; building one costs
# about 2 ms per wildcard or regex operator on the embedded engine (measured: a 10-wildcard pattern takes 20-40 ms
# per field, and a thousand `*` spread over the 30 default fields took 9 s). The cost of a query is the sum over its
# pattern clauses (after the spread) of their wildcards/operators: two unfielded `data*`, or up to 64 wildcards
# on named fields.
MAX_PATTERN_COST = 64
MAX_PATTERN_LENGTH = 100  # characters of one wildcard or regular-expression term
MAX_PATTERN_WILDCARDS = 10  # `*` and `?` in one wildcard term (runs of `*` count once)
# Whole numbers per mapping type (the engines' integer widths: a wider number is an engine error, not a 400).
NUMBER_RANGES = {"long": (-(2**63), 2**63 - 1), "integer": (-(2**31), 2**31 - 1),
                 "short": (-(2**15), 2**15 - 1), "byte": (-128, 127)}
_INTEGER = re.compile(r"[+-]?[0-9]+")
REGEX_MEMORY = 8 << 20  # bytes RE2 may use for one compiled pattern (its default; bigger programs are refused)

# --- field names ---------------------------------------------------------------------------------
ALIASES = {
    "id": "recid", "_created": "created", "_updated": "updated", "_files.key": "filename",
    "_files.type": "filetype", "files.key": "filename", "files.type": "filetype", "is_last": "relations.version.is_last",
    "version_index": "relations.version.index", "type": "resource_type.type", "subtype": "resource_type.subtype",
    "resource_type": "resource_type.type", "license": "license.id", "communities.id": "communities",
    "creators": "creators.name", "contributors": "contributors.name", "subject": "subject.term",
    "locations.lat": "locations.point", "file_type": "filetype",
}
PREFIX_ALIASES = (("metadata.", ""), ("_stats.", "stats."), ("subjects.", "subject."),
                  ("related_identifiers.", "related."), ("alternate_identifiers.", "alternate."))
IDENTIFIER_FIELDS = ("doi", "conceptdoi")
DEFAULT_KEYWORD_FIELDS = ("doi", "conceptdoi", "keywords", "communities", "creators.orcid", "contributors.orcid",
                          "filename", "grants.code", "grants.acronym", "resource_type.type", "resource_type.subtype",
                          "license.id", "meeting.acronym", "related.identifier", "alternate.identifier")
_DOI = re.compile(r"(?:https?://(?:dx\.)?doi\.org/)?(10\.\d{4,9}/\S+)", re.IGNORECASE)
_DATE = re.compile(r"(\d{4})(?:-(\d{1,2})(?:-(\d{1,2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?"
                   r"(Z|[+-]\d{2}:?\d{2})?)?)?)?")
_lock = threading.Lock()  # ply parsers keep state: one parse at a time


def invalid(message: str, field: str = "q") -> BadRequest:
    """The 400 every bad search parameter answers with."""
    return BadRequest(message, errors=[field_error(field, message)])


def searchable() -> dict[str, Field]:
    """Fields a query may name: everything indexed except the internal sort keys."""
    return {name: f for name, f in fields().items() if not name.startswith("sort_")}


def resolve_field(name: str) -> list[Field]:
    """Map a field name of `q` (aliases, `metadata.` paths, `journal.*` globs) to index fields; 400 if unknown."""
    name = name.replace("\\", "")
    name = ALIASES.get(name, name)
    for prefix, replacement in PREFIX_ALIASES:
        if name.startswith(prefix):
            name = ALIASES.get(replacement + name[len(prefix):], replacement + name[len(prefix):])
    known = searchable()
    if "*" in name or "?" in name:
        # Companion fields (`title.exact`) are named, never globbed: a glob searches each field once.
        matched = [f for n, f in known.items() if fnmatch.fnmatchcase(n, name) and f.kind != "geo" and not f.parent]
        if matched:
            return matched
    elif name in known:
        return [known[name]]
    raise invalid(f'Unknown search field "{name}" in q.')


def exists_query(name: str) -> Node:
    """`_exists_:<name>` for every field of the mapping: a leaf, an object (`grants`: any of its fields), a glob,
    an alias; 400 if the mapping has no such field."""
    path = name.replace("\\", "")
    for prefix, replacement in PREFIX_ALIASES:
        if path + "." == prefix:
            path = replacement.rstrip(".")
        elif path.startswith(prefix):
            path = replacement + path[len(prefix):]
    if path == SOURCE_FIELD:
        return MatchAll()  # the stored record: every document has it
    every = fields()
    # Companion fields (`title.exact`) hold what their parent holds: the parent answers for them.
    inside = [f for n, f in every.items() if n.startswith(path + ".") and not f.parent]
    if inside:
        return _any([Exists(f.name) for f in inside])
    if path in every:
        return Exists(path)
    return _any([Exists(f.name) for f in resolve_field(name)])


# --- dates ---------------------------------------------------------------------------------------
def date_span(text: str, field: str = "q") -> tuple[datetime, datetime | None]:
    """A full or partial ISO date -> [start, end) in UTC; `2020` spans the whole year. The end is None when it
    lies past the last representable moment (the year 9999)."""
    if text.strip().lower() == "now":
        now = datetime.now(UTC).replace(microsecond=0)
        return now, now + timedelta(seconds=1)
    match = _DATE.fullmatch(text.strip())
    if not match:
        raise invalid(f'Invalid date "{text}": use YYYY, YYYY-MM, YYYY-MM-DD, an ISO 8601 timestamp or now.', field)
    year, month, day, hour, minute, second, zone = match.groups()
    try:
        start = datetime(int(year), int(month or 1), int(day or 1), int(hour or 0), int(minute or 0),
                         int(second or 0), tzinfo=UTC)
    except ValueError as exc:
        raise invalid(f'Invalid date "{text}": {exc}.', field) from exc
    try:
        if zone and zone != "Z":
            sign = 1 if zone[0] == "+" else -1
            digits = zone[1:].replace(":", "")
            offset = timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:])))
            start = start.replace(tzinfo=offset).astimezone(UTC)
    except (ValueError, OverflowError) as exc:
        raise invalid(f'Invalid date "{_shorten(text)}": {exc}.', field) from None
    try:
        if month is None:
            end = start.replace(year=start.year + 1)
        elif day is None:
            end = start + timedelta(days=calendar.monthrange(start.year, start.month)[1])
        elif hour is None:
            end = start + timedelta(days=1)
        elif second is None:
            end = start + timedelta(minutes=1)
        else:
            end = start + timedelta(seconds=1)
    except (ValueError, OverflowError):
        return start, None
    return start, end


def date_range(field: str, low: str | None, high: str | None, include_low: bool = True,
               include_high: bool = True, param: str = "q") -> Range | MatchNone:
    """A range over a date field where partial dates cover their whole period (`[2020 TO 2021]` = 2020-2021)."""
    gte = lt = None
    if low is not None:
        start, end = date_span(low, param)
        if not include_low and end is None:
            return MatchNone()  # after the end of time
        gte = start if include_low else end
    if high is not None:
        start, end = date_span(high, param)
        lt = end if include_high else start
    return Range(field, gte=gte, lt=lt)


# --- the compiler --------------------------------------------------------------------------------
def _chars(raw: str) -> list[tuple[str, bool]]:
    """Characters of a luqum word with their escaped flag."""
    out, i = [], 0
    while i < len(raw):
        if raw[i] == "\\" and i + 1 < len(raw):
            out.append((raw[i + 1], True))
            i += 2
        else:
            out.append((raw[i], False))
            i += 1
    return out


def _pattern(chars: list[tuple[str, bool]], lower: bool) -> str:
    out: list[str] = []
    for i, (ch, escaped) in enumerate(chars):
        if ch == "*" and not escaped and i and chars[i - 1] == ("*", False):
            continue  # `a**b` is `a*b`, with one automaton loop instead of two
        ch = ch.lower() if lower else ch
        out.append("\\" + ch if (escaped and ch in "*?\\") or (not escaped and ch == "\\") else ch)
    return "".join(out)


def number(field: Field, text: str) -> int:
    """A whole number for a number field, within the width the engines give its type; 400 otherwise."""
    low, high = NUMBER_RANGES.get(field.type, NUMBER_RANGES["long"])
    value = text.strip()
    if not _INTEGER.fullmatch(value) or len(value) > 21:
        raise invalid(f'"{field.name}" takes a whole number, not "{_shorten(text)}".')
    if not low <= int(value) <= high:
        raise invalid(f'"{field.name}" takes a whole number from {low} to {high}, not {_shorten(value)}.')
    return int(value)


def _shorten(text: str, limit: int = 40) -> str:
    """A piece of the caller's input quoted in a message: never the whole of a long one."""
    return text if len(text) <= limit else text[:limit] + "…"


@functools.lru_cache(maxsize=256)
def compile_regex(pattern: str, case_sensitive: bool = True) -> re2._Regexp:
    """`pattern` compiled by RE2: matching takes time linear in the text whatever the pattern (no backtracking),
    and its syntax is the one the embedded engine's regexes share; 400 naming `q` when RE2 refuses it."""
    options = re2.Options()
    options.case_sensitive = case_sensitive
    options.log_errors = False
    options.max_mem = REGEX_MEMORY
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        message = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else exc
        raise invalid(f"Invalid regular expression /{_shorten(pattern)}/: {message}.") from None


def _any(nodes: list[Node]) -> Node:
    return nodes[0] if len(nodes) == 1 else Bool(should=tuple(nodes))


def identifier_query(doi: str) -> Node:
    """An identifier typed in `q`: exact match on the DOI fields, never a regexp."""
    return _any([Term(name, doi.lower()) for name in IDENTIFIER_FIELDS])


def _leaf(field: Field, text: str, chars: list[tuple[str, bool]] | None = None) -> Node:
    """One value on one field; `chars` carries an unquoted word so that wildcards apply."""
    wild = chars is not None and any(ch in "*?" and not esc for ch, esc in chars)
    kind = field.kind
    if kind in ("text", "keyword"):
        lower = kind == "text" or field.lowercase
        if wild:
            return Wildcard(field.name, _pattern(chars or [], lower))
        if kind == "text":
            return Text(field.name, text) if text.strip() else MatchNone()
        return Term(field.name, text.lower() if field.lowercase else text)
    if wild:
        raise invalid(f'Wildcards work on text and keyword fields only, not on "{field.name}".')
    if kind == "number":
        return Term(field.name, number(field, text))
    if kind == "boolean":
        if text.lower() not in ("true", "false"):
            raise invalid(f'"{field.name}" takes true or false, not "{text}".')
        return Term(field.name, text.lower() == "true")
    if kind == "date":
        return date_range(field.name, text, text)
    raise invalid(f'"{field.name}" cannot be searched in q; use the bounds parameter.')


class _Compiler:
    def __init__(self) -> None:
        known = searchable()
        self.known = known
        self.defaults = [f for f in known.values() if f.kind == "text" and not f.parent] + \
            [known[n] for n in DEFAULT_KEYWORD_FIELDS]

    def node(self, n: lq.Item, field: Field | None) -> Node:
        if isinstance(n, lq.SearchField):
            if field is not None:
                raise invalid(f'Field "{n.name}" cannot be nested inside field "{field.name}".')
            if n.name == "_exists_":
                if isinstance(n.expr, lq.Word):
                    return exists_query(n.expr.value)
                if isinstance(n.expr, lq.Phrase):
                    return exists_query(n.expr.value[1:-1])
                raise invalid("_exists_ takes one field name, e.g. _exists_:doi.")
            return _any([self.node(n.expr, f) for f in resolve_field(n.name)])
        if isinstance(n, lq.Group | lq.FieldGroup):
            return self.node(n.expr, field)
        if isinstance(n, lq.AndOperation):
            return self.operation(n.children, field, conjunction=True)
        if isinstance(n, lq.OrOperation | lq.UnknownOperation):  # default operator OR
            return self.operation(n.children, field, conjunction=False)
        if isinstance(n, lq.Not | lq.Prohibit | lq.Plus):
            return self.operation([n], field, conjunction=True)
        if isinstance(n, lq.Fuzzy | lq.Proximity):
            return self.node(n.term, field)  # fuzziness and slop are not supported: the plain term is searched
        if isinstance(n, lq.Boost):
            return self.node(n.expr, field)
        if isinstance(n, lq.Word):
            return self.word(n.value, field)
        if isinstance(n, lq.Phrase):
            return self.phrase(n.value[1:-1].replace('\\"', '"').replace("\\\\", "\\"), field)
        if isinstance(n, lq.Regex):
            pattern = n.value[1:-1]
            compile_regex(pattern)
            return self.default(field, lambda f: Regex(f.name, pattern) if f.kind in ("text", "keyword")
                                else MatchNone())
        if isinstance(n, lq.Range | lq.From | lq.To):
            return self.range(n, field)
        raise invalid(f"Unsupported query syntax: {n}.")

    def default(self, field: Field | None, build: Any) -> Node:
        return build(field) if field is not None else _any([build(f) for f in self.defaults])

    def operation(self, children: Any, field: Field | None, conjunction: bool) -> Node:
        must: list[Node] = []
        should: list[Node] = []
        must_not: list[Node] = []
        for child in children:
            if isinstance(child, lq.Not | lq.Prohibit):
                must_not.append(self.node(child.a, field))
            elif isinstance(child, lq.Plus):
                must.append(self.node(child.a, field))
            else:
                (must if conjunction else should).append(self.node(child, field))
        if not must and not should:
            must.append(MatchAll())  # a purely negative query subtracts from everything
        if len(must) == 1 and not should and not must_not:
            return must[0]
        return Bool(must=tuple(must), should=tuple(should), must_not=tuple(must_not))

    def word(self, raw: str, field: Field | None) -> Node:
        if raw == "*":
            return Exists(field.name) if field is not None else MatchAll()
        chars = _chars(raw)
        text = "".join(ch for ch, _ in chars)
        if field is None:
            doi = _DOI.fullmatch(text)
            if doi and "*" not in text and "?" not in text:
                return identifier_query(doi.group(1))
            found = _any([_leaf(f, text, chars) for f in self.defaults])
            if text.isdigit() and len(text) < 19:
                found = Bool(should=(found, Term("recid", int(text)), Term("conceptrecid", int(text))))
            return found
        return _leaf(field, text, chars)

    def phrase(self, text: str, field: Field | None) -> Node:
        if field is None and (doi := _DOI.fullmatch(text.strip())):
            return identifier_query(doi.group(1))
        # A quoted phrase means these words as written: the unstemmed companion of a text field (docs/search.md).
        return self.default(field, lambda f: _leaf(self.known[f.exact] if f.exact else f, text))

    def range(self, n: lq.Item, field: Field | None) -> Node:
        if field is None:
            raise invalid("A range needs a field, e.g. publication_date:[2020 TO 2021].")
        if isinstance(n, lq.Range):
            low, high, inc_low, inc_high = n.low.value, n.high.value, n.include_low, n.include_high
        elif isinstance(n, lq.From):
            low, high, inc_low, inc_high = n.a.value, "*", n.include, True
        else:
            low, high, inc_low, inc_high = "*", n.a.value, True, n.include
        low = None if low == "*" else "".join(ch for ch, _ in _chars(low.strip('"')))
        high = None if high == "*" else "".join(ch for ch, _ in _chars(high.strip('"')))
        if field.kind == "date":
            return date_range(field.name, low, high, inc_low, inc_high)
        if field.kind != "number":
            raise invalid(f'Ranges work on date and number fields only, not on "{field.name}".')
        lo, hi = (None if low is None else number(field, low)), (None if high is None else number(field, high))
        return Range(field.name, gte=lo if inc_low else None, gt=None if inc_low else lo,
                     lte=hi if inc_high else None, lt=None if inc_high else hi)


def _is_pattern(word: str) -> bool:
    return word != "*" and any(ch in "*?" and not escaped for ch, escaped in _chars(word))


def _unquoted_terms(text: str) -> int:
    """Whitespace-separated words outside phrases, operators aside: never more than the parsed tree's terms."""
    outside, quoted, escaped = [], False, False
    for ch in text:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == '"':
            quoted = not quoted
            outside.append(" ")
            continue
        if not quoted:
            outside.append(ch)
    return sum(1 for word in "".join(outside).split()
               if word not in ("AND", "OR", "NOT", "TO", "&&", "||") and word.strip("()[]{}+-!~^"))


def _check_shape(tree: lq.Item) -> None:
    """Depth, number of terms and the shape of each pattern, on the parsed tree (before the compiler, which
    recurses): every problem is a 400 naming `q`."""
    stack, leaves = [(tree, 1, False)], 0
    while stack:
        item, depth, in_range = stack.pop()
        if depth > MAX_DEPTH:
            raise invalid(f"The query is nested too deeply (at most {MAX_DEPTH} levels of parentheses, "
                          "operators and +/- prefixes).")
        children = item.children
        if not children:
            leaves += 1
            if leaves > MAX_CLAUSES:
                raise invalid(f"The query has too many terms (at most {MAX_CLAUSES}).")
            if isinstance(item, lq.Regex) and len(item.value) - 2 > MAX_PATTERN_LENGTH:
                raise invalid(f"A regular expression in the query is too long (at most {MAX_PATTERN_LENGTH} "
                              "characters).")
            if isinstance(item, lq.Word) and not in_range and _is_pattern(item.value):
                _check_wildcard(item.value)
        range_ = in_range or isinstance(item, lq.Range | lq.From | lq.To)
        stack.extend((child, depth + 1, range_) for child in children)


def _check_wildcard(word: str) -> None:
    chars = _chars(word)
    wildcards = sum(1 for i, (ch, escaped) in enumerate(chars) if ch in "*?" and not escaped
                    and not (ch == "*" and i and chars[i - 1] == ("*", False)))
    if len(word) > MAX_PATTERN_LENGTH:
        raise invalid(f"A wildcard term in the query is too long (at most {MAX_PATTERN_LENGTH} characters).")
    if wildcards > MAX_PATTERN_WILDCARDS:
        raise invalid(f'A wildcard term in the query has too many "*" and "?" (at most {MAX_PATTERN_WILDCARDS}).')


def _check_cost(node: Node) -> None:
    """Clauses of the compiled tree, where an unfielded word counts once per default field it searches."""
    leaves = clauses_of(node)
    clauses, cost = len(leaves), sum(pattern_cost(item) for item in leaves)
    if clauses > MAX_CLAUSES:
        raise invalid(f"The query is too large: it searches {clauses} field terms (at most {MAX_CLAUSES}). "
                      "Name the fields to search (title:word) or use fewer words.")
    if cost > MAX_PATTERN_COST:
        raise invalid(f"The query has too many wildcards or regular-expression operators: {cost} over all the "
                      f"fields searched (at most {MAX_PATTERN_COST}; a word without a field searches "
                      f"{len(_Compiler().defaults)} fields). Name the field to search (title:dat*) or use fewer.")


def clauses_of(node: Node) -> list[Node]:
    """The leaf clauses of a compiled tree."""
    leaves: list[Node] = []
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Bool):
            stack.extend(item.must + item.should + item.must_not + item.filter)
        else:
            leaves.append(item)
    return leaves


_REPEAT = re.compile(r"\{(\d*)(?:,(\d*))?\}")


def pattern_cost(node: Node) -> int:
    """What building the automaton of one clause costs, in wildcards (a regex: its operators and repeat counts)."""
    if isinstance(node, Wildcard):
        return sum(1 for ch, escaped in _chars(node.pattern) if ch in "*?" and not escaped)
    if isinstance(node, Regex):
        repeats = sum(int(low or 0) + int(high or 0) for low, high in _REPEAT.findall(node.pattern[:MAX_PATTERN_LENGTH]))
        return 1 + sum(node.pattern.count(ch) for ch in ".*+?|[") + repeats
    return 0


def parse_query(q: str | None) -> Node:
    """Parse `q`; empty means everything. Raises BadRequest (field `q`) naming the problem, including a query
    past the bounds above."""
    if q is None or not q.strip():
        return MatchAll()
    if len(q) > MAX_Q_LENGTH:
        raise invalid(f"The query is too long (at most {MAX_Q_LENGTH} characters).")
    text = q.strip()
    doi = _DOI.fullmatch(text)
    if doi and not re.search(r'[\s"()*?]', text):
        return identifier_query(doi.group(1))
    tree = parse_syntax(text)
    node = _Compiler().node(tree, None)
    _check_cost(node)
    return node


def parse_syntax(text: str) -> lq.Item:
    """The luqum tree of `text`, within the length, depth, term and pattern bounds; 400 naming `q` on bad syntax."""
    if len(text) > MAX_Q_LENGTH:
        raise invalid(f"The query is too long (at most {MAX_Q_LENGTH} characters).")
    if _unquoted_terms(text) > MAX_CLAUSES:  # before the parser, whose time grows with them
        raise invalid(f"The query has too many terms (at most {MAX_CLAUSES}).")
    try:
        with _lock:
            tree = _luqum.parse(text)
    except RecursionError:
        raise invalid("The query is nested too deeply.") from None
    except (ParseError, IllegalCharacterError) as exc:
        raise invalid(f"The syntax of the search query is invalid: {_shorten(str(exc), 200)}") from None
    except Exception:  # luqum also lets other errors through (a bad boost: decimal errors); all mean bad syntax
        raise invalid("The syntax of the search query is invalid: check operators such as ^, ~ and :, "
                      "and quote values with special characters.") from None
    _check_shape(tree)
    return tree
