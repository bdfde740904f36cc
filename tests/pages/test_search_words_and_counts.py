"""The search page understands people (docs/search.md): stemmed and accent-folded words, a query the parser refuses
searched as plain words with a notice, highlighted words (escaped), "did you mean"; and its counts add up:
multi-select facets (the API's `facet_counts=multiselect`), the publication-year range, page numbers, a page jump
and a page-size choice."""

from __future__ import annotations

import html
import re

import pytest
from helpers.factories import published
from helpers.http import https_client
from markupsafe import escape

RECORDS = "/api/records/"


@pytest.fixture(scope="module")
def corpus(module_app, module_auth) -> dict[str, dict]:  # type: ignore[no-untyped-def]
    client = https_client(module_app)
    return {
        "soil": published(client, module_auth, title="Soil moisture in the Alps", keywords=["soil", "alps"],
                          upload_type="dataset", publication_date="1995-06-01",
                          description="<p>Daily <b>moisture</b> readings.</p>"),
        "zurich": published(client, module_auth, title="Running water of Zürich", keywords=["water"],
                            upload_type="dataset", access_right="closed", publication_date="2005-02-02"),
        "script": published(client, module_auth, title="<script>alert(1)</script> moisture probes",
                            upload_type="software", keywords=["soil"], publication_date="2021-03-03"),
        "paper": published(client, module_auth, title="Soil carbon", upload_type="publication",
                           publication_type="article", keywords=["soil"], publication_date="2021-04-04"),
    }


def text(response) -> str:  # type: ignore[no-untyped-def]
    assert response.mimetype == "text/html", response.mimetype
    return response.get_data(as_text=True)


def titles(page: str) -> list[str]:
    return sorted(html.unescape(re.sub(r"</?mark>", "", t)) for t in
                  re.findall(r'class="result-title"><a href="/records/\d+">(.*?)</a>', page))


def link(page: str, pattern: str) -> str:
    for href, inner in re.findall(r'<a[^>]*href="([^"]*)"[^>]*>(.*?)</a>', page, re.DOTALL):
        if re.search(pattern, re.sub(r"<[^>]+>", "", inner)):
            return html.unescape(href)
    raise AssertionError(f"no link matching {pattern!r}")


def count_of(page: str, label: str) -> int:
    """The count a facet entry shows."""
    found = re.search(r'<span class="facet-label">' + re.escape(label) + r'</span> <span class="facet-count">(\d+)',
                      page)
    assert found, label
    return int(found.group(1))


def test_stemmed_and_folded_words_find_records(module_client, corpus):
    assert titles(text(module_client.get("/search?q=moistures"))) == [
        "<script>alert(1)</script> moisture probes", "Soil moisture in the Alps"]
    assert titles(text(module_client.get("/search?q=zurich"))) == ["Running water of Zürich"]
    assert titles(text(module_client.get('/search?q="soil moistures"'))) == []  # a phrase is the words as written


def test_highlighted_words_are_escaped(module_client, corpus):
    page = text(module_client.get("/search?q=moistures"))
    assert "&lt;script&gt;alert(1)&lt;/script&gt; <mark>moisture</mark> probes" in page
    assert "<script>alert(1)" not in page
    assert "Soil <mark>moisture</mark> in the Alps" in page
    assert 'Daily <mark>moisture</mark> readings.' in page  # the snippet too, without the description's tags


@pytest.mark.parametrize(("q", "searched"), [
    ("soil: moisture", "soil moisture"),
    ("size [mm]", "size mm"),
    ("covid-19 (sars", "covid 19 sars"),
    ('"unclosed phrase', "unclosed phrase"),
])
def test_a_query_the_parser_refuses_is_searched_as_plain_words(module_client, corpus, q, searched):
    api = module_client.get(RECORDS, query_string={"q": q})
    assert api.status_code == 400  # the API keeps its answer
    answer = module_client.get("/search", query_string={"q": q})
    assert answer.status_code == 200
    page = text(answer)
    assert "could not be read as query syntax" in page and f"<strong>{searched}</strong>" in page
    assert str(escape(api.json["message"])) in page
    assert f'value="{escape(q)}"' in page  # the box keeps what was typed
    if q == "soil: moisture":
        assert titles(page) == ["<script>alert(1)</script> moisture probes", "Soil carbon",
                                "Soil moisture in the Alps"]


