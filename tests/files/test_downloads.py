"""Downloads of record files: access by access right and embargo date, Range, conditional, defensive headers."""

import datetime as dt
import hashlib

import pytest
from helpers.factories import published
from helpers.http import download
from sqlalchemy import select, update

from repository.storage.tables.records import records

CONTENT = bytes(range(256)) * 40


def file_url(client, dep: dict, headers: dict | None = None) -> str:  # type: ignore[no-untyped-def]
    record = client.get(f"/api/records/{dep['id']}", headers=headers or {}).json
    return record["files"][0]["links"]["self"].replace("https://localhost", "")


def test_open_record_downloads(client, auth):
    dep = published(client, auth, content=CONTENT)
    url = file_url(client, dep)
    response = download(client, url)
    assert response.status_code == 200 and response.data == CONTENT
    assert response.headers["Content-MD5"] == hashlib.md5(CONTENT).hexdigest()
    assert response.headers["ETag"] == f'"md5:{hashlib.md5(CONTENT).hexdigest()}"'
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Content-Security-Policy"] == "default-src 'none';"
    assert response.headers["Content-Type"].startswith("text/plain")  # CSV is never served as something runnable
    assert "attachment" not in response.headers.get("Content-Disposition", "")
    attached = download(client, url + "?download=1")
    assert attached.headers["Content-Disposition"].startswith("attachment")


@pytest.mark.slow
def test_range_and_conditional_requests(client, auth):
    dep = published(client, auth, content=CONTENT)
    url = file_url(client, dep)
    part = download(client, url, headers={"Range": "bytes=100-199"})
    assert part.status_code == 206 and part.data == CONTENT[100:200]
    assert part.headers["Content-Range"] == f"bytes 100-199/{len(CONTENT)}"
    etag = download(client, url).headers["ETag"]
    assert download(client, url, headers={"If-None-Match": etag}).status_code == 304


def test_gz_files_are_served_as_stored(client, auth):
    from helpers.factories import make_deposit, publish, upload

    dep = make_deposit(client, auth)
    upload(client, auth, dep, name="table.csv.gz", content=b"\x1f\x8b\x08 not really gzip")
    publish(client, auth, dep)
    response = download(client, file_url(client, dep))
    assert "Content-Encoding" not in response.headers
    assert response.data == b"\x1f\x8b\x08 not really gzip"


@pytest.mark.slow
def test_closed_and_restricted_files_only_for_the_owner(client, auth, make_token):
    other = {"Authorization": f"Bearer {make_token('other@example.org')}"}
    for access in ({"access_right": "closed"}, {"access_right": "restricted", "access_conditions": "Ask us."}):
        dep = published(client, auth, **access)
        url = file_url(client, dep, headers=auth)
        assert download(client, url, headers=auth).status_code == 200
        assert download(client, url).status_code == 404
        assert download(client, url, headers=other).status_code == 404


def test_embargo_lifts_by_date_with_nobody_acting(app, client, auth):
    tomorrow = (dt.date.today() + dt.timedelta(days=1)).isoformat()
    dep = published(client, auth, access_right="embargoed", embargo_date=tomorrow)
    url = file_url(client, dep, headers=auth)
    assert download(client, url).status_code == 404
    db = app.extensions["repository"].db
    with db.read() as conn:
        assert conn.execute(select(records.c.embargo_until).where(records.c.id == dep["id"])).scalar() == tomorrow
    # The calendar moves on: only the stored date changes, as it would by waiting a day.
    yesterday = (dt.date.today() - dt.timedelta(days=1)).isoformat()
    with db.write() as conn:
        row = conn.execute(select(records.c.metadata).where(records.c.id == dep["id"])).scalar()
        conn.execute(
            update(records)
            .where(records.c.id == dep["id"])
            .values(metadata={**row, "embargo_date": yesterday}, embargo_until=yesterday)
        )
    assert download(client, url).status_code == 200
    indexer = app.extensions["repository"].indexer
    assert indexer.lift_embargoes() == 1
    indexer.process_pending()
    hit = client.get("/api/records/").json["hits"]["hits"][0]
    assert hit["files"]  # the search copy follows too


def test_downloads_are_counted(app, client, auth):
    dep = published(client, auth, content=CONTENT)
    download(client, file_url(client, dep))
    app.extensions["repository"].stats.on_pass()  # aggregated by the worker's pass
    stats = client.get(f"/api/records/{dep['id']}").json["stats"]
    assert stats["version_downloads"] == 1 and stats["version_volume"] == len(CONTENT)


def test_a_file_lost_from_disk_is_503_not_500(app, client, auth):

    dep = published(client, auth, content=CONTENT)
    url = file_url(client, dep)
    store = app.extensions["repository"].files
    bucket, key = url.split("/api/files/")[1].split("/", 1)
    with app.extensions["repository"].db.read() as conn:
        from repository.files.buckets import get_object

        store.remove(get_object(conn, bucket, key)["uri"])
    response = download(client, url)
    assert response.status_code == 503 and response.json["status"] == 503
