"""Facet counts are exact whatever the segments: compared with counts made here from the indexed documents, on
indexes written in several commits (one segment each) with edits and deletions between them."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import orjson
import pytest
from helpers.search import run

from repository.search.documents import DOCUMENT_VERSION, to_index_document
from repository.search.embedded import facets, tantivy_query
from repository.search.embedded.engine import EmbeddedBackend, has_distinct
from repository.search.mapping import BEFORE_STEMMING

from .factories import make_record

FACETS = "access_right,type,file_type,keywords,communities,publication_date"


def terms(counts: Counter[Any], size: int) -> dict[str, Any]:
    """An exact terms aggregation as OpenSearch answers it on one shard: count desc, then key asc."""
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return {"doc_count_error_upper_bound": 0, "sum_other_doc_count": sum(c for _, c in ordered[size:]),
            "buckets": [{"key": k, "doc_count": c} for k, c in ordered[:size]]}


def expected(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """The six facets of `docs` (index documents), counted one document at a time."""
    types = Counter(d["resource_type.type"] for d in docs if "resource_type.type" in d)
    type_facet = terms(types, 10)
    for bucket in type_facet["buckets"]:
        bucket["subtype"] = terms(Counter(d["resource_type.subtype"] for d in docs if "resource_type.subtype" in d
                                          and d["resource_type.type"] == bucket["key"]), 20)
    years = Counter(d["year"] for d in docs if "year" in d)
    return {
        "access_right": terms(Counter(d["access_right"] for d in docs if "access_right" in d), 10),
        "type": type_facet,
        "file_type": terms(Counter(t for d in docs for t in set(d.get("filetype", []))), 10),
        "keywords": terms(Counter(k for d in docs for k in set(d.get("keywords", []))), 10),
        "communities": terms(Counter(c for d in docs for c in set(d.get("communities", []))), 10),
        "publication_date": {"buckets": [
            {"key_as_string": f"{y:04d}", "key": _epoch_ms(y), "doc_count": n} for y, n in sorted(years.items())]},
    }


def _epoch_ms(year: int) -> int:
    from datetime import UTC, datetime

    return int(datetime(year, 1, 1, tzinfo=UTC).timestamp() * 1000)


def segments(backend: EmbeddedBackend) -> int:
    return backend._live().num_segments


def test_a_term_outside_one_segments_top_list_is_counted_in_full(tmp_path):
    """The engine's terms aggregation keeps each segment's top `segment_size` (100) terms: here `target` is 101st
    in the first segment (once, against 100 keywords twice each) and first overall (11 times)."""
    backend = EmbeddedBackend(tmp_path, cache_entries=0)
    first = [make_record(j + 1, metadata={"keywords": [f"a{10 * (j % 10) + i:03d}" for i in range(10)]})
             for j in range(20)]
    first.append(make_record(21, metadata={"keywords": ["target"]}))
    backend.index([to_index_document(r) for r in first])
    backend.index([to_index_document(make_record(100 + j, metadata={"keywords": ["target"]})) for j in range(10)])
    assert segments(backend) == 2
    keywords = run(backend, facets="keywords").aggregations["keywords"]
    assert keywords["buckets"][0] == {"key": "target", "doc_count": 11}
    assert [b["key"] for b in keywords["buckets"][1:]] == [f"a{i:03d}" for i in range(9)]
    assert keywords["sum_other_doc_count"] == 200 - 18


# The most frequent keywords are the ones counted with a query each (`field:"term"`: candidates, the second pass):
# some the query syntax gives meaning to, which must be taken as they are.
VOCABULARY = ["a:b", "x y", "c*", "(p) OR q", "AND", "ünï", 'q"t', "b\\s", " lead", "-neg"] + \
    [f"kw{i:03d}" for i in range(290)]
TYPES = [("publication", "article"), ("publication", "preprint"), ("publication", "other"), ("image", "other"),
         ("image", "photo"), ("dataset", None), ("software", None)]


def random_record(rng: random.Random, recid: int) -> dict[str, Any]:
    rtype, subtype = rng.choice(TYPES)
    access = rng.choices(["open", "closed", "restricted", "embargoed"], [8, 1, 1, 1])[0]
    # Zipf-like keywords: a few frequent, a long tail, sometimes the same one twice in a record.
    keywords = [VOCABULARY[min(int(rng.paretovariate(0.7)) - 1, 299)] for _ in range(rng.randint(0, 6))]
    files = [{"bucket": "b", "checksum": "md5:00", "key": f"f{n}.{t}", "size": 1, "type": t,
              "links": {"self": f"https://x/api/files/b/{recid}/{n}"}}
             for n, t in enumerate(rng.sample(["pdf", "csv", "zip", "txt", "png"], rng.randint(0, 3)))]
    return make_record(recid, revision=rng.randint(1, 3), files=files if access == "open" else [], metadata={
        "access_right": access, "keywords": keywords,
        "resource_type": {"type": rtype, **({"subtype": subtype} if subtype else {}), "title": rtype},
        "publication_date": f"{rng.randint(2010, 2024)}-01-01",
        "title": rng.choice(["ocean data", "glacier study", "ocean model"]),
        "communities": [{"id": c} for c in rng.sample(["c1", "c2", "c3", "c4"], rng.randint(0, 2))]})


# (terms per segment, matches that make a search count candidates, candidates, whether searches count only the
# candidates whenever they can): the shipped numbers, then ones that make candidates (the first pass), the second
# pass and the count of every term answer most facets, then ones that make the candidates alone prove the top (or
# fail to, and count again).
@pytest.mark.parametrize("limits", [(facets.SEGMENT_TOP, facets.MANY, facets.CANDIDATES, False), (20, 0, 5, False),
                                    (12, 0, 12, False), (20, 10**9, 0, False), (1, 10**9, 0, False),
                                    (30, 0, 20, True), (12, 0, 12, True), (12, 0, 5, True)])
# A second seed walks the same paths with other data: seconds more, so it runs in the full suite.
@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_facets_equal_counts_made_one_document_at_a_time(tmp_path, monkeypatch, seed, limits):
    for name, value in zip(("SEGMENT_TOP", "MANY", "CANDIDATES"), limits[:3], strict=True):
        monkeypatch.setattr(facets, name, value)
    if limits[:3] != (facets.SEGMENT_TOP, facets.MANY, facets.CANDIDATES):  # the shipped numbers: every term (FEW)
        monkeypatch.setattr(facets, "FEW", 0)  # the others: the paths of searches with more matches
    if limits[3]:
        monkeypatch.setattr(facets, "LIKELY", 0)
    rng = random.Random(seed)
    backend = EmbeddedBackend(tmp_path, cache_entries=0)
    live: dict[int, dict[str, Any]] = {}
    for commit in range(6):
        batch = [random_record(rng, recid) for recid in rng.sample(range(1, 400), rng.randint(20, 150))]
        backend.index([to_index_document(r) for r in batch])
        for r in batch:  # what the index holds: an older revision never replaces a newer one
            if r["id"] not in live or live[r["id"]]["revision"] <= r["revision"]:
                live[r["id"]] = to_index_document(r)
        if commit % 2:
            gone = rng.sample(sorted(live), 10)
            backend.delete(gone)
            for recid in gone:
                del live[recid]
        assert segments(backend) >= 2 or commit == 0
        docs = list(live.values())
        assert run(backend, facets=FACETS).aggregations == expected(docs)
        assert run(backend, q="title:ocean", facets=FACETS).aggregations == expected(
            [d for d in docs if "ocean" in d["title"]])
        assert run(backend, type="image", facets=FACETS).aggregations == expected(docs)  # a post-filter
        assert run(backend, communities="c2", facets=FACETS).aggregations == expected(
            [d for d in docs if "c2" in d.get("communities", [])])
        frequent = VOCABULARY[0]
        assert run(backend, q=f'keywords:"{frequent}"', facets=FACETS).aggregations == expected(
            [d for d in docs if frequent in d.get("keywords", [])])


def test_a_candidate_the_query_parser_refuses_costs_a_pass_not_the_answer(tmp_path, monkeypatch):
    monkeypatch.setattr(facets, "MANY", 0)
    monkeypatch.setattr(facets, "FEW", 0)
    monkeypatch.setattr(facets, "SEGMENT_TOP", 12)
    monkeypatch.setattr(facets, "_quoted", lambda term: '"')  # an unbalanced quote in every candidate's filter
    backend = EmbeddedBackend(tmp_path, cache_entries=0)
    live = index_batches(backend, random.Random(7))
    assert run(backend, facets=FACETS).aggregations == expected(live)


@pytest.mark.slow
def test_candidates_alone_answer_exactly_on_a_many_segment_index(tmp_path, monkeypatch):
    """The keywords counted from their candidates and the sum of each document's distinct keywords, in one pass."""
    monkeypatch.setattr(facets, "MANY", 0)
    monkeypatch.setattr(facets, "FEW", 0)
    monkeypatch.setattr(facets, "CANDIDATES", 12)
    passes = []
    original = facets._open_vocabulary

    def counted_again(*args: Any) -> Any:
        passes.append(args[1])
        return original(*args)

    monkeypatch.setattr(facets, "_open_vocabulary", counted_again)
    backend = EmbeddedBackend(tmp_path, cache_entries=0)
    live: dict[int, dict[str, Any]] = {}
    recid = 0
    for _batch in range(5):  # a strong head: the top 10 of every commit among the 12 most frequent keywords
        batch = []
        for _ in range(60):
            recid += 1
            keywords = [f"k{min(int(random.Random(recid).paretovariate(1.5)), 40):02d}", f"k{recid % 3:02d}",
                        f"k{recid % 3:02d}", f"tail{recid}"]
            batch.append(make_record(recid, metadata={"keywords": keywords}))
        backend.index([to_index_document(r) for r in batch])
        live.update({r["id"]: to_index_document(r) for r in batch})
    assert segments(backend) >= 2
    answer = run(backend, facets="keywords").aggregations["keywords"]
    assert answer == expected(list(live.values()))["keywords"]
    assert passes == []  # answered without the terms aggregation


