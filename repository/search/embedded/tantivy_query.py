"""The records template and the query tree in tantivy's terms: schema, documents and queries."""

from __future__ import annotations

import base64
import json
import math
from datetime import UTC, date, datetime, timedelta
from typing import Any, cast

import orjson
import tantivy

from repository.search.analysis import ANALYZERS, analyzed, word_pairs
from repository.search.documents import add_member, day_keys
from repository.search.mapping import PAIRS_SUFFIX, SOURCE_FIELD, Field
from repository.search.query import (
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
    invalid,
)

DATES = (datetime(1677, 9, 22, tzinfo=UTC), datetime(2262, 4, 11, tzinfo=UTC))  # what the engine's dates can hold
# Date fields whose values may lie outside DATES (a publication date is any day of the years 1-9999), with the sort
# key column that orders them by day: their ranges are read from that column, and a value the date column cannot
# hold is left out of it (tantivy refuses the whole document otherwise). The others are timestamps the service set.
KEYED_DATES = {"publication_date": "sort_publication_date"}
PRESENT = "_present"  # names of the fields a document has, so `_exists_` works on every field kind
# The open-vocabulary keyword fields the facets count (facets.py), each with a fast field holding how many distinct
# terms a document has in it: the facet's (document, term) pairs are then a sum over the matches, which costs less
# than reading every match's terms. Part of the engine-ready form (FORM): documents made before it lack them.
DISTINCT = {"keywords": "_distinct_keywords", "filetype": "_distinct_filetype",
            "communities": "_distinct_communities"}
_A_COMPANION = "title.exact"  # a field every index made with the stemming analyzers has
# What the word-pair fields record of each term: the documents and the term's frequency in each, which is the
# two-word phrase's frequency (a phrase of two words is scored by its pair, as OpenSearch's `index_phrases` does).
# An index made when they recorded the documents only ("basic") scores phrases by positions until a reindex.
PAIRS_RECORD = "freq"
FORM = "d1"  # the embedded engine's additions to the documents (DISTINCT): a change makes stored documents stale


def pairs_scored(meta: bytes) -> bool:
    """Whether the index whose meta.json is `meta` records the frequencies of its word pairs (PAIRS_RECORD), so that
    a two-word phrase can be scored by its pair."""
    try:
        schema = json.loads(meta).get("schema") or []
    except ValueError:
        return False
    records = [f.get("options", {}).get("indexing", {}).get("record") for f in schema
               if str(f.get("name", "")).endswith(PAIRS_SUFFIX)]
    return bool(records) and all(record in ("freq", "position") for record in records)


def register_analyzers(index: tantivy.Index) -> tantivy.Index:
    """`index` with the template's analyzers registered (each opened index needs them, to write and to search)."""
    for name, make in ANALYZERS.items():
        if name != "default":
            index.register_tokenizer(name, make())
    return index


def build_schema(field_map: dict[str, Field]) -> tantivy.Schema:
    """The tantivy schema for the mapping: keywords, numbers, dates and geo parts are fast fields."""
    sb = tantivy.SchemaBuilder()
    for f in field_map.values():
        if f.kind == "text":
            sb.add_text_field(f.name, tokenizer_name=f.analyzer if f.analyzer in ANALYZERS else "default")
            if f.pairs:  # whole terms: a two-word phrase's score reads their frequencies (Translator.phrase)
                sb.add_text_field(f.pairs, tokenizer_name="raw", index_option=PAIRS_RECORD)
        elif f.kind == "keyword":
            sb.add_text_field(f.name, fast=True, tokenizer_name="raw")
        elif f.kind == "number":
            sb.add_integer_field(f.name, indexed=True, fast=True)
        elif f.kind == "boolean":
            sb.add_boolean_field(f.name, indexed=True, fast=True)
        elif f.kind == "date":
            sb.add_date_field(f.name, indexed=True, fast=True)
        elif f.kind == "geo":
            sb.add_float_field(f"{f.name}.lat", indexed=True, fast=True)
            sb.add_float_field(f"{f.name}.lon", indexed=True, fast=True)
    sb.add_text_field(PRESENT, tokenizer_name="raw")
    for counted in DISTINCT.values():
        sb.add_integer_field(counted, indexed=False, fast=True)
    sb.add_bytes_field(SOURCE_FIELD, stored=True)
    return sb.build()


