"""Matching a vocabulary listing's `q` (with cheap typo tolerance); its pages: `repository.paging`."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from luqum import tree as lq
from sqlalchemy import ColumnElement, and_, not_, or_, true

from repository.search.query import invalid, parse_syntax

# Words of a vocabulary `q`: each is a LIKE over every row, and SQLite refuses expressions over 1000 deep (a
# 503 before this bound). Vocabulary names are short: 32 words is far above any.
MAX_TERMS = 32

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
