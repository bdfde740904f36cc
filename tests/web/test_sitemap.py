"""`/sitemap.xml` (a sitemap index), its files and `/robots.txt`, read the way crawlers read them: every document
valid against the official sitemaps.org schemas (tests/schemas/sitemaps), the robots rules through an RFC 9309
robots.txt parser (Scrapy's Protego)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.factories import make_deposit, published
from lxml import etree
from protego import Protego

from repository.records.takedown import take_down

BASE = "https://localhost"
NS = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
SCHEMAS = Path(__file__).resolve().parent.parent / "schemas" / "sitemaps"
PER_FILE = 3


@pytest.fixture
def settings(make_settings):  # type: ignore[no-untyped-def]
    """Three ids per sitemap file, so a few records fill several."""
    return make_settings(SITEMAP_SIZE=PER_FILE)


def valid(body: bytes, schema: str) -> etree._Element:
    tree = etree.fromstring(body)
    xsd = etree.XMLSchema(etree.parse(str(SCHEMAS / schema)))
    assert xsd.validate(tree), xsd.error_log
    return tree


def entries(tree: etree._Element, tag: str) -> list[tuple[str, str | None]]:
    return [(e.findtext("s:loc", namespaces=NS), e.findtext("s:lastmod", namespaces=NS))
            for e in tree.iterfind(f"s:{tag}", namespaces=NS)]


def local(url: str) -> str:
    assert url.startswith(BASE), url
    return url[len(BASE):]


def read_sitemaps(client) -> tuple[list[tuple[str, str | None]], dict[str, list[tuple[str, str | None]]]]:  # type: ignore[no-untyped-def]
    """The index's entries, and each file's URLs (every document checked against its schema)."""
    index = client.get("/sitemap.xml")
    assert index.status_code == 200 and index.headers["Content-Type"] == "application/xml; charset=utf-8"
    listed = entries(valid(index.data, "siteindex.xsd"), "sitemap")
    files = {}
    for loc, _ in listed:
        answer = client.get(local(loc))
        assert answer.status_code == 200 and answer.headers["Content-Type"].startswith("application/xml")
        files[loc] = entries(valid(answer.data, "sitemap.xsd"), "url")
        assert 0 < len(files[loc]) <= PER_FILE
    return listed, files


@pytest.mark.slow
def test_every_published_version_is_listed_once_with_its_last_change(client, auth):
    first = published(client, auth, title="First")
    more = [published(client, auth, title=f"Record {n}")["id"] for n in range(4)]
    draft = client.post(f"/api/deposit/depositions/{first['id']}/actions/newversion", headers=auth)
    draft_id = int(draft.json["links"]["latest_draft"].rsplit("/", 1)[1])
    make_deposit(client, auth)  # an unpublished draft: never listed
    recids = [first["id"], *more]
    records = {recid: client.get(f"/api/records/{recid}").json for recid in recids}

    listed, files = read_sitemaps(client)
    record_files = {loc: urls for loc, urls in files.items() if "/sitemap-communities-" not in loc}
    urls = [url for found in record_files.values() for url in found]
    assert sorted(urls) == sorted((f"{BASE}/records/{r}", records[r]["updated"]) for r in recids)
    assert f"{BASE}/records/{draft_id}" not in dict(urls)
    for loc, lastmod in listed:  # each file's date in the index: its newest record's
        if loc in record_files:
            assert lastmod == max(m for _, m in record_files[loc])
            number = int(loc.rsplit("-", 1)[1].removesuffix(".xml"))
            assert all(int(url.rsplit("/", 1)[1]) // PER_FILE == number for url, _ in record_files[loc])
    assert len(record_files) == len({r // PER_FILE for r in recids})


def test_a_taken_down_record_leaves_its_sitemap(app, client, auth):
    kept, gone = (published(client, auth, title=title)["id"] for title in ("Kept", "Gone"))
    with app.extensions["repository"].db.write() as conn:
        take_down(conn, gone)
    _, files = read_sitemaps(client)
    urls = {url for found in files.values() for url, _ in found}
    assert f"{BASE}/records/{kept}" in urls and f"{BASE}/records/{gone}" not in urls
    if gone // PER_FILE != kept // PER_FILE:  # its file is empty now: gone from the index too
        assert client.get(f"/sitemap-{gone // PER_FILE}.xml").status_code == 404


def test_front_page_and_communities(client, auth):
    for name in ("alpha", "beta", "gamma", "delta"):
        assert client.post("/api/communities", json={"identifier": name, "title": name.title()},
                           headers=auth).status_code == 201
    listed, files = read_sitemaps(client)
    communities = [loc for loc, _ in listed if "/sitemap-communities-" in loc]
    assert communities == [f"{BASE}/sitemap-communities-{n}.xml" for n in range(2)]  # 2 pages + 4 over 3 a file
    pages = [url for loc in communities for url, _ in files[loc]]
    assert pages == [f"{BASE}/", f"{BASE}/communities/"] + [
        f"{BASE}/communities/{name}/" for name in ("alpha", "beta", "delta", "gamma")]
    assert client.get("/sitemap-communities-2.xml").status_code == 404


def test_an_empty_repository_still_has_a_valid_index(client):
    listed, files = read_sitemaps(client)
    assert [loc for loc, _ in listed] == [f"{BASE}/sitemap-communities-0.xml"]
    assert [url for url, _ in files[listed[0][0]]] == [f"{BASE}/", f"{BASE}/communities/"]
    for missing in ("/sitemap-0.xml", "/sitemap-99999999.xml", "/sitemap-communities-1.xml", "/sitemap-2147483647.xml"):
        answer = client.get(missing)
        assert answer.status_code == 404 and answer.headers["Content-Type"].startswith("text/html")
    # Past what an id range can hold: no route at all (never an integer overflow in the database).
    for beyond in ("/sitemap-99999999999999999999999.xml", "/sitemap-communities-99999999999999999999999.xml",
                   "/sitemap--1.xml"):
        assert client.get(beyond).status_code == 404


def test_robots_txt(client):
    answer = client.get("/robots.txt")
    assert answer.status_code == 200 and answer.headers["Content-Type"] == "text/plain; charset=utf-8"
    robots = Protego.parse(answer.data.decode())
    assert list(robots.sitemaps) == [f"{BASE}/sitemap.xml"]
    for allowed in ("/", "/records/12", "/communities/", "/communities/lab/", "/sitemap.xml", "/oai2d",
                    "/api/records/12", "/api/records/12?format=linkset", "/api/files/b/data.csv"):
        assert robots.can_fetch(BASE + allowed, "AnyBot"), allowed
    for disallowed in ("/search", "/search?q=water", "/api/records/", "/api/records/?q=water", "/api/records",
                       "/api/records?q=water&page=2", "/deposit", "/deposit/new", "/account/settings/", "/login/",
                       "/api/deposit/depositions"):
        assert not robots.can_fetch(BASE + disallowed, "AnyBot"), disallowed
