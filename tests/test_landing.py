"""The HTML behind links.html: a landing page with citation tags and schema.org JSON-LD."""

import json
import re

from factories import published


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


def test_deposit_page_points_at_the_api(client, auth):
    dep = client.post("/api/deposit/depositions", json={}, headers=auth).json
    response = client.get(dep["links"]["html"].replace("https://localhost", ""))
    assert response.status_code == 303 and response.headers["Location"] == dep["links"]["self"]
