"""Listing the vocabularies: `page`/`size` validation, matching `q` (with cheap typo tolerance), the envelope."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from luqum import tree as lq
from sqlalchemy import ColumnElement, and_, not_, or_, true

from repository.errors import ValidationError, field_error
from repository.search.query import invalid, parse_syntax

MAX_SIZE = 1000
# Words of a vocabulary `q`: each is a LIKE over every row, and SQLite refuses expressions over 1000 deep (a
# 503 before this bound). Vocabulary names are short: 32 words is far above any.
MAX_TERMS = 32
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


def query_terms(q: str | None) -> list[str]:
    """The lower-cased words of `q`; every word must match (AND). 400 naming `q` past MAX_TERMS words."""
    terms = (q or "").lower().split()
    _check_terms(len(terms))
    return terms


def _check_terms(count: int) -> None:
    if count > MAX_TERMS:
        raise invalid(f"The query has too many words (at most {MAX_TERMS}).")


def parse_vocabulary_query(q: str | None) -> tuple[list[str], lq.Item | None]:
    """`q` in the query-string syntax of record search (400 naming `q` on bad syntax or past its bounds): the
    words of a plain query (every one must match, close spellings allowed), or the tree of one with operators."""
    if q is None or not q.strip():
        return [], None
    tree = parse_syntax(q.strip())
    leaves, stack = 0, [tree]
    while stack:
        item = stack.pop()
        leaves += not item.children
        stack.extend(item.children)
    _check_terms(leaves)
    items = tree.children if isinstance(tree, lq.UnknownOperation | lq.AndOperation) else (tree,)
    if all(isinstance(item, lq.Word) for item in items):
        words = [w for item in items for w in _plain(item.value).split()]
        _check_terms(len(words))
        return words, None
    return [], tree


def _plain(value: str) -> str:
    """A word's text with escapes resolved and wildcards dropped (the look-up matches parts of words anyway)."""
    out, escaped = [], False
    for ch in value:
        if escaped:
            out.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        else:
            out.append(" " if ch in "*?" else ch)
    return "".join(out).lower()


def tree_condition(column: ColumnElement, item: lq.Item) -> ColumnElement[bool]:
    """SQL for a parsed `q` over one lower-cased text column: words and phrases are substrings; AND (also the
    default between terms), OR, NOT/-, + and groups as usual; field names are ignored (one text is searched)."""
    if isinstance(item, lq.Word):
        words = _plain(item.value).split()
        return and_(*(column.like("%" + escape_like(w) + "%", escape="\\") for w in words)) if words else true()
    if isinstance(item, lq.Phrase):
        phrase = item.value[1:-1].replace('\\"', '"').lower()
        return column.like("%" + escape_like(phrase) + "%", escape="\\")
    if isinstance(item, lq.OrOperation):
        return or_(*(tree_condition(column, child) for child in item.children))
    if isinstance(item, lq.AndOperation | lq.UnknownOperation):
        return and_(*(tree_condition(column, child) for child in item.children))
    if isinstance(item, lq.Not | lq.Prohibit):
        return not_(tree_condition(column, item.a))
    if isinstance(item, lq.Plus | lq.Group | lq.FieldGroup | lq.SearchField | lq.Fuzzy | lq.Proximity | lq.Boost):
        return tree_condition(column, item.children[0])
    raise invalid(f"Ranges and regular expressions are not supported here: {str(item)[:40]}.")


def matches_all(column: ColumnElement, variants: list[list[str]]) -> ColumnElement[bool]:
    """SQL: for each term, `column` (lower-cased text) contains one of its spellings."""
    if not variants:
        return true()
    return and_(*(or_(*(column.like("%" + escape_like(v) + "%", escape="\\") for v in spellings)) for spellings in variants))


def corrected(terms: list[str], texts: Iterable[str]) -> list[list[str]] | None:
    """For each term absent from every text, its close spellings among the texts' words; None if one has none."""
    texts = list(texts)
    words = {word for text in texts for word in _WORD.findall(text)}
    variants = []
    for term in terms:
        if any(term in text for text in texts):
            variants.append([term])
            continue
        # difflib on a few thousand short words costs milliseconds; only done when a search found nothing.
        close = difflib.get_close_matches(term, words, n=5, cutoff=0.75)
        if not close:
            return None
        variants.append(close)
    return variants


_WORD = re.compile(r"[^\s()\[\],;\"']+")


def escape_like(value: str) -> str:
    """`value` with the LIKE wildcards escaped (escape character: backslash)."""
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
