"""FAIR Signposting levels 1 and 2 (https://signposting.org/FAIR/), driven over HTTP: the landing page's `Link`
header, the headers of the files and of every metadata format, and the linkset in both forms (RFC 9264), read with
a real Link header parser (httplink's, RFC 8288) and a FAIR Signposting client (the `signposting` package)."""

from __future__ import annotations

from urllib.parse import quote

import orjson
import pytest
from helpers.factories import make_deposit, publish, upload
from helpers.http import download
from httplink import parse_link_header
from signposting import find_signposting_http_link

from repository.web.signposting import HEADER_BUDGET
from serializers import metadata_formats

BASE = "https://localhost"
ORCID = "0000-0002-1694-233X"
CREATORS = [{"name": "Doe, Jane", "orcid": ORCID}, {"name": "Roe, Rita", "affiliation": "CERN"}]
FILES = (("data.csv", b"a,b\n1,2\n", "text/csv"), ("notes.txt", b"notes\n", "text/plain"))
RESTRICTED = {"access_right": "restricted", "access_conditions": "<p>Researchers only.</p>"}


def links(header: str) -> list[dict[str, str]]:
    """The links of a Link header (or a linkset as text): `url` and the attributes (`rel`, `type`, `anchor`)."""
    return [{"url": link.target, **dict(link.attributes)} for link in parse_link_header(header).links]


def by_rel(header: str) -> dict[str, list[dict[str, str]]]:
    found: dict[str, list[dict[str, str]]] = {}
    for link in links(header):
        found.setdefault(link["rel"], []).append(link)
    return found


def local(url: str) -> str:
    assert url.startswith(BASE), url
    return url[len(BASE):]


def publish_with_files(client, auth, files=FILES, **metadata) -> dict:  # type: ignore[no-untyped-def]
    dep = make_deposit(client, auth, creators=CREATORS, license="cc-by-4.0", **metadata)
    for name, content, _ in files:
        upload(client, auth, dep, name=name, content=content)
    return publish(client, auth, dep)


@pytest.fixture
def record(client, auth) -> dict:  # type: ignore[no-untyped-def]
    recid = publish_with_files(client, auth)["id"]
    return client.get(f"/api/records/{recid}").json


@pytest.mark.slow  # 0.4 s and more of work
def test_landing_page_links_every_relation_of_level_1(client, record):
    page = client.get(f"/records/{record['id']}")
    assert page.status_code == 200
    rels = by_rel(page.headers["Link"])
    assert set(rels) == {"cite-as", "describedby", "item", "license", "author", "type", "linkset"}
    assert [link["url"] for link in rels["cite-as"]] == [f"https://doi.org/{record['doi']}"]
    api = f"{BASE}/api/records/{record['id']}"
    assert [(link["url"], link["type"], link.get("profile", "")) for link in rels["describedby"]] == [
        (f"{api}?format={name}", media_type, profile) for name, media_type, profile in metadata_formats(record)]
    profiles = {link["url"].rsplit("=", 1)[1]: link.get("profile") for link in rels["describedby"]}
    assert profiles["datacite"] == "http://datacite.org/schema/kernel-4"  # its media type is the service's own
    assert profiles["jsonld"] == "https://schema.org/" and profiles["bibtex"] is None
    files = {f["key"]: f["links"]["self"] for f in record["files"]}
    assert [(link["url"], link["type"]) for link in rels["item"]] == [
        (files[name], media_type) for name, _, media_type in FILES]
    assert len(rels["license"]) == 1  # its URL: test_license_link_is_the_vocabularys_url
    assert [link["url"] for link in rels["author"]] == [f"https://orcid.org/{ORCID}"]  # Roe has no ORCID
    assert [link["url"] for link in rels["type"]] == ["https://schema.org/Dataset", "https://schema.org/AboutPage"]
    assert {(link["url"], link["type"]) for link in rels["linkset"]} == {
        (f"{api}?format=linkset", "application/linkset+json"), (f"{api}?format=linkset-text", "application/linkset")}
    # What a FAIR Signposting client finds there.
    found = find_signposting_http_link([page.headers["Link"]])
    assert found.citeAs is not None and found.citeAs.target == f"https://doi.org/{record['doi']}"
    assert {s.target for s in found.items} == set(files.values())
    assert {s.type for s in found.describedBy} == {media_type for _, media_type, _ in metadata_formats(record)}
    assert {p for s in found.describedBy for p in s.profiles} == {p for _, _, p in metadata_formats(record) if p}
    assert {s.target for s in found.authors} == {f"https://orcid.org/{ORCID}"}
    assert found.license is not None and {s.target for s in found.types} == {
        "https://schema.org/Dataset", "https://schema.org/AboutPage"}
    assert {s.type for s in found.linksets} == {"application/linkset+json", "application/linkset"}


