"""Phrases through word pairs (docs/search.md#phrases-through-word-pairs): the unstemmed companions index their
adjacent words as single terms (`index_phrases`), a phrase looks them up before checking positions, and what it
finds is what the positional phrase query alone finds, and a phrase of two words ranks as its pair's term (as
OpenSearch ranks it)."""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest
from helpers.search import ids, run
from werkzeug.datastructures import MultiDict

from repository.search import mapping
from repository.search.analysis import analyzed, word_pairs
from repository.search.backend import SearchBackend
from repository.search.documents import DOCUMENT_VERSION, to_index_document
from repository.search.embedded import engine as embedded_engine
from repository.search.embedded import tantivy_query
from repository.search.embedded.engine import EmbeddedBackend
from repository.search.mapping import BEFORE_PAIRS, PAIRS_SUFFIX
from repository.search.params import combined, parse_search_args
from repository.search.query import Bool, Node, Term, Text

from .factories import make_record

LONG = "x" * 45  # a word of 45 bytes: the analyzers drop it, leaving a gap where it stood

RECORDS: dict[int, dict[str, Any]] = {
    1: {"title": "Soil moisture data of the Alps"},
    2: {"title": "Data of soil moisture and soil carbon"},
    3: {"title": "Moisture soil", "description": "<p>soil, moisture!</p>"},  # punctuation is no word: adjacent
    4: {"title": "Anna Soil", "creators": [{"name": "Soil, Anna"}, {"name": "Moisture, Bob"}]},
    5: {"title": "Data data data", "keywords": ["soil", "moisture"]},  # two values: no phrase across them
    6: {"title": f"Soil {LONG} moisture"},  # the long word keeps the two apart
    7: {"title": "Running soil moisture measurements"},
}


def _documents() -> list[dict[str, Any]]:
    return [to_index_document(make_record(recid, metadata=meta)) for recid, meta in RECORDS.items()]


@pytest.fixture
def phrases(fresh: SearchBackend) -> SearchBackend:
    fresh.index(_documents())
    return fresh


def found(backend: SearchBackend, q: str) -> list[int]:
    return ids(run(backend, q=q, size=50))


@pytest.mark.parametrize(("q", "expected"), [
    ('"soil moisture"', {1, 2, 3, 7}),
    ('"moisture soil"', {3}),
    ('"soil moisture data"', {1}),  # three words: both pairs, in order
    ('"data of soil moisture"', {2}),
    ('"data data"', {5}),
    ('"data data data"', {5}),
    ('"data data data data"', set()),
    ('"soil anna"', {4}),
    ('"anna moisture"', set()),  # the end of one creator and the start of the next
    ('"soil moisture and soil"', {2}),  # a pair met twice in the phrase
    ('title:"soil moisture"', {1, 2, 7}),  # a stemmed field's phrase: positions only (no pairs there)
    ('title:"running soil"', {7}),
    ('"soil moisture" AND carbon', {2}),
    ('"soil moisture" OR "moisture soil"', {1, 2, 3, 7}),
    ('-"soil moisture" AND soil', {4, 5, 6}),
])
def test_phrases_find_what_their_words_in_order_find(phrases, q, expected):
    assert set(found(phrases, q)) == expected


def test_the_companions_index_their_word_pairs(tmp_path):
    backend = EmbeddedBackend(tmp_path)
    backend.index(_documents())
    searcher = backend._live()
    pairs = f"title.exact{PAIRS_SUFFIX}"
    # Records 1, 2 and 7, not 6: the long word between the two, which the analyzer drops, keeps them apart.
    assert searcher.doc_freq(pairs, "soil moisture") == 3
    assert searcher.doc_freq(pairs, "moisture soil") == 1
    assert searcher.doc_freq(pairs, "soil moisture data") == 0  # pairs only
    assert searcher.doc_freq(f"description.exact{PAIRS_SUFFIX}", "soil moisture") == 1  # record 3's punctuation
    with pytest.raises(ValueError):  # keywords index no pairs: there is no such field
        searcher.doc_freq(f"keywords{PAIRS_SUFFIX}", "soil moisture")
    assert searcher.doc_freq(f"creators.name.exact{PAIRS_SUFFIX}", "anna moisture") == 0  # not across values
    assert {f.pairs for f in backend.fields.values() if f.pairs} == \
        {f"{f.exact}{PAIRS_SUFFIX}" for f in backend.fields.values() if f.exact}


