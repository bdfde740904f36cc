"""How text is cut into words for searching, the same in every process that needs it: the embedded engine's
analyzers, the search page's highlighting, the plain-word form of a query the parser refuses, and the choice of a
"did you mean" word among an index's terms (docs/search.md#words-and-phrases).

The analyzers are tantivy's (a dependency of every shape: the embedded engine is the default); the OpenSearch
template defines the same ones with its own filters (index_templates/records.json: `words`, `exact`)."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable

import tantivy
from markupsafe import Markup, escape


def _analyzer(*filters: tantivy.Filter) -> tantivy.TextAnalyzer:
    builder = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).filter(tantivy.Filter.remove_long(40))
    for step in (tantivy.Filter.lowercase(), *filters):
        builder = builder.filter(step)
    return builder.build()


# By the template's names: "words" folds accents and stems English words (Snowball English, which OpenSearch calls
# porter2), "exact" folds only; "default" is tantivy's own, which indexes made before the two use for every text
# field.
ANALYZERS: dict[str, Callable[[], tantivy.TextAnalyzer]] = {
    "words": lambda: _analyzer(tantivy.Filter.ascii_fold(), tantivy.Filter.stemmer("english")),
    "exact": lambda: _analyzer(tantivy.Filter.ascii_fold()),
    "default": lambda: _analyzer(),
}
_BUILT = {name: make() for name, make in ANALYZERS.items()}


@functools.lru_cache(maxsize=4096)
def analyzed(text: str, analyzer: str = "default") -> tuple[str, ...]:
    """`text` as analyzer `analyzer` indexes it. Cached: an analysis costs ~0.1 ms, and the embedded engine's result
    cache asks again for every cached search at every commit."""
    return tuple(_BUILT[analyzer if analyzer in _BUILT else "default"].analyze(text))


# The words of a text before any filter, and the length (UTF-8 bytes) from which the analyzers drop a word.
_WORDS = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).build()
LONG_WORD = 40


def word_pairs(texts: Iterable[str], analyzer: str) -> list[str]:
    """The adjacent words of each of `texts` as analyzer `analyzer` indexes them, each pair one term ("soil
    moisture"), as often as it occurs: what a field with `index_phrases` holds beside its words
    (docs/search.md#words-and-phrases), so that a pair's frequency in a document is the two-word phrase's, which
    its relevance score reads. Exactly the pairs a two-word phrase finds: never across two values (a phrase never
    spans them), nor across a word the analyzer drops (one of LONG_WORD bytes or more keeps its neighbours'
    positions apart)."""
    built = _BUILT[analyzer if analyzer in _BUILT else "default"]
    found: list[str] = []
    for text in texts:
        raw = _WORDS.analyze(text)
        if all(len(word.encode()) < LONG_WORD for word in raw):  # the filters drop no word: one analysis
            words: list[str | None] = list(built.analyze(text))
        else:  # each word alone, a dropped one leaving a gap (rare: a URL's or a formula's run of characters)
            words = [next(iter(built.analyze(word)), None) for word in raw]
        found.extend(f"{a} {b}" for a, b in zip(words, words[1:], strict=False) if a and b)
    return found


# --- the plain-word fallback of the search page ---------------------------------------------------------------
_WORD = re.compile(r"[^\W_]+")
OPERATORS = frozenset({"AND", "OR", "NOT", "TO"})


def plain_words(q: str) -> str:
    """The words of `q` with every character of the query syntax left out: what the search page searches when the
    parser refuses `q` (`soil: moisture` -> `soil moisture`). Operator words are lowered to plain words."""
    return " ".join(w.lower() if w in OPERATORS else w for w in _WORD.findall(q))


# --- highlighting --------------------------------------------------------------------------------------------
def highlight(text: str, stems: frozenset[str]) -> Markup:
    """`text` escaped, with each word whose stem is among `stems` in <mark> (the words of a search, analyzed by
    "words": `moistures` marks "moisture" and "Moisture")."""
    if not stems:
        return Markup(escape(text))
    out: list[str] = []
    at = 0
    for match in _WORD.finditer(text):
        stem = analyzed(match.group(), "words")
        if stem and stem[0] in stems:
            out.append(str(escape(text[at:match.start()])))
            out.append(f"<mark>{escape(match.group())}</mark>")
            at = match.end()
    out.append(str(escape(text[at:])))
    return Markup("".join(out))


# --- did you mean ---------------------------------------------------------------------------------------------
def edit_distance(a: str, b: str, limit: int) -> int:
    """Levenshtein distance of `a` and `b`, or `limit + 1` once it is certain to exceed `limit`."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        if min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]


def max_edits(word: str) -> int:
    """How far a suggestion may be from `word`: one edit for short words, two from five letters."""
    return 1 if len(word) < 5 else 2


def closest(word: str, terms: Iterable[tuple[str, int]]) -> str | None:
    """The term of `terms` ((term, documents)) nearest to `word` within `max_edits`, the most frequent among the
    nearest; None when none is near."""
    limit = max_edits(word)
    best: tuple[int, int, str] | None = None
    for term, documents in terms:
        if term == word or not documents:
            continue
        distance = edit_distance(word, term, limit)
        if distance <= limit and (best is None or (distance, -documents, term) < best):
            best = (distance, -documents, term)
    return best[2] if best else None
