"""One contract for every search backend: query forms, parameters, sorting, paging, cursors, facets, writes."""

from __future__ import annotations

import functools
from collections import Counter
from typing import Any

import pytest
from helpers.search import ids, run

from repository.errors import BadRequest
from repository.search.backend import compare_revisions
from repository.search.documents import to_index_document

from .factories import corpus, make_record

RECORDS = corpus()
LATEST = [r for r in RECORDS if r["metadata"]["relations"]["version"][0]["is_last"]]


def meta(r: dict[str, Any]) -> dict[str, Any]:
    return r["metadata"]


def _cmp_parts(a: list[tuple[Any, bool]], b: list[tuple[Any, bool]]) -> int:
    """Compare component lists: missing values last, `desc` components reversed."""
    for (x, desc), (y, _) in zip(a, b, strict=True):
        if x == y:
            continue
        if x is None or y is None:
            return 1 if x is None else -1
        return (-1 if x < y else 1) * (-1 if desc else 1)
    return 0


def expected_order(records: list[dict[str, Any]], sort: str) -> list[int]:
    """The order a sort option defines (docs/reference-behaviour.md#sort-options), computed independently of the engines."""
    reverse = sort.startswith("-")
    name = sort.lstrip("-")

    def parts(r: dict[str, Any]) -> list[tuple[Any, bool]]:
        m = meta(r)
        session = m.get("meeting") or {}
        journal = m.get("journal") or {}
        version = m["relations"]["version"][0]
        by_option = {
            "mostrecent": [(r["created"], False)],
            "mostviewed": [(r["stats"]["version_views"], False)],
            "publication_date": [(m["publication_date"], False)],
            "conference_session": [(session.get("session"), False), (session.get("session_part"), True)],
            "journal": [(journal.get(k), False) for k in ("year", "volume", "issue", "pages")],
            "version": [(int(r["conceptrecid"]), False), (version["index"], False)],
        }
        return by_option[name] + [(r["id"], False)]

    natural_desc = name in ("mostrecent", "mostviewed")
    ordered = sorted(records, key=functools.cmp_to_key(lambda a, b: _cmp_parts(parts(a), parts(b))),
                     reverse=natural_desc != reverse)
    return [r["id"] for r in ordered]


def everything(backend: Any, **args: Any) -> list[int]:
    return ids(run(backend, size=100, **args))


# --- sorting and paging ---------------------------------------------------------------------------
@pytest.mark.parametrize("sort", ["mostrecent", "mostviewed", "publication_date", "conference_session", "journal",
                                  "version"])
def test_every_sort_option_and_its_reversal(loaded, sort):
    assert everything(loaded, sort=sort) == expected_order(LATEST, sort)
    assert everything(loaded, sort="-" + sort) == expected_order(LATEST, "-" + sort)


def test_default_sort_is_mostrecent_without_q_and_bestmatch_with_q(loaded):
    assert everything(loaded) == expected_order(LATEST, "mostrecent")
    best = ids(run(loaded, q='title:"ocean study number 8" OR ocean'))
    assert best[0] == 1016  # the phrase matches only "Ocean study number 8"


def test_pages_concatenate_to_the_whole_result(loaded):
    full = everything(loaded, sort="publication_date")
    pages = [ids(run(loaded, sort="publication_date", size=7, page=p)) for p in range(1, 7)]
    assert sum(pages, []) == full
    assert run(loaded, size=7, page=6).total == len(LATEST)


@pytest.mark.parametrize("args", [{"sort": "mostrecent"}, {"sort": "-journal"}, {"q": "study OR ocean"},
                                  {"q": "study", "sort": "-bestmatch"}, {"all_versions": "1", "sort": "version"}])