def test_a_term_added_after_the_candidates_were_listed_is_not_left_out(tmp_path, monkeypatch):
    """A candidate list is used for a minute: the bound of every other term must grow with what is added since."""
    monkeypatch.setattr(facets, "MANY", 0)
    monkeypatch.setattr(facets, "FEW", 0)
    monkeypatch.setattr(facets, "CANDIDATES", 3)
    monkeypatch.setattr(facets, "SEGMENT_TOP", 2)  # a vocabulary too large for the terms aggregation alone
    monkeypatch.setattr(facets, "LIKELY", 0)
    monkeypatch.setitem(facets.TERMS_FACETS, "keywords", ("keywords", 2))
    backend = EmbeddedBackend(tmp_path, cache_entries=0)
    counts = {"a": 10, "b": 9, "c": 8, "d": 1}
    records = [make_record(n + 1, metadata={"keywords": [term]})
               for n, term in enumerate(t for t, count in counts.items() for _ in range(count))]
    backend.index([to_index_document(r) for r in records])
    first = run(backend, facets="keywords").aggregations["keywords"]
    assert first["buckets"] == [{"key": "a", "doc_count": 10}, {"key": "b", "doc_count": 9}]
    backend.index([to_index_document(make_record(100 + n, metadata={"keywords": ["z"]})) for n in range(20)])
    second = run(backend, facets="keywords").aggregations["keywords"]
    assert second["buckets"] == [{"key": "z", "doc_count": 20}, {"key": "a", "doc_count": 10}]
    assert second["sum_other_doc_count"] == 9 + 8 + 1