def _without_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine as it was before the template's `index_phrases`."""
    previous = mapping.load_template()

    def strip(properties: dict[str, Any]) -> None:
        for spec in properties.values():
            strip(spec.get("properties") or {})
            for sub in (spec.get("fields") or {}).values():
                sub.pop("index_phrases", None)

    strip(previous["template"]["mappings"]["properties"])
    monkeypatch.setattr(embedded_engine, "fields", lambda: mapping.fields_of(previous))


def _scored(backend: EmbeddedBackend, q: str, node: Node | None = None) -> list[tuple[float, int]]:
    """Every match of `q` (or of query tree `node`) with its score, as the engine ranks them."""
    index, state = backend._live_snapshot()
    if node is None:
        query = backend._translator(state.searcher, index.schema, state=state)(
            combined(parse_search_args(MultiDict({"q": q}))))
    else:
        query = _PairTerms(index.schema, state.searcher, backend.fields, backend._parser)(node)
    hits = state.searcher.search(query, 1000).hits
    recids = tantivy_query.int_column(state.searcher, "recid", [a for _, a in hits])
    return sorted(zip((round(s, 4) for s, _ in hits), recids, strict=True))


class _PairTerms(tantivy_query.Translator):
    """Query trees with terms on the pair fields (which the mapping lists as no field of their own)."""

    def value(self, name: str, value: Any) -> Any:
        return value if name.endswith(PAIRS_SUFFIX) else super().value(name, value)


def _pair(node: Node) -> Node:
    """The query tree of a two-word phrase with each phrase replaced by the term of its word pair on the field's
    pair field: what OpenSearch runs for a phrase on a field with `index_phrases`."""
    if isinstance(node, Text) and (f := mapping.fields()[node.field]).pairs and \
            len(words := analyzed(node.text, f.analyzer)) == 2:
        return Term(f.pairs, " ".join(words))
    if isinstance(node, Bool):
        return Bool(must=tuple(map(_pair, node.must)), filter=tuple(map(_pair, node.filter)),
                    should=tuple(map(_pair, node.should)), must_not=tuple(map(_pair, node.must_not)))
    return node


@pytest.mark.slow  # 0.4 s and more of work
def test_the_pairs_change_no_match_and_score_two_words_by_their_pair(tmp_path, monkeypatch):
    """Generated titles and descriptions from a small vocabulary (many repeated pairs, repeated words, values of
    several creators): every phrase finds the same records as the positional query alone; a phrase of three words
    or more has the same scores, and one of two words the scores of its pair's term (OpenSearch's ranking)."""
    rng = random.Random(43)
    vocabulary = ["soil", "moisture", "data", "of", "the", "climate", "model", "water", LONG, "Zürich", "zurich"]

    def text(n: int) -> str:
        return " ".join(rng.choice(vocabulary) for _ in range(n))

    docs = [to_index_document(make_record(recid, metadata={
        "title": text(rng.randint(1, 8)), "description": f"<p>{text(rng.randint(0, 40))}</p>",
        "creators": [{"name": text(2)} for _ in range(rng.randint(1, 3))]})) for recid in range(1, 201)]
    _without_pairs(monkeypatch)
    positional = EmbeddedBackend(tmp_path / "positional")
    positional.index(docs)
    monkeypatch.undo()
    paired = EmbeddedBackend(tmp_path / "paired")
    paired.index(docs)
    phrases = {" ".join(rng.choice(vocabulary[:8]) for _ in range(rng.randint(2, 4))) for _ in range(60)}
    two_words = 0
    for phrase in sorted(phrases) + ["soil moisture", "zurich data", "data data data"]:
        for q in (f'"{phrase}"', f'title:"{phrase}"', f'"{phrase}" AND climate'):
            by_pairs, by_positions = _scored(paired, q), _scored(positional, q)
            assert sorted(r for _, r in by_pairs) == sorted(r for _, r in by_positions), q
            if len(phrase.split()) > 2:
                assert by_pairs == by_positions, q
            else:
                two_words += 1
                node = _pair(combined(parse_search_args(MultiDict({"q": q}))))
                assert by_pairs == _scored(paired, q, node), q
            # Sorted by a key and counted in facets, a phrase finds the same: the same answer.
            for sort in ("mostrecent", "-publication_date"):
                sorted_pairs, sorted_positions = (run(b, q=q, sort=sort, size=50) for b in (paired, positional))
                assert (ids(sorted_pairs), sorted_pairs.total, sorted_pairs.aggregations) == \
                    (ids(sorted_positions), sorted_positions.total, sorted_positions.aggregations), (q, sort)
    assert two_words


