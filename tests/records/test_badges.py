"""DOI badges (`links.badge`, `links.conceptbadge`) as SVG, and no dead link in what records and communities hand
out."""

from urllib.parse import quote

import pytest
from helpers.factories import published
from lxml import etree

from scripts import takedown

BASE = "https://localhost"
SVG = "{http://www.w3.org/2000/svg}"


def local(url: str) -> str:
    assert url.startswith(BASE), url
    return url[len(BASE):]


def svg_text(data: bytes) -> list[str]:
    root = etree.fromstring(data)
    assert root.tag == f"{SVG}svg"
    return [e.text for e in root.iter(f"{SVG}text")]


def test_record_and_concept_badges(client, auth):
    dep = published(client, auth)
    record = client.get(f"/api/records/{dep['id']}").json
    for link, doi in (("badge", record["doi"]), ("conceptbadge", record["conceptdoi"])):
        assert record["links"][link] == f"{BASE}/badge/doi/{doi}.svg"
        response = client.get(local(record["links"][link]))
        assert response.status_code == 200, response.data
        assert response.mimetype == "image/svg+xml"
        assert svg_text(response.data) == ["DOI", doi]
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert "max-age" in response.headers["Cache-Control"]
        etag = response.headers["ETag"]
        again = client.get(local(record["links"][link]), headers={"If-None-Match": etag})
        assert again.status_code == 304 and again.headers["ETag"] == etag and not again.data
        # DOIs are case-insensitive: the upper-case form is the same badge.
        assert client.get(f"/badge/doi/{doi.upper()}.svg").headers["ETag"] == etag


@pytest.mark.slow
def test_an_external_doi_with_markup_is_escaped(client, auth):
    doi = '10.1234/a<b>&"c\'d'
    dep = published(client, auth, doi=doi)
    assert dep["doi"] == doi.lower()
    response = client.get(f"/badge/doi/{quote(doi)}.svg")
    assert response.status_code == 200
    assert svg_text(response.data) == ["DOI", doi.lower()]
    assert b"<b>" not in response.data


@pytest.mark.slow
@pytest.mark.parametrize("doi", ["10.5281/repository.99999", "10.9999/elsewhere", "not-a-doi", "10.5281/",
                                 "10.5281/repository." + "9" * 30, "x" * 3000])
def test_a_doi_this_repository_does_not_have_is_404(client, auth, doi):
    published(client, auth)
    response = client.get(f"/badge/doi/{quote(doi)}.svg")
    assert response.status_code == 404 and response.json["status"] == 404


def test_a_taken_down_record_has_no_badge(client, auth, settings):
    dep = published(client, auth)
    assert takedown.main(["--recid", str(dep["id"])], settings) == 0
    assert client.get(f"/badge/doi/{dep['doi']}.svg").status_code == 410
    assert client.get(f"/badge/doi/{dep['doi'].rsplit('.', 1)[0]}.{dep['conceptrecid']}.svg").status_code == 410


@pytest.mark.slow  # 0.4 s and more of work
def test_no_link_a_record_or_community_hands_out_is_dead(client, auth):
    assert client.post("/api/communities", json={"identifier": "lab", "title": "Lab"}, headers=auth).status_code == 201
    dep = published(client, auth, communities=[{"identifier": "lab"}])
    record = client.get(f"/api/records/{dep['id']}").json
    community = client.get("/api/communities/lab").json
    links = {**{f"record.{k}": v for k, v in record["links"].items() if isinstance(v, str)},
             **{f"community.{k}": v for k, v in community["links"].items()}}  # fmt: skip
    for name, url in links.items():
        if not url.startswith(BASE):
            continue  # doi.org
        response = client.get(local(url))
        assert response.status_code in (200, 301, 302), (name, url, response.status_code)
