"""The front page (`/`) and the search page (`/search`): the API's search with its query syntax and filters, facets
whose links add and remove a filter, result cards without a depositor's HTML, paging that keeps the state, a bad
query's 400 on the page, and caching only for pages nobody is signed in to."""

from __future__ import annotations

import html
import re

import pytest
from helpers.factories import published
from helpers.http import https_client
from helpers.pages import sign_in, sign_up_and_confirm
from markupsafe import escape


@pytest.fixture(scope="module")
def corpus(module_app, module_auth) -> dict[str, dict]:  # type: ignore[no-untyped-def]
    """Three published records of different types, keywords, years and communities."""
    client = https_client(module_app)
    made = client.post("/api/communities/", json={"identifier": "ocean", "title": "Ocean observations"},
                       headers=module_auth)
    assert made.status_code == 201, made.json
    records = {
        "ocean": published(client, module_auth, title="Ocean sensor readings", keywords=["ocean", "sensors"],
                           description="<p>Hourly <b>readings</b> &amp; more</p><script>alert(1)</script>",
                           publication_date="2021-05-01", communities=[{"identifier": "ocean"}],
                           creators=[{"name": "Doe, Jane"}, {"name": "Roe, Rick"}]),
        "glacier": published(client, module_auth, title="Glacier retreat study", upload_type="publication",
                             publication_type="article", keywords=["ice"], publication_date="2019-01-01"),
        "toolkit": published(client, module_auth, title="Analysis toolkit", upload_type="software",
                             publication_date="2020-03-03", description="<p>" + "word " * 200 + "</p>"),
    }
    return records


def text(response) -> str:  # type: ignore[no-untyped-def]
    assert response.mimetype == "text/html", response.mimetype
    return response.get_data(as_text=True)


def titles(page: str) -> list[str]:
    """The titles of the result cards, in order."""
    return [re.sub(r"</?mark>", "", t) for t in  # the search's words are highlighted
            re.findall(r'<h3 class="result-title"><a href="/records/\d+">(.*?)</a>', page)]


def link(page: str, pattern: str) -> str:
    """The href of the first link whose text matches `pattern` (HTML-unescaped)."""
    for href, inner in re.findall(r'<a[^>]*href="([^"]*)"[^>]*>(.*?)</a>', page, re.DOTALL):
        if re.search(pattern, re.sub(r"<[^>]+>", "", inner)):
            return html.unescape(href)
    raise AssertionError(f"no link matching {pattern!r}")


@pytest.mark.slow
def test_front_page_shows_search_recent_records_communities_and_counts(module_client, corpus):
    page = text(module_client.get("/"))
    assert 'action="/search"' in page and 'name="q"' in page
    assert titles(page) == ["Analysis toolkit", "Glacier retreat study", "Ocean sensor readings"]  # newest first
    assert "<strong>3</strong> records" in page and "<strong>1</strong> community" in page
    assert 'href="/communities/ocean/">Ocean observations</a>' in page
    assert 'href="/search?type=software">Software</a>' in page


def test_front_and_search_pages_are_cacheable_for_guests_and_answer_conditional_requests(module_client, corpus):
    for path in ("/", "/search?q=ocean"):
        first = module_client.get(path)
        assert first.headers["Cache-Control"] == "public, no-cache" and first.headers["ETag"]
        again = module_client.get(path, headers={"If-None-Match": first.headers["ETag"]})
        assert again.status_code == 304


def test_a_signed_in_persons_search_page_is_never_stored(module_app, corpus):
    client = https_client(module_app)
    sign_up_and_confirm(client, module_app, "reader@example.org", "correct horse battery")
    assert sign_in(client, "reader@example.org", "correct horse battery").status_code in (302, 303)
    answer = client.get("/search")
    assert answer.headers["Cache-Control"] == "private, no-store" and "ETag" not in answer.headers


