"""Content pages (docs/operators/branding-and-pages.md#content-pages): written in Markdown by an administrator on
the web or through the API, served at /pages/<slug>, linked in the footer and the sitemap; whatever the text holds,
the page runs no script: raw HTML, event handlers, `javascript:` links and frames are rendered inert."""

from __future__ import annotations

import re

import pytest
from helpers.http import https_client
from helpers.pages import post_form
from lxml import html as lxml_html

from repository.accounts import audit


def _save(client, slug: str, title: str, body: str, **extra: str):  # type: ignore[no-untyped-def]
    return post_form(client, f"/admin/pages/{slug}", {"title": title, "body": body, "in_footer": "on", **extra})


def _article(client, slug: str):  # type: ignore[no-untyped-def]
    answer = client.get(f"/pages/{slug}")
    assert answer.status_code == 200
    return lxml_html.fromstring(answer.get_data(as_text=True)).xpath("//article")[0]


def test_an_admin_writes_the_about_page_which_the_footer_and_sitemap_link(app, client, root):
    assert client.get("/pages/about").status_code == 404
    listing = client.get("/admin/pages/").get_data(as_text=True)
    assert "Write the About page" in listing and "Write the Terms of use page" in listing
    editor = client.get("/admin/pages/about").get_data(as_text=True)
    assert 'value="About"' in editor
    answer = _save(client, "about", "About us", "# Who we are\n\nThe **university** repository.\n\n| a | b |\n|---|---|\n| 1 | 2 |")
    assert answer.status_code == 303 and answer.headers["Location"].endswith("/admin/pages/about")
    article = _article(client, "about")
    assert article.xpath("string(h1)") == "About us"
    assert article.xpath("string(h2)") == "Who we are"  # the title is the one h1
    assert article.xpath("string(.//strong)") == "university" and article.xpath("count(.//table//td)") == 2
    guest = https_client(app)
    front = guest.get("/").get_data(as_text=True)
    assert re.search(r'<nav aria-label="About this site">.*href="/pages/about">About us</a>', front, re.S)
    index = guest.get("/sitemap.xml").get_data(as_text=True)
    assert "https://localhost/sitemap-pages.xml" in index or "/sitemap-pages.xml" in index
    assert "/pages/about</loc>" in guest.get("/sitemap-pages.xml").get_data(as_text=True)
    _save(client, "about", "About us", "Version two.")
    with app.extensions["repository"].db.read() as conn:
        entries, _ = audit.search(conn, target="page:about")
    assert [e["action"] for e in entries] == ["page.edit", "page.create"]
    assert entries[0]["detail"]["version"] == 2
    assert entries[0]["detail"]["body"]["after"] == "Version two."
    assert "university" in entries[0]["detail"]["body"]["before"]


MALICIOUS = {
    "script": "Hello <script>alert('x')</script> world",
    "event handler": '<img src="x.png" onerror="alert(1)"> and <a href="https://example.org" onclick="alert(1)">x</a>',
    "markdown javascript link": "[click me](javascript:alert(1)) and ![pic](javascript:alert(2))",
    "encoded javascript link": "[click me](JaVaScRiPt&#58;alert(1)) [two](&#x6A;avascript:alert(1))",
    "iframe": '<iframe src="https://evil.example/"></iframe> and <object data="x.swf"></object>',
    "data link": "[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
}


@pytest.mark.parametrize("what", list(MALICIOUS))
def test_markdown_that_would_run_code_is_rendered_inert(app, client, root, what):
    assert _save(client, "help", "Help", MALICIOUS[what]).status_code == 303
    article = _article(client, "help")
    assert article.xpath(".//script | .//iframe | .//object | .//embed") == []
    for element in article.iter():
        for name, value in element.attrib.items():
            assert not name.startswith("on"), (name, value)
            assert not re.match(r"\s*(javascript|data|vbscript):", value, re.I), (name, value)
    # Raw HTML is shown as the text it is, never as markup.
    if what in ("script", "iframe"):
        assert "<script>" in article.text_content() or "<iframe" in article.text_content()


def test_bad_pages_are_refused_with_the_form_again(app, client, root):
    answer = _save(client, "privacy", "", "text")
    assert answer.status_code == 400 and "Give the page a title" in answer.get_data(as_text=True)
    assert 'name="body"' in answer.get_data(as_text=True)
    assert client.get("/pages/privacy").status_code == 404
    bad_slug = client.get("/admin/pages/?slug=Not+A+Slug", follow_redirects=False)
    assert bad_slug.status_code == 200 and "lower-case letters" in bad_slug.get_data(as_text=True)
    assert client.get("/admin/pages/?slug=data-policy").headers["Location"].endswith("/admin/pages/data-policy")


def test_the_api_writes_reads_and_deletes_pages(app, client, root):
    put = client.put("/api/admin/site/pages/contact", json={"title": "Contact", "body": "Mail us.", "position": 3},
                     headers=root)
    assert put.status_code == 200, put.get_json()
    assert put.get_json()["version"] == 1 and put.get_json()["links"]["html"].endswith("/pages/contact")
    assert client.get("/api/admin/site/pages", headers=root).get_json()["hits"][0]["slug"] == "contact"
    bad = client.put("/api/admin/site/pages/Bad_Slug", json={"title": "x", "body": "y"}, headers=root)
    assert bad.status_code == 400 and bad.get_json()["errors"][0]["field"] == "slug"
    bad = client.put("/api/admin/site/pages/x", json={"title": ["x"], "body": 3, "position": "z"}, headers=root)
    assert bad.status_code == 400 and {e["field"] for e in bad.get_json()["errors"]} == {"title", "body", "position"}
    assert client.put("/api/admin/site/pages/x", json=[1], headers=root).status_code == 400
    assert client.delete("/api/admin/site/pages/contact", headers=root).status_code == 204
    assert client.get("/pages/contact").status_code == 404
    assert client.delete("/api/admin/site/pages/contact", headers=root).status_code == 404


def test_non_admins_cannot_write_pages(app, client):
    guest = https_client(app)
    assert guest.put("/api/admin/site/pages/about", json={"title": "x", "body": "y"}).status_code == 401
    assert guest.get("/admin/pages/").status_code in (302, 303)