def test_license_link_is_the_vocabularys_url(client, record):
    license_id = record["metadata"]["license"]["id"]
    known = client.get(f"/api/licenses/{license_id}").json
    url = known.get("metadata", known).get("url") or known.get("url")
    rels = by_rel(client.get(f"/records/{record['id']}").headers["Link"])
    assert [link["url"] for link in rels["license"]] == [url]


def test_every_linked_resource_answers_and_links_back(client, record):
    """Metadata resources link back with `describes`, files with `collection`, both to the linkset; each answers
    in the media type it was linked with."""
    landing = f"{BASE}/records/{record['id']}"
    header = client.get(local(landing)).headers["Link"]
    rels = by_rel(header)
    for link in rels["describedby"]:
        answer = client.get(local(link["url"]))
        assert answer.status_code == 200, link
        served = answer.headers["Content-Type"].split(";")[0]
        assert served == link["type"] or (link["type"].endswith("v1+json") and served == "application/json")
        back = by_rel(answer.headers["Link"])
        assert [(b["url"], b["type"]) for b in back["describes"]] == [(landing, "text/html")]
        assert {b["type"] for b in back["linkset"]} == {"application/linkset+json", "application/linkset"}
    for link in rels["item"]:
        answer = download(client, local(link["url"]))
        assert answer.status_code == 200
        back = by_rel(answer.headers["Link"])
        assert [(b["url"], b["type"]) for b in back["collection"]] == [(landing, "text/html")]
        assert [b["url"] for b in back["linkset"]] == [link["url"] for link in rels["linkset"]]
    for link in rels["linkset"]:
        answer = client.get(local(link["url"]))
        assert answer.status_code == 200 and answer.headers["Content-Type"] == link["type"]
        assert "describes" not in by_rel(answer.headers["Link"])  # a linkset is no metadata resource


def _linkset_triples(body: dict) -> set[tuple[str, str, str, str]]:
    return {(obj["anchor"], rel, target["href"], target.get("type", ""))
            for obj in body["linkset"] for rel, targets in obj.items() if rel != "anchor" for target in targets}


