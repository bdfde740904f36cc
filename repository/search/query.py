"""`q` in the query_string syntax -> a small backend-neutral query tree with fields resolved against the mapping."""

from __future__ import annotations

import calendar
import fnmatch
import re
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from luqum import tree as lq
from luqum.exceptions import IllegalCharacterError, ParseError
from luqum.parser import parser as _luqum

from repository.errors import BadRequest, field_error
from repository.search.mapping import Field, fields


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

# --- field names ---------------------------------------------------------------------------------
MAX_Q_LENGTH = 4000
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
        matched = [f for n, f in known.items() if fnmatch.fnmatchcase(n, name) and f.kind != "geo"]
        if matched:
            return matched
    elif name in known:
        return [known[name]]
    raise invalid(f'Unknown search field "{name}" in q.')


# --- dates ---------------------------------------------------------------------------------------
def date_span(text: str, field: str = "q") -> tuple[datetime, datetime]:
    """A full or partial ISO date -> [start, end) in UTC; `2020` spans the whole year."""
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
    if zone and zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        digits = zone[1:].replace(":", "")
        offset = timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:])))
        start = start.replace(tzinfo=offset).astimezone(UTC)
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
    return start, end


def date_range(field: str, low: str | None, high: str | None, include_low: bool = True,
               include_high: bool = True, param: str = "q") -> Range:
    """A range over a date field where partial dates cover their whole period (`[2020 TO 2021]` = 2020-2021)."""
    gte = lt = None
    if low is not None:
        start, end = date_span(low, param)
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
    out = []
    for ch, escaped in chars:
        ch = ch.lower() if lower else ch
        out.append("\\" + ch if (escaped and ch in "*?\\") or (not escaped and ch == "\\") else ch)
    return "".join(out)


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
        try:
            return Term(field.name, int(text))
        except ValueError:
            raise invalid(f'"{field.name}" takes a whole number, not "{text}".') from None
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
        self.defaults = [f for f in known.values() if f.kind == "text"] + [known[n] for n in DEFAULT_KEYWORD_FIELDS]

    def node(self, n: lq.Item, field: Field | None) -> Node:
        if isinstance(n, lq.SearchField):
            if field is not None:
                raise invalid(f'Field "{n.name}" cannot be nested inside field "{field.name}".')
            if n.name == "_exists_":
                if not isinstance(n.expr, lq.Word):
                    raise invalid("_exists_ takes one field name, e.g. _exists_:doi.")
                return _any([Exists(f.name) for f in resolve_field(n.expr.value)])
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
            try:
                re.compile(pattern)
            except re.error as exc:
                raise invalid(f"Invalid regular expression /{pattern}/: {exc}.") from None
            return self.default(field, lambda f: Regex(f.name, pattern) if f.kind in ("text", "keyword")
                                else MatchNone())
        if isinstance(n, lq.Range | lq.From | lq.To):
            return self.range(n, field)
        raise invalid(f"Unsupported query syntax: {n}.")

    def default(self, field: Field | None, build: Any) -> Node:
        return build(field) if field is not None else _any([build(f) for f in self.defaults])

    def operation(self, children: Any, field: Field | None, conjunction: bool) -> Node:
        must, should, must_not = [], [], []
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
        if field is None and _DOI.fullmatch(text.strip()):
            return identifier_query(_DOI.fullmatch(text.strip()).group(1))
        return self.default(field, lambda f: _leaf(f, text))

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
        try:
            lo, hi = (None if low is None else int(low)), (None if high is None else int(high))
        except ValueError:
            raise invalid(f'"{field.name}" takes whole numbers in ranges.') from None
        return Range(field.name, gte=lo if inc_low else None, gt=None if inc_low else lo,
                     lte=hi if inc_high else None, lt=None if inc_high else hi)


def parse_query(q: str | None) -> Node:
    """Parse `q`; empty means everything. Raises BadRequest (field `q`) naming the problem."""
    if q is None or not q.strip():
        return MatchAll()
    if len(q) > MAX_Q_LENGTH:
        raise invalid(f"The query is too long (at most {MAX_Q_LENGTH} characters).")
    text = q.strip()
    doi = _DOI.fullmatch(text)
    if doi and not re.search(r'[\s"()*?]', text):
        return identifier_query(doi.group(1))
    try:
        with _lock:
            tree = _luqum.parse(text)
    except RecursionError:
        raise invalid("The query is nested too deeply.") from None
    except (ParseError, IllegalCharacterError) as exc:
        raise invalid(f"The syntax of the search query is invalid: {exc}") from None
    except Exception:  # luqum also lets other errors through (a bad boost: decimal errors); all mean bad syntax
        raise invalid("The syntax of the search query is invalid: check operators such as ^, ~ and :, "
                      "and quote values with special characters.") from None
    return _Compiler().node(tree, None)