def test_both_engines_rank_a_two_word_phrase_by_its_pair(fresh):
    """Record 1's creators hold six words in three names, record 2's four in one: positions would rank record 2
    first (a shorter field), while each holds three pairs, one of them the phrase's, so by its pair (OpenSearch's
    `index_phrases`, and the embedded engine's) the two tie and the lower recid comes first. Three words: positions
    on both engines."""
    fresh.index([to_index_document(make_record(1, metadata={"creators": [
        {"name": "Soil Moisture"}, {"name": "Anna Bob"}, {"name": "Carl Dora"}]})),
        to_index_document(make_record(2, metadata={"creators": [{"name": "Soil Moisture Anna Bob"}]}))])
    assert ids(run(fresh, q='creators.name:"soil moisture"')) == [1, 2]
    assert ids(run(fresh, q='creators.name:"soil moisture anna"')) == [2]


def test_a_two_word_phrase_ranks_by_how_often_its_pair_occurs(tmp_path):
    """The pair field keeps each occurrence (analysis.word_pairs), so the pair's frequency is the phrase's."""
    backend = EmbeddedBackend(tmp_path)
    backend.index([to_index_document(make_record(recid, metadata={"title": title})) for recid, title in (
        (1, "soil moisture and water"), (2, "soil moisture soil moisture"), (3, "moisture soil and water"))])
    pairs = f"title.exact{PAIRS_SUFFIX}"
    assert backend._live().doc_freq(pairs, "soil moisture") == 2
    assert [r for _, r in sorted(_scored(backend, 'title:"soil moisture"'), reverse=True)] == [2, 1]


def test_the_pairs_are_those_a_two_word_phrase_finds():
    assert word_pairs(["Soil moisture data", "data soil"], "exact") == ["soil moisture", "moisture data", "data soil"]
    assert word_pairs(["soil moisture soil moisture"], "exact") == ["soil moisture", "moisture soil", "soil moisture"]
    assert word_pairs([f"Soil {LONG} moisture of {LONG}"], "exact") == ["moisture of"]  # no pair across a gap
    assert word_pairs(["Müller's notes"], "exact") == ["muller s", "s notes"]
    assert word_pairs(["Running soils"], "words") == ["run soil"]
    assert word_pairs(["", "one"], "exact") == []


def test_an_index_made_before_the_pairs_is_read_as_it_is(tmp_path, monkeypatch):
    _without_pairs(monkeypatch)
    old = EmbeddedBackend(tmp_path)
    old.index(_documents())
    monkeypatch.undo()
    current = EmbeddedBackend(tmp_path)  # today's code over the old directory
    assert set(found(current, '"soil moisture"')) == {1, 2, 3, 7}
    assert set(found(current, '"soil moisture data"')) == {1}


def test_a_stored_document_of_the_template_before_the_pairs_is_current(tmp_path):
    """The pairs are added as a document enters the index: the stored engine-ready form did not change, and a
    reindex of documents stored before them indexes their pairs."""
    backend = EmbeddedBackend(tmp_path)
    document = backend.engine_document(to_index_document(make_record(9, metadata={"title": "Soil moisture"})))
    assert f"title.exact{PAIRS_SUFFIX}" not in orjson.loads(document)
    upgrade = backend.upgrades[f"tantivy-{DOCUMENT_VERSION}-{BEFORE_PAIRS}-{tantivy_query.FORM}"]
    assert upgrade(document) == document
    backend.create_new_index()
    backend.load_documents([(9, 1, upgrade(document))])
    backend.swap()
    assert backend._live().doc_freq(f"title.exact{PAIRS_SUFFIX}", "soil moisture") == 1
    assert set(found(backend, '"soil moisture"')) == {9}


def test_the_template_indexes_the_pairs_of_every_unstemmed_companion():
    """The OpenSearch template asks the node for the same pairs (its requests are checked against OpenSearch's
    API description by tests/search/opensearch_spec.py, tests/search/test_opensearch_wire.py)."""
    fields = mapping.fields()
    companions = [f for f in fields.values() if f.parent]
    assert companions and all(f.pairs == f"{f.name}{PAIRS_SUFFIX}" for f in companions)
    assert not [f for f in fields.values() if f.pairs and not f.parent]  # the stemmed fields: positions only