def test_linkset_json_holds_every_link_context_of_level_2(client, record):
    api = f"/api/records/{record['id']}"
    landing = f"{BASE}/records/{record['id']}"
    answer = client.get(api, headers={"Accept": "application/linkset+json"})
    assert answer.status_code == 200 and answer.headers["Content-Type"] == "application/linkset+json"
    body = orjson.loads(answer.data)
    assert list(body) == ["linkset"]
    anchors = [obj["anchor"] for obj in body["linkset"]]
    files = [f["links"]["self"] for f in record["files"]]
    formats = [f"{BASE}{api}?format={name}" for name, _, _ in metadata_formats(record)]
    assert anchors == [landing, *files, *formats]
    for obj in body["linkset"]:
        for rel, targets in obj.items():
            if rel != "anchor":
                assert isinstance(targets, list) and all(isinstance(t["href"], str) for t in targets), rel
    landing_obj = body["linkset"][0]
    assert set(landing_obj) == {"anchor", "cite-as", "describedby", "item", "license", "author", "type"}
    # The landing page's header and the linkset's landing page object hold the same links.
    header = {(link["rel"], link["url"], link.get("type", ""))
              for link in links(client.get(f"/records/{record['id']}").headers["Link"]) if link["rel"] != "linkset"}
    assert {(rel, href, kind) for anchor, rel, href, kind in _linkset_triples(body) if anchor == landing} == header
    for obj in body["linkset"][1:1 + len(files)]:
        assert set(obj) == {"anchor", "collection"} and obj["collection"] == [{"href": landing, "type": "text/html"}]
    for obj in body["linkset"][1 + len(files):]:
        assert set(obj) == {"anchor", "describes"} and obj["describes"] == [{"href": landing, "type": "text/html"}]
    # The same linkset as text (RFC 9264 §4.1): every link carries its anchor.
    text = client.get(api, headers={"Accept": "application/linkset"})
    assert text.headers["Content-Type"] == "application/linkset"
    parsed = links(text.data.decode())
    assert {(link["anchor"], link["rel"], link["url"], link.get("type", "")) for link in parsed} == \
        _linkset_triples(body)


def test_restricted_files_are_no_items_to_those_who_cannot_read_them(client, auth):
    recid = publish_with_files(client, auth, **RESTRICTED)["id"]
    page = client.get(f"/records/{recid}")
    assert page.status_code == 200
    rels = by_rel(page.headers["Link"])
    assert "item" not in rels and {"cite-as", "describedby", "linkset"} <= set(rels)
    anonymous = orjson.loads(client.get(f"/api/records/{recid}?format=linkset").data)
    assert all("item" not in obj for obj in anonymous["linkset"])
    assert all("collection" not in obj for obj in anonymous["linkset"])
    owner = orjson.loads(client.get(f"/api/records/{recid}?format=linkset", headers=auth).data)
    items = owner["linkset"][0]["item"]
    assert [i["type"] for i in items] == ["text/csv", "text/plain"]
    # The files themselves stay hidden (404), with no links.
    hidden = download(client, local(items[0]["href"]))
    assert hidden.status_code == 404 and "Link" not in hidden.headers
    assert "rel=\"collection\"" in download(client, local(items[0]["href"]), headers=auth).headers["Link"]


@pytest.mark.slow
def test_a_draft_file_has_no_signposting(client, auth):
    dep = make_deposit(client, auth)
    upload(client, auth, dep, name="draft.csv")
    bucket = dep["links"]["bucket"]
    answer = download(client, local(f"{bucket}/draft.csv"), headers=auth)
    assert answer.status_code == 200 and "Link" not in answer.headers


@pytest.mark.slow
def test_many_files_leave_the_items_to_the_linkset(client, auth):
    """Past the header budget the landing page leaves out every `item` (none half listed); the linkset keeps
    them all."""
    names = [f"{'measurement-series-' * 5}{n:03d}.txt" for n in range(24)]
    recid = publish_with_files(client, auth, files=[(name, name.encode(), "text/plain") for name in names])["id"]
    header = client.get(f"/records/{recid}").headers["Link"]
    assert len(header) <= HEADER_BUDGET
    rels = by_rel(header)
    assert "item" not in rels and "author" in rels and "linkset" in rels
    linkset = orjson.loads(client.get(f"/api/records/{recid}?format=linkset").data)["linkset"]
    assert [i["href"].rsplit("/", 1)[1] for i in linkset[0]["item"]] == [quote(name) for name in names]


def test_a_search_page_as_a_linkset(client, record):
    answer = client.get("/api/records/", query_string={"q": f"recid:{record['id']}", "format": "linkset"})
    assert answer.status_code == 200 and answer.headers["Content-Type"] == "application/linkset+json"
    anchors = [obj["anchor"] for obj in orjson.loads(answer.data)["linkset"]]
    assert anchors[0] == f"{BASE}/records/{record['id']}"
