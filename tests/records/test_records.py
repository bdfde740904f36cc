"""The read side over HTTP: one record, versions, search with every parameter, the envelope and the legacy array."""

import base64
import datetime as dt
import hashlib

import pytest
from helpers.factories import make_deposit, publish, published, upload
from helpers.http import https_client
from sqlalchemy import update

from app import create_app
from repository.storage.tables.outbox import outbox
from repository.storage.tables.records import records

API = "/api/deposit/depositions"


def test_record_v1_shape(client, auth, settings):
    dep = published(client, auth, keywords=["soil"])
    response = client.get(f"/api/records/{dep['id']}")
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("application/json")
    record = response.json
    assert record["id"] == dep["id"] and record["conceptrecid"] == dep["conceptrecid"]
    assert record["doi"] == dep["doi"] and record["conceptdoi"] == dep["conceptdoi"]
    assert record["metadata"]["resource_type"] == {"type": "dataset", "title": "Dataset"}
    assert record["metadata"]["license"] == {"id": "cc-zero"}
    assert record["metadata"]["relations"]["version"][0]["is_last"] is True
    assert record["files"][0]["checksum"].startswith("md5:") and "id" not in record["files"][0]
    assert record["links"]["latest"] == f"{settings.BASE_URL}/api/records/{dep['id']}/versions/latest"
    assert set(record["stats"]) >= {"downloads", "views", "version_views", "volume"}
    for key in ("state", "submitted", "doi_url"):
        assert key not in record


REFERENCE_FILE_KEYS = {"bucket", "checksum", "key", "links", "size", "type"}


def test_record_files_keep_the_reference_keys(client, auth):
    """Strict clients (zenodoclient's RecordFile takes exactly these keywords) read the record's file objects: no
    key the reference never had in the record JSON or its search hits. The SHA-256 is offered where an extra key
    or header breaks nobody: the record's files listing, the bucket object and the download's Content-Digest."""
    content = b"a,b\n1,2\n"
    dep = published(client, auth, content=content)
    for accept in (None, "application/vnd.zenodo.v1+json", "application/vnd.service.v1+json"):
        headers = {"Accept": accept} if accept else {}
        record = client.get(f"/api/records/{dep['id']}", headers=headers).json
        hits = client.get("/api/records/", headers=headers).json["hits"]["hits"]
        for files in (record["files"], hits[0]["files"]):
            assert [set(f) for f in files] == [REFERENCE_FILE_KEYS], accept
    sha256 = hashlib.sha256(content).hexdigest()
    entries = client.get(f"/api/records/{dep['id']}/files").json["entries"]
    assert entries[0]["checksums"]["sha256"] == sha256
    download = client.get(record["files"][0]["links"]["self"].removeprefix("https://localhost"))
    assert download.data == content
    assert download.headers["Content-Digest"] == f"sha-256=:{base64.b64encode(hashlib.sha256(content).digest()).decode()}:"
    part = client.get(record["files"][0]["links"]["self"].removeprefix("https://localhost"), headers={"Range": "bytes=0-1"})
    assert part.status_code == 206 and "Content-Digest" not in part.headers  # a digest of the whole is wrong for a part


def test_views_are_counted(app, client, auth):
    dep = published(client, auth)
    client.get(f"/api/records/{dep['id']}")
    client.get(f"/api/records/{dep['id']}")  # within 30 s: a double click (tests/records/test_counter_stats.py)
    app.extensions["repository"].stats.on_pass()
    assert client.get(f"/api/records/{dep['id']}").json["stats"]["version_views"] == 1


def test_record_legacy_json(client, auth):
    dep = published(client, auth)
    legacy = client.get(f"/api/records/{dep['id']}", headers={"Accept": "application/json"}).json
    assert legacy["state"] == "done" and legacy["submitted"] is True
    assert legacy["metadata"]["upload_type"] == "dataset"
    assert legacy["files"][0]["checksum"] == dep["files"][0]["checksum"]


@pytest.mark.slow
def test_concept_id_redirects_and_unknown_is_404(client, auth):
    dep = published(client, auth)
    moved = client.get(f"/api/records/{dep['conceptrecid']}")
    assert moved.status_code == 301 and moved.headers["Location"].endswith(f"/api/records/{dep['id']}")
    missing = client.get("/api/records/999999")
    assert missing.status_code == 404 and missing.json["status"] == 404
    draft = make_deposit(client, auth)
    assert client.get(f"/api/records/{draft['id']}").status_code == 404


def test_deleted_record_is_410(app, client, auth):
    dep = published(client, auth)
    with app.extensions["repository"].db.write() as conn:
        conn.execute(update(records).where(records.c.id == dep["id"]).values(deleted=dt.datetime(2026, 1, 1)))
    gone = client.get(f"/api/records/{dep['id']}")
    assert gone.status_code == 410 and gone.json["status"] == 410


