"""Words and phrases on both engines (docs/search.md#words-and-phrases): English stemming and accent folding on
the text fields, quoted phrases on their unstemmed companions, and the terms "did you mean" offers."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from helpers.search import ids, run

from repository.search.analysis import analyzed, closest, edit_distance, highlight, plain_words
from repository.search.backend import SearchBackend
from repository.search.documents import DOCUMENT_VERSION, to_index_document
from repository.search.embedded import tantivy_query
from repository.search.embedded.engine import EmbeddedBackend
from repository.search.mapping import BEFORE_STEMMING

from .factories import make_record

TITLES = {
    1: "Soil moisture in the Alps",
    2: "Running water of Zürich",
    3: "Müller's notes on glaciers",
    4: "Moistures measured daily",
    5: "A study of soil carbon",
}


@pytest.fixture
def words(fresh: SearchBackend) -> SearchBackend:
    docs = [to_index_document(make_record(recid, metadata={"title": title, "description": f"<p>{title}.</p>"}))
            for recid, title in TITLES.items()]
    fresh.index(docs)
    return fresh


def found(backend: SearchBackend, q: str) -> set[int]:
    return set(ids(run(backend, q=q, size=50)))


@pytest.mark.parametrize(("q", "expected"), [
    ("moistures", {1, 4}),  # stemmed: moisture and moistures are one word
    ("moisture", {1, 4}),
    ("title:run", {2}),  # running -> run
    ("zurich", {2}),  # accents folded both ways
    ("Zürich", {2}),
    ("muller", {3}),
    ("MÜLLER", {3}),
    ("glacier", {3}),
    ('"soil moisture"', {1}),  # a phrase of the words as written
    ('"soil moistures"', set()),  # the unstemmed companion: not the plural
    ('title:"moistures measured"', {4}),
    ('"zurich"', {2}),  # phrases fold accents too
    ("soil AND carbons", {5}),
    ("title.exact:moistures", {4}),  # the companion by name
])
def test_stemming_folding_and_exact_phrases(words, q, expected):
    assert found(words, q) == expected


def test_companions_exist_where_their_parents_do(words):
    assert found(words, "_exists_:title.exact") == found(words, "_exists_:title") == set(TITLES)


@pytest.mark.parametrize(("given", "expected"), [
    (["moistrue"], ["moisture"]),  # two edits away
    (["glaciars"], ["glaciers"]),
    (["soil", "carbn"], ["soil", "carbon"]),  # a word the index holds is kept
    (["qqqqqq"], ["qqqqqq"]),  # nothing near: unchanged
])
def test_suggestions_come_from_the_index_terms(words, given, expected):
    assert words.suggest(given) == expected


def test_suggest_of_no_words(words):
    assert words.suggest([]) == []


def test_a_stored_document_of_the_previous_template_gains_its_companions(tmp_path):
    backend = EmbeddedBackend(tmp_path)
    built = orjson.loads(backend.engine_document(to_index_document(make_record(9, metadata={"title": "Soil"}))))
    companions = {f.exact for f in backend.fields.values() if f.exact}
    older = {k: v for k, v in built.items() if k not in companions}
    older[tantivy_query.PRESENT] = [n for n in built[tantivy_query.PRESENT] if n not in companions]
    upgrade = backend.upgrades[f"tantivy-{DOCUMENT_VERSION}-{BEFORE_STEMMING}-{tantivy_query.FORM}"]
    upgraded = orjson.loads(upgrade(orjson.dumps(older)))
    assert sorted(upgraded.pop(tantivy_query.PRESENT)) == sorted(built.pop(tantivy_query.PRESENT))
    assert upgraded == built
    assert upgrade(orjson.dumps(built)) == orjson.dumps(built)  # already current: unchanged


def test_an_index_made_before_the_analyzers_is_read_as_it_is(tmp_path, monkeypatch):
    """A live index of the previous schema (no companions, tantivy's default analyzer) answers words and phrases
    as before until a reindex."""
    from repository.search import mapping
    from repository.search.embedded import engine

    previous = mapping.load_template()
    for spec in _text_specs(previous["template"]["mappings"]["properties"]):
        spec.pop("fields", None)
        spec["analyzer"] = "standard"
    monkeypatch.setattr(engine, "fields", lambda: mapping.fields_of(previous))
    old = EmbeddedBackend(tmp_path)
    old.index([to_index_document(make_record(1, metadata={"title": "Soil moisture"}))])
    monkeypatch.undo()
    current = EmbeddedBackend(tmp_path)  # today's code over the old directory
    assert found(current, "moisture") == {1}
    assert found(current, '"soil moisture"') == {1}
    assert found(current, "moistures") == set()  # unstemmed there


def _text_specs(properties: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for spec in properties.values():
        if "properties" in spec:
            out += _text_specs(spec["properties"])
        elif spec.get("type") == "text":
            out.append(spec)
    return out


def test_analysis_helpers():
    assert analyzed("Moistures of Zürich", "words") == ("moistur", "of", "zurich")
    assert analyzed("Moistures of Zürich", "exact") == ("moistures", "of", "zurich")
    assert plain_words('soil: moisture size [mm] covid-19 (sars "unclosed AND') == \
        "soil moisture size mm covid 19 sars unclosed and"
    assert edit_distance("moistrue", "moisture", 2) == 2 and edit_distance("abc", "xyzzy", 2) == 3
    assert closest("carbn", [("carbon", 3), ("cabin", 9), ("carbn", 1)]) == "carbon"
    marked = highlight("<script>alert(1)</script> Moisture & moistures", frozenset(analyzed("moisture", "words")))
    assert str(marked) == ("&lt;script&gt;alert(1)&lt;/script&gt; <mark>Moisture</mark> &amp; "
                           "<mark>moistures</mark>")