def hit_count(result: tantivy.SearchResult) -> int:
    """The number of matches of a counting search (`count=True`). One place to read it because tantivy.pyi
    (0.27) leaves out the `count` attribute that the extension has."""
    count: int = result.count  # type: ignore[attr-defined]  # present at run time, missing from tantivy.pyi
    return count


def int_column(searcher: tantivy.Searcher, field: str, addresses: list[tantivy.DocAddress]) -> list[int]:
    """The values of integer fast field `field` (recid, revision) for `addresses`; tantivy types the values of
    any column as `int | float | bool | None`."""
    return cast(list[int], searcher.fast_field_values(field, addresses))


def stored_source(searcher: tantivy.Searcher, address: tantivy.DocAddress) -> Any:
    """The indexed document's own JSON, which every document stores (`to_tantivy_json`)."""
    stored = searcher.doc(address).get_first(SOURCE_FIELD)
    if stored is None:
        raise LookupError(f"tantivy document {address} has no {SOURCE_FIELD}")
    return orjson.loads(stored)


def _date(value: Any) -> datetime:
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _held(f: Field, value: Any) -> bool:
    """Whether the engine's column of field `f` can hold `value`: any value but a date outside DATES."""
    return f.kind != "date" or DATES[0] <= _date(value) <= DATES[1]


def add_json(writer: tantivy.IndexWriter, document: bytes, field_map: dict[str, Field]) -> None:
    """Add engine-ready `document` (to_tantivy_json) to `writer`, with the word pairs of its text fields that index
    phrases (`with_pairs`). One stored before dates outside DATES were left out of their columns holds such a date,
    which tantivy refuses with the whole document (its record was then never found): it is added without it, as
    `to_tantivy_json` now makes it."""
    try:
        writer.add_json(with_pairs(document, field_map).decode())
    except ValueError:
        held = _without_unheld_dates(document, field_map)
        if held is None:
            raise
        writer.add_json(with_pairs(held, field_map).decode())


def with_pairs(document: bytes, field_map: dict[str, Field]) -> bytes:
    """Engine-ready `document` with each phrase-indexing field's adjacent word pairs (Field.pairs). Added here, as
    the document enters the index, not kept in the stored engine-ready form: a description's pairs would double
    its size in the database, and the stored documents of the template before the pairs stay current."""
    values = orjson.loads(document)
    members = [b'"%s":%s' % (f.pairs.encode(), orjson.dumps(pairs)) for name, f in field_map.items()
               if f.pairs and name in values and (pairs := word_pairs(values[name], f.analyzer))]
    for member in members:
        document = add_member(document, member)
    return document


