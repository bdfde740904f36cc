"""What a record shows of its siblings (the latest version, the version count, concept-wide counts, community
acceptance) is current on every read, in every format and in OAI-PMH, and `links.latest`/`links.latest_html`
redirect to the newest version whenever they are followed."""

from datetime import timedelta

import pytest
from helpers.factories import publish, published, upload
from helpers.http import download
from lxml import etree

from repository.timeutil import utcnow

API = "/api/deposit/depositions"
BASE = "https://localhost"
DATACITE = "{http://datacite.org/schema/kernel-4}"
OAI = "{http://www.openarchives.org/OAI/2.0/}"


def new_version(client, auth, dep: dict, content: bytes, **metadata) -> int:  # type: ignore[no-untyped-def]
    """Publish a new version of `dep` with one different file (and metadata changes); its id."""
    draft = client.post(f"{API}/{dep['id']}/actions/newversion", headers=auth).json["links"]["latest_draft"]
    draft_id = int(draft.rsplit("/", 1)[1])
    files = client.get(f"{API}/{draft_id}/files", headers=auth).json
    client.delete(f"{API}/{draft_id}/files/{files[0]['id']}", headers=auth)
    upload(client, auth, {"id": draft_id}, content=content)
    if metadata:
        current = client.get(f"{API}/{draft_id}", headers=auth).json["metadata"]
        response = client.put(f"{API}/{draft_id}", json={"metadata": {**current, **metadata}}, headers=auth)
        assert response.status_code == 200, response.json
    publish(client, auth, {"id": draft_id})
    return draft_id


def local(url: str) -> str:
    assert url.startswith(BASE), url
    return url[len(BASE):]


@pytest.mark.slow
def test_latest_links_redirect_to_the_newest_version(client, auth):
    first = published(client, auth, title="Versioned")
    record = client.get(f"/api/records/{first['id']}").json
    assert record["links"]["latest"] == f"{BASE}/api/records/{first['id']}/versions/latest"
    assert record["links"]["latest_html"] == f"{BASE}/records/{first['id']}/latest"
    followed = client.get(local(record["links"]["latest"]))
    assert followed.status_code == 302 and followed.headers["Location"] == f"{BASE}/api/records/{first['id']}"
    second = new_version(client, auth, first, b"v2")
    # A link handed out before the new version still leads to the newest one, for the API and for people.
    followed = client.get(local(record["links"]["latest"]))
    assert followed.status_code == 302 and followed.headers["Location"] == f"{BASE}/api/records/{second}"
    assert client.get(local(followed.headers["Location"])).json["id"] == second
    page = client.get(local(record["links"]["latest_html"]))
    assert page.status_code == 302 and page.headers["Location"] == f"{BASE}/records/{second}"
    assert client.get(local(page.headers["Location"])).status_code == 200
    # From the concept id too; unknown ids are 404 error objects.
    concept = client.get(f"/api/records/{first['conceptrecid']}/versions/latest")
    assert concept.status_code == 302 and concept.headers["Location"] == f"{BASE}/api/records/{second}"
    assert client.get(f"/records/{first['conceptrecid']}/latest").headers["Location"] == f"{BASE}/records/{second}"
    missing = client.get("/api/records/99999/versions/latest")
    assert missing.status_code == 404 and missing.json["status"] == 404
    assert client.get("/records/99999/latest").status_code == 404


