"""The HTML behind links.html: a landing page with citation tags and schema.org JSON-LD (the page as a whole:
tests/pages/test_record_page.py)."""

import json
import re

import pytest
from helpers.factories import published


def test_landing_page(client, auth):
    dep = published(client, auth, title="A </script> title & more")
    page = client.get(f"/records/{dep['id']}")
    assert page.status_code == 200 and page.mimetype == "text/html"
    html = page.data.decode()
    assert "A &lt;/script&gt; title &amp; more" in html
    assert f'<meta name="citation_doi" content="{dep["doi"]}">' in html
    script = re.search(r'<script type="application/ld\+json">(.*?)</script>', html, re.S).group(1)
    data = json.loads(script)
    assert data["name"] == "A </script> title & more"
    assert "data.csv" in html
    concept = client.get(f"/records/{dep['conceptrecid']}")
    assert concept.status_code == 301 and concept.headers["Location"].endswith(f"/records/{dep['id']}")
    assert client.get("/records/99999").status_code == 404


NASTY = "<!--<script> x \u2028 </script><p>&amp; -->"


@pytest.mark.slow  # 0.4 s and more of work
def test_json_ld_cannot_break_out_of_its_script_element(client, auth):
    """An HTML5 parser sees the whole page: `<!--<script>` in a title would otherwise put the parser in the
    "script data double escaped" state and swallow the rest of the document."""
    import html5lib

    title = "A <!--<script> title \u2028 & more"
    dep = published(client, auth, title=title, keywords=[NASTY, "</SCRIPT >"],
                    creators=[{"name": "O'Neil, <!--<script>"}], description=f"<p>{NASTY}</p>")  # fmt: skip
    html = client.get(f"/records/{dep['id']}").data.decode()
    script = re.search(r'<script type="application/ld\+json">(.*?)</script>', html, re.S).group(1)
    assert not set(script) & {"<", ">", "&"}
    tree = html5lib.parse(html, namespaceHTMLElements=False)
    scripts = [s for s in tree.findall(".//script") if s.get("type") == "application/ld+json"]
    assert len(scripts) == 1 and json.loads(scripts[0].text)["name"] == title
    assert all(s.get("src") for s in tree.findall(".//script") if s not in scripts)  # the page's own, as files
    assert json.loads(scripts[0].text)["keywords"][0] == NASTY
    assert tree.find(".//h1").text == title  # the body is still there
    assert "Files" in [h2.text for h2 in tree.findall(".//h2")]