@pytest.mark.slow
def test_conditional_requests(client, auth):
    dep = published(client, auth)
    first = client.get(f"/api/records/{dep['id']}")
    assert first.headers["ETag"] and first.headers["Last-Modified"]
    again = client.get(f"/api/records/{dep['id']}", headers={"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304
    bibtex = client.get(f"/api/records/{dep['id']}", headers={"If-None-Match": first.headers["ETag"],
                                                              "Accept": "application/x-bibtex"})
    assert bibtex.status_code == 200  # another representation, another tag


@pytest.mark.slow
def test_versions(client, auth):
    dep = published(client, auth)
    draft = client.post(f"{API}/{dep['id']}/actions/newversion", headers=auth).json["links"]["latest_draft"]
    draft_id = int(draft.rsplit("/", 1)[1])
    files = client.get(f"{API}/{draft_id}/files", headers=auth).json
    client.delete(f"{API}/{draft_id}/files/{files[0]['id']}", headers=auth)
    upload(client, auth, {"id": draft_id}, content=b"v2")
    publish(client, auth, {"id": draft_id})
    old = client.get(f"/api/records/{dep['id']}").json
    assert old["metadata"]["relations"]["version"][0] == {
        "index": 0, "is_last": False, "count": 2,
        "parent": {"pid_type": "recid", "pid_value": dep["conceptrecid"]},
        "last_child": {"pid_type": "recid", "pid_value": str(draft_id)},
    }
    latest = client.get(old["links"]["latest"].replace("https://localhost", ""))
    assert latest.status_code == 302 and latest.headers["Location"] == f"https://localhost/api/records/{draft_id}"
    assert client.get(old["links"]["latest"].replace("https://localhost", ""), follow_redirects=True).json["id"] \
        == draft_id
    versions = client.get(f"/api/records/{dep['id']}/versions").json
    assert [h["id"] for h in versions["hits"]["hits"]] == [draft_id, dep["id"]]
    # Search shows the latest version only, unless asked for all.
    assert [h["id"] for h in client.get("/api/records/").json["hits"]["hits"]] == [draft_id]
    assert client.get("/api/records/?all_versions=true").json["hits"]["total"] == 2
    assert client.get("/api/records/?all_versions=0").json["hits"]["total"] == 1


@pytest.fixture(scope="module")
def corpus(module_app, module_auth):
    """Five published records of different kinds in the module's shared app, built once: the tests given them
    only read."""
    client, auth = https_client(module_app), module_auth
    made = [
        published(client, auth, title="Soil moisture of alpine meadows", keywords=["soil", "alps"],
                  publication_date="2019-05-01",
                  locations=[{"place": "Zermatt", "lat": 46.02, "lon": 7.75}]),
        published(client, auth, title="Glacier retreat photographs", upload_type="image", image_type="photo",
                  keywords=["glacier"], publication_date="2021-03-03"),
        published(client, auth, title="A study of river sediments", upload_type="publication",
                  publication_type="article", keywords=["soil", "river"], publication_date="2020-01-01",
                  access_right="closed"),
        published(client, auth, title="Sediment transport model", upload_type="software",
                  keywords=["model"], publication_date="2022-07-07",
                  doi="10.9999/external.sediment"),
        published(client, auth, title="Alpine flora survey", keywords=["flora"], publication_date="2018-08-08",
                  access_right="embargoed", embargo_date="2099-01-01"),
    ]
    return made


def ids(response) -> list[int]:  # type: ignore[no-untyped-def]
    assert response.status_code == 200, response.json
    return [h["id"] for h in response.json["hits"]["hits"]]


@pytest.mark.slow
def test_search_envelope_and_links(module_client, corpus, module_settings):
    body = module_client.get("/api/records/?size=2&page=2").json
    assert body["hits"]["total"] == 5 and len(body["hits"]["hits"]) == 2
    links = body["links"]
    assert links["self"].startswith(module_settings.BASE_URL + "/api/records/?") and "page=2" in links["self"]
    assert "page=1" in links["prev"] and "page=3" in links["next"]
    assert set(body["aggregations"]) >= {"access_right", "type", "file_type", "keywords"}
    types = {b["key"]: b["doc_count"] for b in body["aggregations"]["type"]["buckets"]}
    assert types == {"dataset": 2, "image": 1, "publication": 1, "software": 1}
    response = module_client.get("/api/records/?size=2")
    assert 'rel="next"' in response.headers["Link"]


def test_search_parameters(module_client, corpus):
    soil, glacier, river, model, flora = (d["id"] for d in corpus)
    assert set(ids(module_client.get("/api/records/?q=soil"))) == {soil, river}
    assert ids(module_client.get('/api/records/?q=title:"river sediments"')) == [river]
    assert set(ids(module_client.get("/api/records/?q=sedi*"))) == {river, model}
    assert ids(module_client.get("/api/records/?q=soil AND NOT river")) == [soil]
    assert ids(module_client.get("/api/records/?type=image")) == [glacier]
    assert ids(module_client.get("/api/records/?subtype=article")) == [river]
    assert ids(module_client.get("/api/records/?access_right=closed")) == [river]
    assert ids(module_client.get("/api/records/?keywords=model")) == [model]
    assert set(ids(module_client.get("/api/records/?publication_date=2020--2021"))) == {river, glacier}
    assert ids(module_client.get("/api/records/?bounds=7,45,8,47")) == [soil]
    by_date = ids(module_client.get("/api/records/?sort=publication_date"))
    assert by_date == [flora, soil, river, glacier, model]
    assert ids(module_client.get("/api/records/?sort=-publication_date"))[0] == model
    assert ids(module_client.get("/api/records/?sort=-mostrecent"))[0] == soil
    assert ids(module_client.get("/api/records/?q=doi:10.9999/external.sediment")) == [model]
    assert ids(module_client.get("/api/records/?q=10.9999/external.sediment")) == [model]
    assert ids(module_client.get(f'/api/records/?q=conceptrecid:{corpus[1]["conceptrecid"]}')) == [glacier]


def test_search_legacy_array(module_client, corpus):
    response = module_client.get("/api/records/?size=2", headers={"Accept": "application/json"})
    assert isinstance(response.json, list) and len(response.json) == 2
    assert response.json[0]["state"] == "done"
    assert 'rel="next"' in response.headers["Link"]


@pytest.mark.parametrize(
    "query, field",
    [
        ("sort=nonsense", "sort"),
        ("page=0", "page"),
        ("size=abc", "size"),
        ("bounds=1,2,3", "bounds"),
        ("custom=nothing", "custom"),
        ("q=title:(unclosed", "q"),
        ("publication_date=yesterday", "publication_date"),
        ("page=2000&size=10", "page"),
    ],
)
def test_bad_search_parameters_are_400_naming_them(module_client, query, field):
    response = module_client.get(f"/api/records/?{query}")
    assert response.status_code == 400, response.json
    assert response.json["errors"][0]["field"] == field


@pytest.mark.slow
def test_a_cursor_walks_past_the_window(make_settings, make_token):
    client = https_client(create_app(make_settings(SEARCH_WINDOW=4)))
    auth = {"Authorization": f"Bearer {make_token()}"}
    made = {published(client, auth, title=f"Record number {i}", content=f"{i}".encode())["id"] for i in range(7)}
    assert client.get("/api/records/?size=2&page=3").status_code == 400
    seen, url = [], "/api/records/?size=2"
    while url:
        body = client.get(url).json
        seen.extend(h["id"] for h in body["hits"]["hits"])
        url = body["links"].get("next", "").replace("https://localhost", "")
    assert sorted(seen) == sorted(made) and len(seen) == len(set(seen))


def test_export_formats_on_search(module_client, corpus):
    bib = module_client.get("/api/records/?format=bibtex")
    assert bib.status_code == 200 and bib.data.count(b"@") == 5
    marc = module_client.get("/api/records/", headers={"Accept": "application/marcxml+xml"})
    assert marc.status_code == 200 and b"<collection" in marc.data
    refused = module_client.get("/api/records/", headers={"Accept": "application/x-nothing"})
    assert refused.status_code == 406 and "application/x-bibtex" in refused.json["message"]


def test_record_files_listing_and_access(module_client, module_auth, corpus):
    soil, river, flora = corpus[0], corpus[2], corpus[4]
    entries = module_client.get(f"/api/records/{soil['id']}/files").json["entries"]
    assert entries[0]["key"] == "data.csv" and entries[0]["checksum"].startswith("md5:")
    for hidden in (river, flora):
        assert module_client.get(f"/api/records/{hidden['id']}/files").status_code == 404
        assert "files" not in module_client.get(f"/api/records/{hidden['id']}").json
        owner_view = module_client.get(f"/api/records/{hidden['id']}", headers=module_auth).json
        assert owner_view["files"]


def test_outbox_recovers_after_an_index_failure(app, client, auth):
    search = app.extensions["repository"].search
    original = search.index_documents

    def broken(entries):  # the engine fails between the commit and the indexing
        raise RuntimeError("index unavailable")

    search.index_documents = broken
    try:
        dep = published(client, auth, title="Written while the index was down")
    finally:
        search.index_documents = original
    assert client.get("/api/records/").json["hits"]["total"] == 0
    assert client.get(f"/api/records/{dep['id']}").status_code == 200  # the database has it
    with app.extensions["repository"].db.read() as conn:
        pending = conn.execute(outbox.select().where(outbox.c.done.is_(None), outbox.c.kind == "index")).all()
    assert pending and "index unavailable" in pending[0].last_error
    with app.extensions["repository"].db.write() as conn:
        conn.execute(update(outbox).values(not_before=None))
    app.extensions["repository"].indexer.process_pending()
    assert ids(client.get("/api/records/")) == [dep["id"]]


def test_dead_search_engine_gives_503_while_records_still_answer(make_settings, make_token):
    # An OpenSearch URL where nothing listens: publishing and reading by id work from the database.
    client = https_client(create_app(make_settings(SEARCH_URL="http://127.0.0.1:9")))
    auth = {"Authorization": f"Bearer {make_token()}"}
    dep = published(client, auth)
    response = client.get("/api/records/")
    assert response.status_code == 503 and response.json["status"] == 503
    assert client.get(f"/api/records/{dep['id']}").status_code == 200