def test_search_cards_show_title_creators_date_type_access_doi_and_a_plain_snippet(module_client, corpus):
    page = text(module_client.get("/search?q=ocean"))
    assert titles(page) == ["Ocean sensor readings"]
    recid = corpus["ocean"]["record_id"]
    assert f'<a href="/records/{recid}"><mark>Ocean</mark> sensor readings</a>' in page  # the word highlighted
    assert "Doe, Jane; Roe, Rick" in page and '<time datetime="2021-05-01">' in page
    assert '<span class="badge">Dataset</span>' in page and "Open access" in page
    doi = corpus["ocean"]["doi"]
    assert f'href="https://doi.org/{doi}">{doi}</a>' in page
    snippet = re.search(r'<p class="result-snippet">(.*?)</p>', page, re.DOTALL)
    assert snippet is not None and snippet.group(1) == "Hourly readings &amp; more"  # no tags, entity kept as text
    assert "alert(1)" not in page and "<b>readings" not in page
    assert 'value="ocean"' in page  # the search box keeps the query


def test_long_descriptions_are_cut_at_a_word(module_client, corpus):
    page = text(module_client.get("/search?q=toolkit"))
    snippet = re.search(r'<p class="result-snippet">(.*?)</p>', page, re.DOTALL)
    assert snippet is not None and snippet.group(1).endswith("word…") and len(snippet.group(1)) <= 301


def test_a_facet_link_adds_its_filter_and_the_selected_entry_removes_it(module_client, corpus):
    page = text(module_client.get("/search"))
    assert len(titles(page)) == 3 and "3 results" in page
    dataset = link(page, r"^\s*Dataset\s+1\s*$")
    assert dataset == "/search?type=dataset"
    filtered = text(module_client.get(dataset))
    assert titles(filtered) == ["Ocean sensor readings"]
    selected = re.search(r'<a class="facet-link selected" href="([^"]*)" aria-current="true">', filtered)
    assert selected is not None and "(selected; remove filter)" in filtered
    assert "Resource type: Dataset" in filtered and "(remove filter)" in filtered
    assert html.unescape(selected.group(1)) == "/search"
    assert len(titles(text(module_client.get(html.unescape(selected.group(1)))))) == 3


def test_facets_count_keywords_subtypes_years_communities_and_file_types(module_client, corpus):
    page = text(module_client.get("/search"))
    for heading in ("Access right", "Resource type", "File type", "Keyword", "Community", "Publication year"):
        assert f">{heading}</h3>" in page
    assert titles(text(module_client.get(link(page, r"^\s*Journal article\s+1")))) == ["Glacier retreat study"]
    assert link(page, r"^\s*Journal article") == "/search?type=publication&subtype=article"
    assert titles(text(module_client.get(link(page, r"^\s*2019: 1 record\s*$")))) == ["Glacier retreat study"]
    assert titles(text(module_client.get(link(page, r"^\s*Ocean observations\s+1")))) == ["Ocean sensor readings"]
    assert titles(text(module_client.get(link(page, r"^\s*sensors\s+1")))) == ["Ocean sensor readings"]
    assert len(titles(text(module_client.get(link(page, r"^\s*csv\s+3"))))) == 3


def test_filters_combine_and_a_filter_without_hits_can_still_be_removed(module_client, corpus):
    page = text(module_client.get("/search?q=ocean&keywords=ice"))
    assert titles(page) == [] and "0 results" in page and "No record matches" in page
    removal = link(page, r"Keyword: ice")
    assert removal == "/search?q=ocean"
    assert titles(text(module_client.get(removal))) == ["Ocean sensor readings"]


def test_paging_keeps_the_query_filters_and_sort(module_client, corpus):
    page = text(module_client.get("/search?sort=publication_date&size=1&access_right=open"))
    assert titles(page) == ["Glacier retreat study"] and '<span class="muted">of 3</span>' in page
    following = link(page, "Next page")
    assert following == "/search?sort=publication_date&size=1&access_right=open&page=2"
    second = text(module_client.get(following))
    assert titles(second) == ["Analysis toolkit"] and link(second, "Previous page").endswith("page=1")
    assert '<option value="publication_date" selected>' in second
    assert '<input type="hidden" name="access_right" value="open">' in second  # the form keeps the filter
    assert link(second, "Remove every filter") == "/search?sort=publication_date&size=1"