def _without_unheld_dates(document: bytes, field_map: dict[str, Field]) -> bytes | None:
    """`document` as `to_tantivy_json` now makes it: without the date values the engine cannot hold (and, where no
    key finds them, not present); None when it holds none."""
    values = orjson.loads(document)
    changed = False
    for name in [n for n, f in field_map.items() if f.kind == "date" and isinstance(values.get(n), list)]:
        held = [v for v in values[name] if _held(field_map[name], v)]
        if len(held) == len(values[name]):
            continue
        changed = True
        if held:
            values[name] = held
        else:
            del values[name]
            if name not in KEYED_DATES:
                values[PRESENT] = [n for n in values.get(PRESENT, []) if n != name]
    if not changed:
        return None
    return json.dumps(values, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def to_tantivy(doc: dict[str, Any], field_map: dict[str, Field]) -> tantivy.Document:
    """An index document (documents.to_index_document) as a tantivy Document."""
    out = tantivy.Document()
    for name, value in doc.items():
        if name == SOURCE_FIELD:
            out.add_bytes(SOURCE_FIELD, orjson.dumps(value))
            continue
        f = field_map.get(name)
        if f is None:
            continue
        held = [v for v in (value if isinstance(value, list) else [value]) if _held(f, v)]
        if not held and name not in KEYED_DATES:
            continue  # only dates the column cannot hold: without a key to find them, the engine has none
        for v in held:
            if f.kind == "text":
                for text_field in (f, field_map[f.exact]) if f.exact else (f,):
                    out.add_text(text_field.name, str(v))
                    for pair in word_pairs([str(v)], text_field.analyzer) if text_field.pairs else ():
                        out.add_text(text_field.pairs, pair)
            elif f.kind == "keyword":
                out.add_text(name, str(v).lower() if f.lowercase else str(v))
            elif f.kind == "number":
                out.add_integer(name, int(v))
            elif f.kind == "boolean":
                out.add_boolean(name, bool(v))
            elif f.kind == "date":
                out.add_date(name, _date(v))
            elif f.kind == "geo":
                out.add_float(f"{name}.lat", float(v["lat"]))
                out.add_float(f"{name}.lon", float(v["lon"]))
        out.add_text(PRESENT, name)
        if f.exact:
            out.add_text(PRESENT, f.exact)
        if name in DISTINCT:
            out.add_integer(DISTINCT[name], _distinct(f, value if isinstance(value, list) else [value]))
    return out


def _distinct(f: Field, values: list[Any]) -> int:
    """How many distinct terms `values` of keyword field `f` make (the terms aggregation counts a document once per
    term, however often the term is repeated)."""
    return len({_json_value(f, v) for v in values})


def _json_value(f: Field, value: Any) -> Any:
    if f.kind == "keyword":
        return str(value).lower() if f.lowercase else str(value)
    if f.kind == "number":
        return int(value)
    if f.kind == "boolean":
        return bool(value)
    if f.kind == "date":
        return _date(value).isoformat()  # RFC 3339, the form tantivy parses for date fields
    return str(value)


def to_tantivy_json(doc: dict[str, Any], field_map: dict[str, Field]) -> bytes:
    """The document `to_tantivy` builds, as the JSON `IndexWriter.add_json` parses against the schema (bytes fields
    in base64): the engine-ready form that a reindex loads with no Python work per field."""
    out: dict[str, Any] = {}
    present: list[str] = []
    for name, value in doc.items():
        if name == SOURCE_FIELD:
            out[SOURCE_FIELD] = base64.b64encode(orjson.dumps(value)).decode("ascii")
            continue
        f = field_map.get(name)
        if f is None:
            continue
        values = value if isinstance(value, list) else [value]
        if f.kind == "geo":
            out[f"{name}.lat"] = [float(v["lat"]) for v in values]
            out[f"{name}.lon"] = [float(v["lon"]) for v in values]
        elif held := [_json_value(f, v) for v in values if _held(f, v)]:
            out[name] = held
        elif name not in KEYED_DATES:
            continue  # only dates the column cannot hold (_held): without a key to find them, the engine has none
        present.append(name)
        if f.exact:  # the unstemmed companion indexes the same values (OpenSearch: a multi-field)
            out[f.exact] = out[name]
            present.append(f.exact)
        if name in DISTINCT:
            out[DISTINCT[name]] = [_distinct(f, values)]
    out[PRESENT] = present
    # ASCII only (\u escapes): the load then hands each document to the engine without converting it to and from
    # a Python str of wider characters (an eighth of its time).
    return json.dumps(out, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def add_distinct(document: bytes) -> bytes:
    """A `to_tantivy_json` document made before the DISTINCT fields (form d0) in form d1: their counts taken from the
    document's own terms, which it holds already normalized (`_json_value`), so a reindex after the upgrade brings
    stored documents up to date in microseconds instead of building every record again."""
    values = orjson.loads(document)
    members = [b'"%s":[%d]' % (counted.encode(), len(set(values[name])))
               for name, counted in DISTINCT.items() if name in values and counted not in values]
    for member in members:
        document = add_member(document, member)
    return document


def with_source_json(document: bytes, record: bytes) -> bytes:
    """A `to_tantivy_json` document made without SOURCE_FIELD, with `record` (orjson bytes) added as that field
    (base64, as `to_tantivy_json` writes it): the stored copy keeps the record once (records/stored.py)."""
    return add_member(document, b'"%s":"%s"' % (SOURCE_FIELD.encode(), base64.b64encode(record)))


def add_exact(document: bytes, field_map: dict[str, Field]) -> bytes:
    """A `to_tantivy_json` document made before the text fields had unstemmed companions (mapping.BEFORE_STEMMING),
    with them: copies of its own text values, so that a reindex upgrades stored documents without building them."""
    values = orjson.loads(document)
    added = [f.exact for name, f in field_map.items() if f.exact and name in values and f.exact not in values]
    if not added:
        return document
    for companion in added:
        values[companion] = values[field_map[companion].parent]
    present = []
    for name in values.get(PRESENT, []):  # each companion right after its field, as `to_tantivy_json` lists them
        present.append(name)
        f = field_map.get(name)
        if f is not None and f.exact in added:
            present.append(f.exact)
    values[PRESENT] = present
    return json.dumps(values, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def wildcard_regex(pattern: str) -> str:
    """An OpenSearch wildcard pattern as a tantivy regex over whole terms."""
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out.append(_escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if ch == "*" else "." if ch == "?" else _escape(ch))
        i += 1
    return "".join(out)


def key_range(parser: tantivy.Index, field: str, lower: str | None, upper: str | None) -> tantivy.Query:
    """The documents whose sort key `field` lies in [lower, upper) (None: open on that side). Built by the query
    parser of an index of the schema: `Query.range_query` refuses text fields."""
    return parser.parse_query(f"{field}:[{lower or '*'} TO {upper + '}' if upper else '*]'}", [field])


def _day_span(node: Range) -> tuple[date | None, date | None] | None:
    """The first and last day (None: open) within the bounds of `node` over a field whose values are days (midnight
    UTC); None when no day is."""
    first = last = None
    try:
        if node.gte is not None or node.gt is not None:
            moment = _date(node.gte if node.gte is not None else node.gt)
            first = moment.date()
            if node.gte is None or moment != datetime.combine(first, datetime.min.time(), UTC):
                first += timedelta(days=1)  # past `gt`, or after a moment within the day: from the next day
        if node.lte is not None or node.lt is not None:
            moment = _date(node.lte if node.lte is not None else node.lt)
            last = moment.date()
            if node.lte is None and moment == datetime.combine(last, datetime.min.time(), UTC):
                last -= timedelta(days=1)  # before midnight: up to the day before
    except OverflowError:  # past 9999-12-31, or before 0001-01-01: no day is
        return None
    if first is not None and last is not None and first > last:
        return None
    return first, last


def _escape(ch: str) -> str:
    """A literal character in tantivy's regex dialect (`\\<` there is a word boundary, so use classes)."""
    if ch.isalnum() or not ch.isascii():
        return ch
    return "\\" + ch if ch in "\\[]^" else f"[{ch}]"


class Translator:
    """Query tree -> tantivy Query for one searcher (geo boxes are resolved against it)."""

    def __init__(self, schema: tantivy.Schema, searcher: tantivy.Searcher, field_map: dict[str, Field],
                 parser: tantivy.Index, scored: bool = True, pair_scores: bool = False):
        # `parser`: an index of the same schema, for what only its query parser builds (a range over a key column).
        # `scored`: whether the scores of the matches are read (relevance order); without them a phrase of two
        # words is its pair alone (`phrase`). `pair_scores`: the index records its pairs' frequencies
        # (pairs_scored), so that a two-word phrase is its pair alone, scored, in relevance order too.
        self.schema, self.searcher, self.fields, self.parser = schema, searcher, field_map, parser
        self.scored, self.pair_scores = scored, pair_scores
        self.before_stemming: bool | None = None  # found out at the first text node (text_field)
        self.present: dict[str, bool] = {}  # whether the schema has a field the template added later (_has)

    def text_field(self, name: str) -> tuple[str, str]:
        """The index field that text on `name` searches, and the analyzer of its words. An index made before the
        stemming analyzers (mapping.BEFORE_STEMMING) is read as it is until a reindex: every text field there has
        the default analyzer, and a companion field is its parent."""
        if self.before_stemming is None:
            try:
                tantivy.Query.term_query(self.schema, _A_COMPANION, "")
                self.before_stemming = False
            except ValueError:
                self.before_stemming = True
        f = self.fields[name]
        if self.before_stemming:
            return f.parent or name, "default"
        return name, f.analyzer or "default"

    def phrase(self, name: str, words: list[str]) -> tantivy.Query:
        """The phrase `words` on text field `name`. Where the field indexes its word pairs (Field.pairs), each pair
        of the phrase is one term looked up, and the positional phrase query only decides among the documents
        holding them all: the engine leads an intersection with its rarest clause, so the positions of the two
        words are read for those few documents instead of for every document holding both (docs/search.md). The
        pairs of a longer phrase score nothing (a constant 0): its score is the positional query's.

        A phrase of two words is its pair alone, without positions: the pair is in exactly the documents the phrase
        finds, and where the index records the pairs' frequencies (`pair_scores`), a pair's frequency is the
        phrase's, so its relevance score is the pair term's, as OpenSearch scores it (`index_phrases`: a phrase of
        one pair is a term query on the pair field; docs/search.md#phrases-through-word-pairs)."""
        Q, Must = tantivy.Query, tantivy.Occur.Must
        terms: list[str | tuple[int, str]] = list(words)
        phrase = Q.phrase_query(self.schema, name, terms)
        pairs = self.fields[name].pairs if name in self.fields else ""
        if not pairs or not self._has(pairs):
            return phrase  # an index made before the pairs: read as it is until a reindex
        looked_up = [(Must, Q.const_score_query(Q.term_query(self.schema, pairs, f"{a} {b}"), 0.0))
                     for a, b in dict.fromkeys(zip(words, words[1:], strict=False))]
        if len(words) == 2 and self.scored and self.pair_scores:
            return Q.term_query(self.schema, pairs, f"{words[0]} {words[1]}")  # BM25 of the pair on its field
        if len(words) == 2 and not self.scored:
            # The pair is in exactly the documents the phrase finds (analysis.word_pairs): no positions to read.
            # Where a score is read, only an index recording the pairs' frequencies can give it (above).
            return looked_up[0][1]
        return Q.boolean_query([(Must, phrase), *looked_up])

    def _has(self, field: str) -> bool:
        if field not in self.present:
            try:
                tantivy.Query.term_query(self.schema, field, "")
                self.present[field] = True
            except ValueError:
                self.present[field] = False
        return self.present[field]

    def value(self, name: str, value: Any) -> Any:
        f = self.fields[name]
        return value.lower() if f.kind == "keyword" and f.lowercase and isinstance(value, str) else value

    def __call__(self, node: Node) -> tantivy.Query:
        Q, schema = tantivy.Query, self.schema
        if isinstance(node, MatchAll):
            return Q.all_query()
        if isinstance(node, MatchNone):
            return Q.empty_query()
        if isinstance(node, Term):
            return Q.term_query(schema, node.field, self.value(node.field, node.value))
        if isinstance(node, Terms):
            return Q.term_set_query(schema, node.field, [self.value(node.field, v) for v in node.values])
        if isinstance(node, Text):
            name, analyzer = self.text_field(node.field)
            words = analyzed(node.text, analyzer)
            if not words:
                return Q.empty_query()
            return Q.term_query(schema, name, words[0]) if len(words) == 1 else self.phrase(name, list(words))
        if isinstance(node, Wildcard):
            return Q.regex_query(schema, node.field, wildcard_regex(node.pattern))
        if isinstance(node, Regex):
            try:
                return Q.regex_query(schema, node.field, node.pattern)
            except ValueError as exc:  # the two regex dialects differ at the edges
                raise invalid(f"Invalid regular expression /{node.pattern}/: {exc}") from None
        if isinstance(node, Range):
            return self.range(node)
        if isinstance(node, Exists):
            return Q.term_query(schema, PRESENT, node.field)
        if isinstance(node, GeoBox):
            return self.geo(node)
        clauses = [(tantivy.Occur.Must, self(n)) for n in node.must]
        clauses += [(tantivy.Occur.Must, Q.const_score_query(self(n), 0.0)) for n in node.filter]
        clauses += [(tantivy.Occur.Should, self(n)) for n in node.should]
        if not clauses:
            clauses.append((tantivy.Occur.Must, Q.all_query()))
        clauses += [(tantivy.Occur.MustNot, self(n)) for n in node.must_not]
        return Q.boolean_query(clauses)

    def range(self, node: Range) -> tantivy.Query:
        kind = self.fields[node.field].kind
        if node.field in KEYED_DATES:
            return self.days(node, KEYED_DATES[node.field])
        field_type = tantivy.FieldType.Date if kind == "date" else tantivy.FieldType.Integer
        lower = node.gte if node.gte is not None else node.gt
        upper = node.lte if node.lte is not None else node.lt
        if kind == "date":
            # The engine holds dates as 64-bit nanoseconds (1677-2262): no document lies outside, so a bound
            # beyond that span is no bound, or leaves nothing.
            if (lower is not None and lower > DATES[1]) or (upper is not None and upper < DATES[0]):
                return tantivy.Query.empty_query()
            lower = None if lower is not None and lower < DATES[0] else lower
            upper = None if upper is not None and upper > DATES[1] else upper
        if lower is None and upper is None:
            return tantivy.Query.all_query()
        return tantivy.Query.range_query(self.schema, node.field, field_type, lower_bound=lower, upper_bound=upper,
                                         include_lower=node.gt is None, include_upper=node.lt is None)

    def days(self, node: Range, key_field: str) -> tantivy.Query:
        """A range over a date field of KEYED_DATES, read from its sort key column: exact for every day of the years
        1-9999, where the date column holds only 1677-2262 (as fast: a range of the key column's ordinals)."""
        span = _day_span(node)
        if span is None:
            return tantivy.Query.empty_query()
        if span == (None, None):
            return tantivy.Query.all_query()
        return key_range(self.parser, key_field, *day_keys(*span))

    def geo(self, box: GeoBox) -> tantivy.Query:
        """Lat and lon are separate multi-valued columns: find candidates, then keep records with one point inside."""
        Q, F = tantivy.Query, tantivy.FieldType.Float
        lat = Q.range_query(self.schema, f"{box.field}.lat", F, *_widened(box.min_lat, box.max_lat))
        spans = [(box.min_lon, box.max_lon)] if box.min_lon <= box.max_lon else [(box.min_lon, 180.0),
                                                                                 (-180.0, box.max_lon)]
        lon = Q.boolean_query([(tantivy.Occur.Should,
                                Q.range_query(self.schema, f"{box.field}.lon", F, *_widened(lo, hi)))
                               for lo, hi in spans])
        candidates = Q.boolean_query([(tantivy.Occur.Must, lat), (tantivy.Occur.Must, lon)])
        count = hit_count(self.searcher.search(candidates, 1))
        kept = []
        for _, address in self.searcher.search(candidates, max(count, 1)).hits if count else []:
            record = stored_source(self.searcher, address)
            for loc in (record.get("metadata") or {}).get("locations") or []:
                if _inside(box, loc.get("lat"), loc.get("lon"), spans):
                    kept.append(int(record["id"]))
                    break
        return Q.term_set_query(self.schema, "recid", kept) if kept else Q.empty_query()


def _widened(low: float, high: float) -> tuple[float, float]:
    """A candidate range one float step wider on each side: documents loaded as JSON (`add_json`) may hold a
    coordinate one step off its exact value (the engine's JSON number parsing); `_inside` then decides exactly."""
    return math.nextafter(low, -math.inf), math.nextafter(high, math.inf)


def _inside(box: GeoBox, lat: Any, lon: Any, spans: list[tuple[float, float]]) -> bool:
    if not isinstance(lat, int | float) or not isinstance(lon, int | float):
        return False
    return box.min_lat <= lat <= box.max_lat and any(lo <= lon <= hi for lo, hi in spans)