@pytest.mark.slow  # 0.4 s and more of work
def test_an_older_version_read_before_a_new_one_shows_it_after(client, auth):
    """Read version 1 (every cache and stored copy warm), publish version 2, read version 1 again."""
    first = published(client, auth, title="Versioned")
    url = f"/api/records/{first['id']}"
    before = client.get(url)
    assert before.json["metadata"]["relations"]["version"][0]["count"] == 1
    for how in ({"format": "json"}, {"format": "jsonld"}, {"format": "datacite"}):
        assert client.get(url, query_string=how).status_code == 200
    second = new_version(client, auth, first, b"v2")
    after = client.get(url).json
    assert after["links"]["latest"] == f"{BASE}/api/records/{second}/versions/latest"
    assert after["links"]["latest_html"] == f"{BASE}/records/{second}/latest"
    version = after["metadata"]["relations"]["version"][0]
    assert (version["count"], version["is_last"], version["last_child"]["pid_value"]) == (2, False, str(second))
    assert client.get(url, query_string={"format": "json"}).json["links"]["latest"] == after["links"]["latest"]
    # A client revalidating its copy gets the new one, not a 304.
    revalidated = client.get(url, headers={"If-None-Match": before.headers["ETag"]})
    assert revalidated.status_code == 200 and revalidated.headers["ETag"] != before.headers["ETag"]
    listed = client.get(f"{url}/versions").json["hits"]["hits"]
    assert [(h["id"], h["links"]["latest"]) for h in listed] == [
        (second, f"{BASE}/api/records/{second}/versions/latest"),
        (first["id"], f"{BASE}/api/records/{second}/versions/latest"),
    ]


def test_concept_counts_are_current_on_every_read(app, client, auth):
    first = published(client, auth, title="Counted")
    second = new_version(client, auth, first, b"v2")
    url = f"/api/records/{first['id']}"
    assert client.get(url).json["stats"]["downloads"] == 0
    newest = client.get(f"/api/records/{second}").json["files"][0]["links"]["self"]
    download(client, newest.replace(BASE, ""))  # a download of version 2
    app.extensions["repository"].stats.on_pass()
    stats = client.get(url).json["stats"]
    assert (stats["downloads"], stats["version_downloads"]) == (1, 0)


def test_community_acceptance_through_a_new_version_shows_on_the_older_one(client, auth):
    """A new version that names the depositor's own community is accepted at once, for the whole concept:
    version 1 shows it in JSON, DataCite XML, JSON-LD and OAI-PMH (with a new datestamp, so incremental
    harvests pick version 1 up again)."""
    assert client.post("/api/communities", json={"identifier": "lab", "title": "Lab"}, headers=auth).status_code == 201
    first = published(client, auth, title="Community")
    url = f"/api/records/{first['id']}"
    identifier = f"oai:localhost:{first['id']}"
    oai_args = {"verb": "GetRecord", "metadataPrefix": "oai_datacite", "identifier": identifier}
    for how in ({}, {"format": "datacite"}, {"format": "jsonld"}):
        client.get(url, query_string=how)
    old_stamp = etree.fromstring(client.get("/oai2d", query_string=oai_args).data).findtext(f".//{OAI}datestamp")
    since = (utcnow() - timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    new_version(client, auth, first, b"v2", communities=[{"identifier": "lab"}])
    assert client.get(url).json["metadata"]["communities"] == [{"id": "lab"}]
    datacite = etree.fromstring(client.get(url, query_string={"format": "datacite"}).data)
    related = [e.text for e in datacite.iter(f"{DATACITE}relatedIdentifier") if e.get("relationType") == "IsPartOf"]
    assert any(r.endswith("/communities/lab") for r in related), related
    jsonld = client.get(url, query_string={"format": "jsonld"}).json
    assert any(p["@id"].endswith("/communities/lab") for p in jsonld["isPartOf"])
    got = etree.fromstring(client.get("/oai2d", query_string=oai_args).data)
    assert "user-lab" in [e.text for e in got.iter(f"{OAI}setSpec")]
    assert got.findtext(f".//{OAI}datestamp") >= old_stamp
    assert any(e.text.endswith("/communities/lab") for e in got.iter(f"{DATACITE}relatedIdentifier"))
    changed = etree.fromstring(client.get("/oai2d", query_string={
        "verb": "ListIdentifiers", "metadataPrefix": "oai_dc", "from": since}).data)  # fmt: skip
    assert identifier in [e.text for e in changed.iter(f"{OAI}identifier")]