def test_the_api_query_syntax_and_arguments_work_on_the_page(module_client, corpus):
    assert titles(text(module_client.get('/search?q=title:"glacier retreat"'))) == ["Glacier retreat study"]
    assert titles(text(module_client.get("/search?q=keywords:ocean OR keywords:ice&sort=-publication_date"))) == [
        "Ocean sensor readings", "Glacier retreat study"]
    assert titles(text(module_client.get("/search?publication_date=2020--2021&sort=publication_date"))) == [
        "Analysis toolkit", "Ocean sensor readings"]
    assert titles(text(module_client.get("/search?communities=ocean"))) == ["Ocean sensor readings"]
    assert len(titles(text(module_client.get("/search?all_versions=true")))) == 3


@pytest.mark.parametrize(("query", "message"), [
    ("sort=nonsense", "Invalid sort option"),
    ("page=0", "Invalid pagination parameters"),
    ("size=100&page=101", "Maximum number of"),
    ("publication_date=yesterday", "Invalid range format"),
])  # fmt: skip
def test_a_bad_query_shows_the_apis_message_with_status_400(module_client, corpus, query, message):
    api = module_client.get("/api/records/?" + query)
    assert api.status_code == 400
    answer = module_client.get("/search?" + query)
    assert answer.status_code == 400 and answer.headers["Cache-Control"] == "private, no-store"
    page = text(answer)
    assert "The search could not run" in page and str(escape(api.json["message"])) in page
    assert message in page and page.count(str(escape(api.json["message"]))) == 1  # said once
    assert 'name="q"' in page  # the form is there to try again


def test_every_new_page_is_in_the_openapi_document(module_client):
    paths = module_client.get("/api/openapi.json").json["paths"]
    assert "/search" in paths and "/" in paths


@pytest.mark.parametrize("path", [
    "/search?page=abc", "/search?cursor=garbage", "/search?size=100000", "/search?bounds=1,2",
    "/search?custom=[nope]:x", "/search?status=nonsense", "/search?q=%00", "/search?type=%00&communities=%00",
    "/search?publication_date=%00--", "/communities/?size=5000", "/communities/?q=" + "word+" * 40,
    "/communities/?page=99999999999", "/communities/%00/", "/communities/a%00b/",
])  # fmt: skip
def test_bad_input_answers_a_page_never_a_500_or_json(module_client, corpus, path):
    answer = module_client.get(path)
    assert answer.status_code in (200, 400, 404), (path, answer.status_code)
    assert answer.mimetype == "text/html"


@pytest.mark.slow
def test_a_kept_search_page_follows_publishes_edits_and_take_downs(client, auth, app):
    """Search pages are kept rendered by what they show: a guest's page after a publish, an edit or a take-down
    shows it at once, and a signed-in person never gets a guest's page."""
    from repository.records.takedown import take_down

    first = published(client, auth, title="Moraine survey one", keywords=["moraine"])
    url = "/search?q=moraine&sort=mostrecent"
    assert titles(text(client.get(url))) == titles(text(client.get(url))) == ["Moraine survey one"]
    second = published(client, auth, title="Moraine survey two", keywords=["moraine"])
    assert titles(text(client.get(url))) == ["Moraine survey two", "Moraine survey one"]
    api = "/api/deposit/depositions"
    assert client.post(f"{api}/{first['id']}/actions/edit", headers=auth).status_code == 201
    edited = client.put(f"{api}/{first['id']}", headers=auth,
                        json={"metadata": {**client.get(f"{api}/{first['id']}", headers=auth).json["metadata"],
                                           "title": "Moraine survey, revised"}})
    assert edited.status_code == 200, edited.json
    assert client.post(f"{api}/{first['id']}/actions/publish", headers=auth).status_code == 202
    assert titles(text(client.get(url))) == ["Moraine survey two", "Moraine survey, revised"]
    with app.extensions["repository"].db.write() as conn:
        take_down(conn, second["id"])
    assert titles(text(client.get(url))) == ["Moraine survey, revised"]
    person = https_client(app)
    sign_up_and_confirm(person, app, "reader@example.org", "a long passphrase 4 tests")
    sign_in(person, "reader@example.org", "a long passphrase 4 tests")
    signed_in = text(person.get(url))
    assert "reader@example.org" in signed_in and titles(signed_in) == ["Moraine survey, revised"]