def test_cursor_walks_to_the_end_without_duplicates(loaded, args):
    full = everything(loaded, **args)
    walked, cursor, pages = [], None, 0
    while True:
        page = run(loaded, size=6, **args, **({"cursor": cursor} if cursor else {}))
        walked += ids(page)
        pages += 1
        cursor = page.next_cursor
        if cursor is None:
            break
    assert walked == full and len(set(walked)) == len(walked)
    assert pages == -(-len(full) // 6)


def test_window_limit(loaded):
    with pytest.raises(BadRequest) as err:
        run(loaded, page=1001, size=10)
    assert err.value.message == "Maximum number of 10000 results have been reached."
    assert len(ids(run(loaded, page=1000, size=10))) == 0  # the last page inside the window is allowed


# --- query forms ----------------------------------------------------------------------------------
def count(predicate: Any, records: list[dict[str, Any]] = LATEST) -> set[int]:
    return {r["id"] for r in records if predicate(r)}


QUERY_FORMS = [
    ("doi:10.5281*zenodo.1002", {}, lambda r: r["id"] == 1002),
    ("conceptdoi:10.5281/zenodo.1069", {"all_versions": "1"}, lambda r: r["conceptrecid"] == "1069"),
    ("10.5281/zenodo.1002", {}, lambda r: r["id"] == 1002),
    ('"10.5281/zenodo.1002"', {}, lambda r: r["id"] == 1002),
    ("https://doi.org/10.5281/ZENODO.1002", {}, lambda r: r["id"] == 1002),
    ("doi:\"10.5281/zenodo.1002\"", {}, lambda r: r["id"] == 1002),
    ("conceptrecid:1069", {}, lambda r: r["id"] == 1074),
    ("conceptrecid:1069", {"all_versions": "true"}, lambda r: r["conceptrecid"] == "1069"),
    ("recid:1004 OR id:1006", {}, lambda r: r["id"] in (1004, 1006)),
    ('"ocean study" AND "number 8"', {}, lambda r: r["id"] == 1016),
    ('keywords:("a-b")', {}, lambda r: "a-b" in meta(r)["keywords"]),
    ("keywords:kw-1 keywords:kw-2", {}, lambda r: {"kw-1", "kw-2"} & set(meta(r)["keywords"])),
    ("+keywords:kw-0 +title:ocean", {}, lambda r: "kw-0" in meta(r)["keywords"] and "Ocean" in meta(r)["title"]),
    ("title:ocean -keywords:kw-0", {}, lambda r: "Ocean" in meta(r)["title"] and "kw-0" not in meta(r)["keywords"]),
    ("title:ocean AND NOT keywords:kw-0", {}, lambda r: "Ocean" in meta(r)["title"]
     and "kw-0" not in meta(r)["keywords"]),
    ("NOT access_right:open", {}, lambda r: meta(r)["access_right"] != "open"),
    ("(title:ocean OR title:glacier) AND access_right:open", {},
     lambda r: meta(r)["title"].split()[0] in ("Ocean", "Glacier") and meta(r)["access_right"] == "open"),
    ("title:(ocean OR glacier)", {}, lambda r: meta(r)["title"].split()[0] in ("Ocean", "Glacier")),
    ("title:gl?cier", {}, lambda r: meta(r)["title"].startswith("Glacier")),
    ("title:prot*", {}, lambda r: meta(r)["title"].startswith("Protein")),
    ("sediment", {}, lambda r: "ediment" in meta(r)["title"] + meta(r).get("description", "")
     or "sediment" in meta(r)["keywords"]),
    ("_exists_:meeting.session", {}, lambda r: "meeting" in meta(r)),
    ("_exists_:locations.point", {}, lambda r: "locations" in meta(r)),
    ("publication_date:[2016 TO 2017]", {}, lambda r: meta(r)["publication_date"][:4] in ("2016", "2017")),
    ("publication_date:{2016 TO 2018}", {}, lambda r: meta(r)["publication_date"][:4] == "2017"),
    ("publication_date:>=2021", {}, lambda r: meta(r)["publication_date"] >= "2021"),
    ("publication_date:<2016", {}, lambda r: meta(r)["publication_date"] < "2016"),
    ("created:2023-03", {"all_versions": "1"}, lambda r: r["created"].startswith("2023-03")),
    ("_stats.version_views:[5 TO 10]", {}, lambda r: 5 <= r["stats"]["version_views"] <= 10),
    ("stats.version_views:>12", {}, lambda r: r["stats"]["version_views"] > 12),
    ("resource_type.subtype:article", {}, lambda r: meta(r)["resource_type"].get("subtype") == "article"),
    ("type:image", {}, lambda r: meta(r)["resource_type"]["type"] == "image"),
    ("license.id:cc-by-4.0", {}, lambda r: True),
    ("filetype:pdf", {}, lambda r: meta(r)["access_right"] == "open" and r["files"][0]["type"] == "pdf"),
    ("filename:f1*.pdf", {}, lambda r: meta(r)["access_right"] == "open" and r["files"][0]["key"].startswith("f1")
     and r["files"][0]["key"].endswith(".pdf")),
    ("relations.version.is_last:false", {"all_versions": "1"}, lambda r: r["id"] in (1070, 1072)),
    ("journal.\\*:tests", {}, lambda r: "journal" in meta(r)),
    ("communities:ecfunded", {}, lambda r: {"id": "ecfunded"} in meta(r)["communities"]),
    ("owners:2", {}, lambda r: r["owners"] == [2]),
    ("*", {}, lambda r: True),
]


@pytest.mark.parametrize(("q", "extra", "predicate"), QUERY_FORMS, ids=[f[0] for f in QUERY_FORMS])
def test_query_forms(loaded, q, extra, predicate):
    pool = RECORDS if extra.get("all_versions") else LATEST
    result = run(loaded, q=q, size=100, **extra)
    assert set(ids(result)) == count(predicate, pool)
    assert result.total == len(count(predicate, pool))


# --- filters and aggregations ---------------------------------------------------------------------
def terms(values: list[Any], size: int = 10) -> list[dict[str, Any]]:
    ordered = sorted(Counter(values).items(), key=lambda kv: (-kv[1], kv[0]))
    return [{"key": k, "doc_count": c} for k, c in ordered[:size]]


def buckets(aggregation: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": b["key"], "doc_count": b["doc_count"]} for b in aggregation["buckets"]]


def test_default_aggregations_count_the_result(loaded):
    aggs = run(loaded).aggregations
    assert set(aggs) == {"access_right", "type", "file_type", "keywords"}
    assert buckets(aggs["access_right"]) == terms([meta(r)["access_right"] for r in LATEST])
    assert buckets(aggs["type"]) == terms([meta(r)["resource_type"]["type"] for r in LATEST])
    publication = next(b for b in aggs["type"]["buckets"] if b["key"] == "publication")
    assert buckets(publication["subtype"]) == terms(
        [meta(r)["resource_type"]["subtype"] for r in LATEST if meta(r)["resource_type"]["type"] == "publication"])
    assert buckets(aggs["file_type"]) == terms([r["files"][0]["type"] for r in LATEST
                                                if meta(r)["access_right"] == "open"])
    assert buckets(aggs["keywords"]) == terms([k for r in LATEST for k in meta(r)["keywords"]])


def test_post_filters_narrow_hits_but_not_aggregations(loaded):
    plain = run(loaded).aggregations
    for args, predicate in [
        ({"type": "publication"}, lambda r: meta(r)["resource_type"]["type"] == "publication"),
        ({"type": "publication", "subtype": "preprint"}, lambda r: meta(r)["resource_type"].get("subtype") == "preprint"),
        ({"access_right": ["embargoed", "closed"]}, lambda r: meta(r)["access_right"] in ("embargoed", "closed")),
        ({"file_type": "pdf"}, lambda r: meta(r)["access_right"] == "open" and r["files"][0]["type"] == "pdf"),
        ({"keywords": "kw-3"}, lambda r: "kw-3" in meta(r)["keywords"]),
    ]:
        result = run(loaded, size=100, **args)
        assert set(ids(result)) == count(predicate), args
        assert result.aggregations == plain, args


def test_query_filters_change_aggregations(loaded):
    result = run(loaded, communities="ecfunded", facets="access_right,communities")
    chosen = [r for r in LATEST if {"id": "ecfunded"} in meta(r)["communities"]]
    assert result.total == len(chosen)
    assert buckets(result.aggregations["access_right"]) == terms([meta(r)["access_right"] for r in chosen])
    assert buckets(result.aggregations["communities"]) == terms([c["id"] for r in chosen for c in meta(r)["communities"]])


@pytest.mark.slow
def test_publication_date_filter_and_yearly_facet(loaded):
    result = run(loaded, publication_date="2017--2019", facets="publication_date", size=100)
    chosen = count(lambda r: "2017" <= meta(r)["publication_date"][:4] <= "2019")
    assert set(ids(result)) == chosen
    years = Counter(meta(r)["publication_date"][:4] for r in LATEST if r["id"] in chosen)
    assert [(b["key_as_string"], b["doc_count"]) for b in result.aggregations["publication_date"]["buckets"]] == \
        sorted(years.items())
    strict = run(loaded, publication_date=">2017--<2019", size=100)
    assert set(ids(strict)) == count(lambda r: meta(r)["publication_date"][:4] == "2018")
    assert set(ids(run(loaded, publication_date="--2015", size=100))) == count(
        lambda r: meta(r)["publication_date"][:4] == "2015")


def inside(r: dict[str, Any], lon: tuple[float, float], lat: tuple[float, float]) -> bool:
    return any(lat[0] <= loc["lat"] <= lat[1] and (lon[0] <= loc["lon"] <= lon[1] if lon[0] <= lon[1]
                                                     else loc["lon"] >= lon[0] or loc["lon"] <= lon[1])
               for loc in meta(r).get("locations", []))


@pytest.mark.parametrize(("bounds", "lon", "lat"), [
    ("5,45,7,47", (5, 7), (45, 47)),           # Geneva
    ("150,-35,152,-33", (150, 152), (-35, -33)),  # Sydney only, not the second point of those records
    ("165,5,-175,15", (165, -175), (5, 15)),     # across the antimeridian
    ("150,5,152,15", (150, 152), (5, 15)),       # lat of one point, lon of another: no match
])
def test_bounds(loaded, bounds, lon, lat):
    assert set(ids(run(loaded, bounds=bounds, size=100))) == count(lambda r: inside(r, lon, lat))


def test_custom_keyword_and_relationship(loaded):
    expected = count(lambda r: "custom" in meta(r))
    assert expected
    assert set(ids(run(loaded, custom="[dwc:family]:[Felidae]", size=100))) == expected
    assert set(ids(run(loaded, custom="[dwc:family]:felidae", size=100))) == expected
    assert set(ids(run(loaded, custom="[obo:RO_0002453]:[Cat:Flea]", size=100))) == expected
    assert ids(run(loaded, custom="[dwc:family]:[Canidae]")) == []


@pytest.mark.parametrize(("value", "versions"), [(None, False), ("", True), ("1", True), ("true", True),
                                                 ("TRUE", True), ("0", False), ("false", False), ("no", False)])
def test_all_versions(loaded, value, versions):
    args = {} if value is None else {"all_versions": value}
    assert run(loaded, **args).total == len(RECORDS if versions else LATEST)


def test_hits_are_the_stored_records(loaded):
    hit = run(loaded, q="recid:1002").hits[0]
    assert hit == next(r for r in RECORDS if r["id"] == 1002)
    closed = run(loaded, q="recid:1010").hits[0]  # i=5: closed access
    assert closed["metadata"]["access_right"] == "closed" and "files" not in closed and "bucket" not in closed["links"]


def test_invalid_query_is_a_400(loaded):
    with pytest.raises(BadRequest) as err:
        run(loaded, q="title:(ocean")
    assert err.value.errors[0]["field"] == "q"


# --- writes ---------------------------------------------------------------------------------------
def test_upsert_delete_and_read_your_writes(fresh):
    fresh.index([to_index_document(make_record(5, metadata={"title": "First words"}))])
    assert ids(run(fresh, q="title:first")) == [5]
    fresh.index([to_index_document(make_record(5, revision=2, metadata={"title": "Second words"}))])
    assert ids(run(fresh, q="title:first")) == [] and ids(run(fresh, q="title:second")) == [5]
    fresh.index([to_index_document(make_record(5, revision=1, metadata={"title": "First words"}))])  # late retry
    assert ids(run(fresh, q="title:second")) == [5] and fresh.get_revisions() == {5: 2}
    fresh.index([to_index_document(make_record(6))])
    fresh.delete([5, 999])
    assert ids(run(fresh)) == [6] and fresh.get_revisions() == {6: 1}


def test_empty_index_answers(fresh):
    result = run(fresh, q="anything", facets="access_right,type,publication_date")
    assert (result.hits, result.total, result.next_cursor) == ([], 0, None)
    assert result.aggregations["access_right"]["buckets"] == []


def test_scripts_other_than_latin_are_findable(fresh):
    fresh.index([to_index_document(make_record(7, metadata={"title": "日本語 テキスト", "description": "Ελληνικά κείμενα"})),
                 to_index_document(make_record(8, metadata={"title": "Münster Straße"}))])
    assert ids(run(fresh, q="日本語")) == [7]
    assert ids(run(fresh, q="κείμενα")) == [7]
    assert ids(run(fresh, q="title:münster")) == [8]


@pytest.mark.slow
def test_rebuild_and_swap_keep_searches_working_and_lose_no_write(fresh):
    docs = [to_index_document(r) for r in RECORDS[:10]]
    fresh.index(docs)
    fresh.create_new_index()
    assert run(fresh).total == 10  # the live index still answers during the rebuild
    fresh.index([to_index_document(make_record(4242, metadata={"title": "Written during the rebuild"}))])
    assert fresh.bulk_load(iter(docs), batch_size=3) == 10
    assert ids(run(fresh, q="title:rebuild")) == [4242]
    fresh.swap()
    assert ids(run(fresh, q="title:rebuild")) == [4242]
    expected = {**{d["recid"]: d["revision"] for d in docs}, 4242: 1}
    assert compare_revisions(expected, fresh.get_revisions()).ok
    assert fresh.ping()


def test_parity_check_catches_a_corrupted_index(fresh):
    fresh.index([to_index_document(make_record(r)) for r in (1, 2, 3)])
    fresh.delete([2])
    fresh.index([to_index_document(make_record(3, revision=5)), to_index_document(make_record(9))])
    parity = compare_revisions({1: 1, 2: 1, 3: 1}, fresh.get_revisions())
    assert (parity.ok, parity.missing, parity.extra, parity.stale) == (False, [2], [9], [3])