def test_an_index_made_before_the_distinct_counts_is_counted_exactly(tmp_path, monkeypatch):
    """An index without the fields counting each document's distinct terms (made before them) is read as it is."""
    monkeypatch.setattr(tantivy_query, "DISTINCT", {})
    monkeypatch.setattr(facets, "MANY", 0)
    monkeypatch.setattr(facets, "FEW", 0)
    monkeypatch.setattr(facets, "LIKELY", 0)
    backend = EmbeddedBackend(tmp_path, cache_entries=0)
    assert not has_distinct(backend._live_snapshot()[0])
    live = index_batches(backend, random.Random(3))
    assert run(backend, facets=FACETS).aggregations == expected(live)


def test_a_document_stored_before_the_distinct_counts_gains_the_counts_a_build_gives(tmp_path):
    # A keyword given twice is one term: counted once, as by a build.
    backend = EmbeddedBackend(tmp_path)
    doc = to_index_document(make_record(7, metadata={"keywords": ["soil", "soil", "alps"]}))
    built = orjson.loads(backend.engine_document(doc))
    assert [built[name] for name in tantivy_query.DISTINCT.values() if name in built][:1] == [[2]]
    companions = {f.exact for f in backend.fields.values() if f.exact}
    older = {k: v for k, v in built.items() if k not in tantivy_query.DISTINCT.values() and k not in companions}
    older[tantivy_query.PRESENT] = [n for n in built[tantivy_query.PRESENT] if n not in companions]
    upgraded = orjson.loads(backend.upgrades[f"tantivy-{DOCUMENT_VERSION}-{BEFORE_STEMMING}"](orjson.dumps(older)))
    assert sorted(upgraded.pop(tantivy_query.PRESENT)) == sorted(built.pop(tantivy_query.PRESENT))
    assert upgraded == built


def index_batches(backend: EmbeddedBackend, rng: random.Random) -> list[dict[str, Any]]:
    """Three batches of 100 random records (ids drawn from 1-399, so later ones replace some) indexed one commit
    each, as segments of a live instance; returns the live index documents."""
    live: dict[int, dict[str, Any]] = {}
    for _ in range(3):
        batch = [random_record(rng, recid) for recid in rng.sample(range(1, 400), 100)]
        backend.index([to_index_document(r) for r in batch])
        live.update({r["id"]: to_index_document(r) for r in batch
                     if r["id"] not in live or live[r["id"]]["revision"] <= r["revision"]})
    return list(live.values())
