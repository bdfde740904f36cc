"""`q` on the caller's own depositions: the record-search parser's tree, evaluated on each deposition in memory
(a user's drafts are not in the search index, and they are few)."""

from __future__ import annotations

import functools
import re
from datetime import UTC, datetime
from typing import Any

from repository.metadata import to_record_metadata
from repository.search.analysis import analyzed
from repository.search.documents import to_index_document
from repository.search.embedded.tantivy_query import wildcard_regex
from repository.search.mapping import fields
from repository.search.query import (
    Bool,
    Exists,
    GeoBox,
    MatchAll,
    MatchNone,
    Node,
    Range,
    Regex,
    Term,
    Terms,
    Text,
    Wildcard,
    clauses_of,
    compile_regex,
    invalid,
    parse_query,
)
from repository.timeutil import isoformat

WORD = re.compile(r"\w+", re.UNICODE)
# The in-memory matcher evaluates each clause of the query on each deposition (about a microsecond each) after
# building the deposition's document (about a hundred of those): two million units keep a listing near 2 s of CPU
# at worst (ten thousand depositions with a one-word query, two thousand with a query of 1,000 clauses).
MAX_MATCH_WORK = 2_000_000
DOCUMENT_COST = 100


class _AsStored:
    """Look-ups that keep what the deposition holds (its values were checked when it was saved)."""

    def license_id(self, value: str) -> str | None:
        return value

    def grant(self, funder_doi: str, code: str) -> dict | None:
        return None

    def community_exists(self, identifier: str) -> bool:
        return True


def _document(row: dict) -> dict[str, Any]:
    metadata = row["metadata"]
    communities = [c["identifier"] for c in metadata.get("communities", [])]
    record = {
        "id": row["id"],
        "conceptrecid": str(row["conceptrecid"]),
        "doi": row.get("doi"),
        "created": isoformat(row["created"]),
        "updated": isoformat(row["modified"]),
        "owners": [row["owner_id"]],
        "metadata": to_record_metadata(metadata, _AsStored(), accepted_communities=communities),
    }
    return to_index_document(record)


def _values(doc: dict, field: str) -> list[Any]:
    value = doc.get(field)
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _words(text: Any) -> tuple[str, ...]:
    return _tokens(str(text))


@functools.lru_cache(maxsize=8192)
def _tokens(text: str) -> tuple[str, ...]:
    # Each value is tokenized once per request, not once per query clause (a 30-word query has 900 clauses).
    return tuple(WORD.findall(text.lower()))


def _comparable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value
    if isinstance(value, str) and re.match(r"^\d{4}-\d{2}-\d{2}", value):
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return value


def _in_range(value: Any, node: Range) -> bool:
    value = _comparable(value)
    try:
        return all(
            (bound is None or check(value, _comparable(bound)))
            for bound, check in (
                (node.gte, lambda v, b: v >= b),
                (node.gt, lambda v, b: v > b),
                (node.lte, lambda v, b: v <= b),
                (node.lt, lambda v, b: v < b),
            )
        )
    except TypeError:
        return False


def _phrase_in(words: tuple[str, ...], values: list[Any], analyzer: str = "") -> bool:
    for value in values:
        tokens = analyzed(str(value), analyzer) if analyzer else _words(value)
        if len(words) == 1:
            if words[0] in tokens:
                return True
            continue
        for start in range(len(tokens) - len(words) + 1):
            if tokens[start : start + len(words)] == words:
                return True
    return False


def matches(node: Node, doc: dict) -> bool:
    """Whether the index document `doc` satisfies the query tree (Lucene boolean semantics)."""
    if isinstance(node, MatchAll):
        return True
    if isinstance(node, MatchNone):
        return False
    if isinstance(node, Term):
        return any(v == node.value or str(v).lower() == str(node.value).lower() for v in _values(doc, node.field))
    if isinstance(node, Terms):
        return any(matches(Term(node.field, value), doc) for value in node.values)
    if isinstance(node, Text):
        # As the index analyzes the field (docs/search.md#words-and-phrases): stemmed words, or a companion's words
        # as written, which are its parent's values.
        f = fields().get(node.field)
        analyzer = f.analyzer if f is not None else ""
        words = analyzed(node.text, analyzer) if analyzer else _words(node.text)
        values = _values(doc, f.parent if f is not None and f.parent else node.field)
        return bool(words) and _phrase_in(words, values, analyzer)
    if isinstance(node, Wildcard | Regex):
        # RE2 (linear time whatever the caller's pattern), on the whole value or one of its words, as the engine
        # matches keyword values and the words of text fields.
        pattern = wildcard_regex(node.pattern) if isinstance(node, Wildcard) else node.pattern
        regex = compile_regex(pattern, case_sensitive=False)
        return any(regex.fullmatch(str(v)) or any(regex.fullmatch(w) for w in _words(v))
                   for v in _values(doc, node.field))
    if isinstance(node, Range):
        return any(_in_range(v, node) for v in _values(doc, node.field))
    if isinstance(node, Exists):
        return bool(_values(doc, node.field))
    if isinstance(node, GeoBox):
        return any(
            node.min_lat <= p["lat"] <= node.max_lat
            and (node.min_lon <= p["lon"] <= node.max_lon if node.min_lon <= node.max_lon
                 else p["lon"] >= node.min_lon or p["lon"] <= node.max_lon)
            for p in _values(doc, node.field)
        )  # fmt: skip
    if isinstance(node, Bool):
        required = node.must + node.filter
        if not all(matches(n, doc) for n in required):
            return False
        if any(matches(n, doc) for n in node.must_not):
            return False
        return bool(required) or not node.should or any(matches(n, doc) for n in node.should)
    raise TypeError(f"unknown query node {node!r}")


def matching(q: str, rows: list[dict]) -> list[dict]:
    """The depositions matching `q` (invalid syntax: 400 naming the problem), in the given order. The work is
    bounded before it starts: building a deposition's document costs about as much as a hundred clauses."""
    tree = parse_query(q)
    clauses = len(clauses_of(tree))
    if len(rows) * (clauses + DOCUMENT_COST) > MAX_MATCH_WORK:
        raise invalid(f"The query is too costly over your {len(rows)} depositions ({clauses} field terms): name "
                      "the fields to search (title:word), use fewer words, or narrow the list with status.")
    return [row for row in rows if matches(tree, _document(row))]