def test_did_you_mean_when_nothing_matches(module_client, corpus):
    page = text(module_client.get("/search?q=moistrue&type=dataset"))
    assert "0 results" in page and "Did you mean" in page
    suggestion = link(page, r"^moisture$")
    assert suggestion == "/search?type=dataset&q=moisture"
    assert titles(text(module_client.get(suggestion))) == ["Soil moisture in the Alps"]
    assert "Did you mean" not in text(module_client.get("/search?q=moisture"))
    assert "Did you mean" not in text(module_client.get("/search?q=title:moistrue"))  # syntax: no guess


def test_facet_counts_apply_the_other_filters_and_clicking_gives_that_many(module_client, corpus):
    page = text(module_client.get("/search?q=soil&access_right=open"))
    total = int(re.search(r"(\d+) results?<", page).group(1))
    assert total == 3
    # Resource type counts apply the query and access_right: each count is what its link gives.
    for label in ("Dataset", "Software", "Publication"):
        count = count_of(page, label)
        assert count == 1
        after = text(module_client.get(link(page, rf"^\s*{label}\s+{count}")))
        assert re.search(rf">{count} results?<", after)
    # With a type chosen, the access right facet counts within it, the type facet ignores its own filter.
    chosen = text(module_client.get("/search?q=soil&type=dataset"))
    assert count_of(chosen, "Open access") == 1 and count_of(chosen, "Software") == 1


def test_the_api_keeps_post_filter_counts_and_offers_multiselect(module_client, corpus):
    args = {"q": "soil OR water", "type": "dataset", "facets": "type,access_right"}
    default = module_client.get(RECORDS, query_string=args).json
    by_key = {b["key"]: b["doc_count"] for b in default["aggregations"]["access_right"]["buckets"]}
    assert default["hits"]["total"] == 2 and by_key == {"open": 3, "closed": 1}  # the reference's post-filter
    multi = module_client.get(RECORDS, query_string={**args, "facet_counts": "multiselect"}).json
    assert multi["hits"]["total"] == 2
    assert {b["key"]: b["doc_count"] for b in multi["aggregations"]["access_right"]["buckets"]} == {"open": 1,
                                                                                                     "closed": 1}
    types = {b["key"]: b["doc_count"] for b in multi["aggregations"]["type"]["buckets"]}
    assert types == {"dataset": 2, "software": 1, "publication": 1}  # its own filter left out
    bad = module_client.get(RECORDS, query_string={"facet_counts": "sometimes"})
    assert bad.status_code == 400 and bad.json["errors"][0]["field"] == "facet_counts"


def test_publication_year_histogram_and_range_form(module_client, corpus):
    page = text(module_client.get("/search"))
    assert 'aria-label="Records by year"' in page
    bar = link(page, r"^\s*2021: 2 records\s*$")
    assert bar == "/search?publication_date=2021--2021"
    assert titles(text(module_client.get(bar))) == ["<script>alert(1)</script> moisture probes", "Soil carbon"]
    ranged = text(module_client.get("/search?year_from=1990&year_to=2010&q=water OR soil"))
    assert titles(ranged) == ["Running water of Zürich", "Soil moisture in the Alps"]
    assert 'name="year_from" inputmode="numeric" min="1" max="9999" value="1990"' in ranged
    assert "Publication year: 1990--2010" in ranged  # the filter in force, removable
    assert titles(text(module_client.get("/search?year_from=2006"))) == [
        "<script>alert(1)</script> moisture probes", "Soil carbon"]


def test_page_numbers_jump_and_size(module_client, corpus):
    page = text(module_client.get("/search?size=1&page=2&sort=publication_date"))
    numbers = re.findall(r'<li><a href="([^"]*)"(?: aria-current="page" class="current")?>'
                         r'<span class="visually-hidden">Page </span>(\d+)</a>', page)
    assert [n for _, n in numbers] == ["1", "2", "3", "4"]
    assert html.unescape(numbers[0][0]) == "/search?size=1&sort=publication_date"
    assert 'aria-current="page" class="current"><span class="visually-hidden">Page </span>2<' in page
    assert '<input id="page-jump" type="number" name="page" min="1" max="4" value="2"' in page
    assert '<input type="hidden" name="size" value="1">' in page  # the jump keeps the state
    assert '<select id="search-size" name="size">' in page and '<option value="1" selected>1</option>' in page
    assert titles(text(module_client.get("/search?size=1&page=4&sort=publication_date"))) == ["Soil carbon"]
