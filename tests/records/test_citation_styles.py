"""Citation styles and locales come from the installed lists: any other name, however odd, is a 400 error object."""

import pytest
from helpers.factories import published
from helpers.http import https_client


@pytest.fixture
def client(module_client):  # type: ignore[no-untyped-def]
    """Every test here only reads: all of them ask the module's shared app."""
    return module_client


@pytest.fixture(scope="module")
def record(module_app, module_auth):
    """Built once: every test here only reads it."""
    return published(https_client(module_app), module_auth)


@pytest.mark.parametrize("style", [
    "a" * 300, "x" * 5000, "../styles/apa", "dependent/../apa", "apa\x00", "/etc/passwd", ".", "", " apa",
    "styles/apa", "%2e%2e%2fapa", "apa.csl",
])  # fmt: skip
def test_an_unknown_style_is_a_400_on_a_record_and_a_page(client, record, style):
    for url in (f"/api/records/{record['id']}", "/api/records/"):
        response = client.get(url, query_string={"format": "citation", "style": style})
        if style == "":
            assert response.status_code == 200  # no style: the default one
            continue
        assert response.status_code == 400, (style, response.status_code)
        assert response.json["status"] == 400
        assert response.json["errors"][0]["field"] == "style"


@pytest.mark.parametrize("locale", ["e" * 300, "../locales/locales-en-US", "en-US\x00", "xx-XX"])
def test_an_unknown_locale_is_a_400(client, record, locale):
    response = client.get(f"/api/records/{record['id']}", query_string={"format": "citation", "locale": locale})
    assert response.status_code == 400, response.status_code
    assert response.json["errors"][0]["field"] == "locale"


def test_installed_styles_still_work(client, record):
    url = f"/api/records/{record['id']}"
    for style in ("apa", "ieee", "chicago-author-date", "nature"):  # nature: a dependent style in some versions
        response = client.get(url, query_string={"format": "citation", "style": style})
        assert response.status_code == 200, (style, response.json)
        assert "Doe" in response.data.decode()


def test_a_note_style_gives_the_note(client, record):
    style = "chicago-notes-publisher-place-label-page-archive-place-first-no-url"  # no <bibliography>
    for url in (f"/api/records/{record['id']}", "/api/records/"):
        response = client.get(url, query_string={"format": "citation", "style": style})
        assert response.status_code == 200, response.json
        assert "Doe" in response.data.decode()


@pytest.mark.parametrize("style", ["revista-da-sociedade-brasileira-de-medicina-tropical", "transversalites",
                                   "neue-juristische-wochenschrift"])
def test_a_style_the_library_cannot_render_is_an_error_object(client, record, style):
    """Installed styles citeproc-py fails on (features it lacks) give a 400 naming the style, never a 500."""
    response = client.get(f"/api/records/{record['id']}", query_string={"format": "citation", "style": style})
    assert response.status_code in (200, 400), response.status_code
    if response.status_code == 400:
        assert response.json["errors"][0]["field"] == "style" and style in response.json["message"]


def test_a_search_page_cites_each_record_as_its_own_citation_does(client, module_app, module_auth):
    """Two records of the same authors and year: on a page each line is the record's own citation, whatever else the
    page lists (a page is not one bibliography: no numbers, year suffixes or substituted authors across unrelated records)."""
    http = https_client(module_app)
    made = [published(http, module_auth, title=f"Zyzzogeton survey {n}", publication_date="2024-05-01")
            for n in (1, 2)]
    for style in ("apa", "chicago-author-date", "ieee"):
        page = client.get("/api/records/", query_string={"q": "Zyzzogeton", "format": "citation", "style": style,
                                                         "sort": "mostrecent"})
        assert page.status_code == 200, page.json
        own = {client.get(f"/api/records/{r['id']}", query_string={"format": "citation", "style": style}).data.decode()
               for r in made}
        assert set(page.data.decode().split("\n")) == own, style  # ieee numbered a page's lines [1], [2]...
