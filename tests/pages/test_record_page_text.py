"""The record page's text for people and for link previews (docs/researchers/record-page.md): descriptions as text,
relations in words, DOIs that may break between their parts, OpenGraph and Twitter cards, and the exports shown as
text or downloaded under a name with their extension."""

from __future__ import annotations

import html5lib
import pytest
from helpers.factories import published

import serializers
from repository.pages.record_words import RELATION_WORDS, relation_words
from repository.vocabularies.terms import RELATION_TYPES

DESCRIPTION = "<p>Collected in December 2023.</p><p>Columns:</p><ul><li>site</li><li>depth</li></ul>"


def _meta(html: str, attribute: str, name: str) -> str:
    tree = html5lib.parse(html, namespaceHTMLElements=False)
    found = [m.get("content") for m in tree.iter("meta") if m.get(attribute) == name]
    assert len(found) == 1, (name, found)
    return found[0]


@pytest.mark.slow  # 0.4 s and more of work
def test_descriptions_keep_their_breaks_in_the_head_and_json_ld(client, auth):
    dep = published(client, auth, description=DESCRIPTION, title="Soil moisture")
    html = client.get(f"/records/{dep['id']}").get_data(as_text=True)
    text = "Collected in December 2023.\n\nColumns:\n\n- site\n- depth"
    assert _meta(html, "name", "description") == text
    assert _meta(html, "property", "og:description") == text
    jsonld = client.get(f"/api/records/{dep['id']}", headers={"Accept": "application/ld+json"}).get_json()
    assert jsonld["description"] == text
    dc = client.get(f"/api/records/{dep['id']}?format=dc").get_data(as_text=True)
    assert "Collected in December 2023.\n\nColumns:" in dc


def test_link_preview_cards(client, auth):
    dep = published(client, auth, description="<p>Daily readings.</p>", title="Sea ice <2019>")
    html = client.get(f"/records/{dep['id']}").get_data(as_text=True)
    assert _meta(html, "property", "og:title") == "Sea ice <2019>"
    assert _meta(html, "property", "og:url") == f"https://localhost/records/{dep['id']}"
    assert _meta(html, "property", "og:type") == "website"
    assert _meta(html, "name", "twitter:card") == "summary"  # no image to show
    assert _meta(html, "name", "twitter:title") == "Sea ice <2019>"
    assert _meta(html, "name", "twitter:description") == "Daily readings."


def test_relations_in_words_and_dois_with_break_opportunities(client, auth):
    dep = published(client, auth, related_identifiers=[
        {"identifier": "10.1234/other.paper-2", "relation": "isSupplementTo", "scheme": "doi"},
        {"identifier": "https://example.org/code", "relation": "isDerivedFrom", "scheme": "url"}])
    html = client.get(f"/records/{dep['id']}").get_data(as_text=True)
    tree = html5lib.parse(html, namespaceHTMLElements=False)
    relations = [span.text for span in tree.iter("span") if span.get("class") == "relation"]
    assert relations[:2] == ["Is a supplement to", "Is derived from"]
    assert relations[2:] == ["Is a version of"]  # of the concept DOI, which every record has
    assert ">isSupplementTo<" not in html
    assert "10<wbr>.1234/<wbr>other<wbr>.paper<wbr>-2" in html
    prefix, suffix = dep["doi"].split("/")
    assert f"{prefix.replace('.', '<wbr>.')}/<wbr>{suffix.replace('.', '<wbr>.')}" in html


@pytest.mark.slow
@pytest.mark.parametrize(("name", "extension"), [
    ("bibtex", "bib"), ("marcxml", "xml"), ("datacite", "xml"), ("dc", "xml"), ("json", "json"), ("csl", "json"),
    ("citation", "txt"),
])  # fmt: skip
def test_exports_are_named_for_the_record_and_format(client, auth, name, extension):
    dep = published(client, auth)
    suffix = dep["doi"].split("/", 1)[1]
    response = client.get(f"/api/records/{dep['id']}?format={name}&download=1")
    assert response.status_code == 200
    disposition = response.headers["Content-Disposition"]
    assert disposition.startswith("attachment; ") and disposition.endswith(f'.{extension}"') and suffix in disposition
    assert client.get(f"/api/records/{dep['id']}?format={name}").headers["Content-Disposition"].startswith("inline;")
    # Clients that negotiate by Accept get what they always got.
    mimetype = serializers.REGISTRY[name].mimetype
    assert "Content-Disposition" not in client.get(f"/api/records/{dep['id']}", headers={"Accept": mimetype}).headers


def test_an_export_is_shown_as_text_with_its_download(client, auth):
    dep = published(client, auth, title="Tides & <currents>")
    html = client.get(f"/records/{dep['id']}").get_data(as_text=True)
    assert f'href="/records/{dep["id"]}/export/bibtex"' in html
    assert f'href="https://localhost/api/records/{dep["id"]}?format=bibtex&amp;download=1"' in html
    response = client.get(f"/records/{dep['id']}/export/bibtex")
    assert response.status_code == 200 and response.mimetype == "text/html"
    page = response.get_data(as_text=True)
    tree = html5lib.parse(page, namespaceHTMLElements=False)
    shown = next(p for p in tree.iter("pre") if p.get("class") == "export-text").text
    assert shown == client.get(f"/api/records/{dep['id']}?format=bibtex").get_data(as_text=True)
    assert "Tides &amp; &lt;currents&gt;" in page
    suffix = dep["doi"].split("/", 1)[1]
    assert f'download="{suffix}.bib"' in page


@pytest.mark.parametrize("path", ["/records/{id}/export/nosuch", "/records/999999/export/bibtex",
                                  "/records/{id}/export/croissant"])  # croissant: datasets only
def test_unknown_exports_are_404_pages(client, auth, path):
    dep = published(client, auth, upload_type="publication", publication_type="article")
    response = client.get(path.format(id=dep["id"]), headers={"Accept": "text/html"})
    assert response.status_code == 404 and response.mimetype == "text/html"


def test_every_accepted_relation_has_its_words():
    assert set(RELATION_TYPES) <= set(RELATION_WORDS)
    assert relation_words("isFancyNewOf") == "Is fancy new of"
