"""The S3 store's own behaviour (docs/operators/object-storage.md), on a real SeaweedFS: start-up checks of the
credentials and the bucket, the store stopped mid-upload (503 with Retry-After, nothing visible, recovery when it
returns), presigned downloads, the orphan sweep over the bucket, fixity re-hashing the objects."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import io
import uuid

import pytest
import requests
from conftest import close_app
from helpers.databases import drop_database, empty_database
from helpers.factories import make_deposit, publish, published, published_restricted
from helpers.http import download, https_client
from helpers.seaweed import SECRET_KEY, Weed, empty_bucket, start_weed, stored_objects
from sqlalchemy import select

from app import create_app
from repository.accounts.tokens import SCOPES, create_token, create_user
from repository.config import Settings, StartupError
from repository.files import fixity, sweeper
from repository.files.fixity import Throttle
from repository.files.s3store import s3_error
from repository.storage.tables.files import file_instances
from scripts import backup, restore

pytestmark = [pytest.mark.slow, pytest.mark.s3_store]  # a real S3 server; these tests are about it alone

CONTENT = bytes(range(256)) * 40


@pytest.fixture
def s3(s3_settings):  # type: ignore[no-untyped-def]
    """The test's S3 settings (a bucket of its own, created at start-up)."""
    return s3_settings


def file_url(client, dep: dict, headers: dict | None = None) -> str:  # type: ignore[no-untyped-def]
    record = client.get(f"/api/records/{dep['id']}", headers=headers or {}).json
    return record["files"][0]["links"]["self"].replace("https://localhost", "")


def test_wrong_credentials_stop_start_up(make_settings, s3):  # type: ignore[no-untyped-def]
    with pytest.raises(StartupError, match="refused the credentials") as caught:
        create_app(make_settings(**{**s3, "S3_SECRET_ACCESS_KEY": "not-the-secret"}))
    assert "not-the-secret" not in str(caught.value) and SECRET_KEY not in str(caught.value)


def test_a_missing_bucket_stops_start_up_unless_it_may_be_created(make_settings, s3, weed):  # type: ignore[no-untyped-def]
    with pytest.raises(StartupError, match="does not exist.*S3_CREATE_BUCKET"):
        create_app(make_settings(**{**s3, "S3_CREATE_BUCKET": False}))
    app = create_app(make_settings(**s3))
    assert s3["S3_BUCKET"] in [b["Name"] for b in weed.client().list_buckets()["Buckets"]]
    close_app(app)


def test_the_credentials_are_not_in_the_settings_repr(make_settings, s3):  # type: ignore[no-untyped-def]
    assert SECRET_KEY not in repr(make_settings(**s3))


def test_files_live_in_the_bucket_and_download_with_ranges(app, client, auth, settings):  # type: ignore[no-untyped-def]
    dep = published(client, auth, content=CONTENT)
    url = file_url(client, dep)
    [key] = stored_objects(settings)
    with app.extensions["repository"].db.read() as conn:
        assert conn.execute(select(file_instances.c.uri)).scalar_one() == key
    whole = download(client, url)
    assert whole.data == CONTENT and whole.headers["Content-MD5"] == hashlib.md5(CONTENT).hexdigest()
    part = download(client, url, headers={"Range": "bytes=1000-1999"})
    assert part.status_code == 206 and part.data == CONTENT[1000:2000]
    assert download(client, url, headers={"If-None-Match": whole.headers["ETag"]}).status_code == 304


def test_a_large_put_is_sent_in_parts(app, client, auth):  # type: ignore[no-untyped-def]
    """20 MiB: three S3 parts of the streamed upload, each part's bytes handed to the store's connection as they
    are (not a file object read back 16 KiB at a time); the hashes are the whole file's."""
    sent: list[tuple[type, int, str | None]] = []

    def seen(request, **_: object) -> None:  # type: ignore[no-untyped-def]
        body = request.body
        sent.append((type(body), len(body) if isinstance(body, bytes) else -1, request.headers.get("x-amz-checksum-crc32")))

    app.extensions["repository"].files.client.meta.events.register("before-send.s3.UploadPart", seen)
    body = hashlib.sha256(b"seed").digest() * (20 * 1024 * 1024 // 32)
    bucket = make_deposit(client, auth)["links"]["bucket"].replace("https://localhost", "")
    response = client.put(f"{bucket}/big.bin", data=body, headers=auth)
    assert [(kind, size) for kind, size, _ in sent] == [(bytes, 8 * 1024 * 1024)] * 2 + [(bytes, 4 * 1024 * 1024)]
    assert all(crc for _, _, crc in sent)  # the CRC32 the store checks, still computed for each part
    assert response.status_code in (200, 201), response.json
    assert response.json["checksum"] == "md5:" + hashlib.md5(body).hexdigest()
    got = download(client, f"{bucket}/big.bin", headers=auth)
    assert got.data == body


class _ShortReads(io.BytesIO):
    """A request body that gives at most `most` bytes a read, as a body arriving in pieces can."""

    def __init__(self, data: bytes, most: int) -> None:
        super().__init__(data)
        self.most = most

    def read(self, size: int | None = -1, /) -> bytes:
        return super().read(self.most if size is None or size < 0 else min(size, self.most))

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        chunk = self.read(len(buffer))
        buffer[:len(chunk)] = chunk
        return len(chunk)


def test_short_reads_are_gathered_into_whole_parts(client, auth, settings):  # type: ignore[no-untyped-def]
    """Reads of 3 MiB (not a part each): the parts are gathered from them, the last one short; the object and its
    hashes are the whole body's."""
    body = hashlib.sha256(b"pieces").digest() * (19 * 1024 * 1024 // 32) + b"tail"
    bucket = make_deposit(client, auth)["links"]["bucket"].replace("https://localhost", "")
    response = client.put(f"{bucket}/pieces.bin", input_stream=_ShortReads(body, 3 * 1024 * 1024),
                          headers={**auth, "Content-Length": str(len(body))})
    assert response.status_code in (200, 201), response.json
    assert response.json["checksum"] == "md5:" + hashlib.md5(body).hexdigest()
    got = download(client, f"{bucket}/pieces.bin", headers=auth)
    assert got.data == body
    assert got.headers["Content-Digest"] == f"sha-256=:{base64.b64encode(hashlib.sha256(body).digest()).decode()}:"


class _Dies(io.BytesIO):
    """A request body that stops the S3 server once `after` bytes were read, then goes on."""

    def __init__(self, data: bytes, after: int, server: Weed) -> None:
        super().__init__(data)
        self.after, self.server = after, server

    def read(self, size: int | None = -1, /) -> bytes:
        if self.tell() >= self.after:
            self.server.stop()
        return super().read(size)

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        chunk = self.read(len(buffer))
        buffer[:len(chunk)] = chunk
        return len(chunk)


def test_the_store_stopped_mid_upload_is_a_503_and_nothing_is_visible(make_settings, tmp_path):  # type: ignore[no-untyped-def]
    server = start_weed(str(tmp_path / "weed"))
    port = int(server.endpoint.rsplit(":", 1)[1])
    app = None
    try:
        settings = make_settings(**server.settings("fault"))
        app = create_app(settings)
        client = https_client(app)
        with app.extensions["repository"].db.write() as conn:
            user = create_user(conn, "owner@example.org")
            auth = {"Authorization": f"Bearer {create_token(conn, user, list(SCOPES))[1]}"}
        bucket = make_deposit(client, auth)["links"]["bucket"].replace("https://localhost", "")
        body = b"x" * (20 * 1024 * 1024)
        response = client.put(f"{bucket}/big.bin", input_stream=_Dies(body, 9 * 1024 * 1024, server),
                              headers={**auth, "Content-Length": str(len(body))})
        assert response.status_code == 503, response.data[:300]
        assert response.json["status"] == 503 and response.headers["Retry-After"]
        assert client.get(bucket, headers=auth).json["contents"] == []
        ready = client.get("/readyz")  # a load balancer stops sending requests meanwhile
        assert ready.status_code == 503 and not ready.json["checks"]["files"]["ok"]
        assert ready.json["checks"]["files"]["error"] == "The object store holding the files does not answer."
        # Back again: the bucket shows no object, half or whole, and uploads work again.
        server = start_weed(str(tmp_path / "weed"), s3_port=port)
        assert stored_objects(settings) == []
        assert client.get("/readyz").json["checks"]["files"]["ok"]  # the store answers again
        assert client.put(f"{bucket}/small.bin", data=b"again", headers=auth).status_code in (200, 201)
        assert download(client, f"{bucket}/small.bin", headers=auth).data == b"again"
    finally:
        server.stop()
        if app is not None:
            close_app(app)


def test_presigned_downloads_redirect_to_the_store(app, client, auth, settings, make_token):  # type: ignore[no-untyped-def]
    app.extensions["repository"].settings = dataclasses.replace(settings, S3_PRESIGNED_DOWNLOADS=True)
    dep = published(client, auth, content=CONTENT)
    url = file_url(client, dep)
    response = client.get(url + "?download=1")
    assert response.status_code == 302 and response.headers["Cache-Control"] == "no-store"
    fetched = requests.get(response.headers["Location"], timeout=10)
    assert fetched.status_code == 200 and fetched.content == CONTENT
    assert fetched.headers["Content-Disposition"] == "attachment; filename*=UTF-8''data.csv"
    ranged = requests.get(response.headers["Location"], headers={"Range": "bytes=0-9"}, timeout=10)
    assert ranged.status_code == 206 and ranged.content == CONTENT[:10]
    app.extensions["repository"].stats.on_pass()
    assert client.get(f"/api/records/{dep['id']}").json["stats"]["version_downloads"] == 1
    # A restricted file: no URL for someone who may not read it; its owner gets one.
    closed = published_restricted(client, auth)
    closed_url = file_url(client, closed, headers=auth)
    assert client.get(closed_url).status_code == 404
    other = {"Authorization": f"Bearer {make_token('other@example.org')}"}
    assert client.get(closed_url, headers=other).status_code == 404
    owner = client.get(closed_url, headers=auth)
    assert owner.status_code == 302 and "private" in owner.headers["Cache-Control"]
    assert requests.get(owner.headers["Location"], timeout=10).status_code == 200


def test_the_sweep_removes_the_objects_no_row_points_at(app, client, auth, settings, s3, weed):  # type: ignore[no-untyped-def]
    published(client, auth, content=CONTENT)
    services = app.extensions["repository"]
    weed.client().put_object(Bucket=s3["S3_BUCKET"], Key="ab/cd/abcd0000-orphan", Body=b"orphan")
    [kept] = [k for k in stored_objects(settings) if "orphan" not in k]
    with services.db.read() as conn:
        assert sweeper.sweep(services.files, conn, min_age=0) == 1
    assert stored_objects(settings) == [kept]


def test_fixity_rehashes_the_objects(app, client, auth, settings, s3, weed, tmp_path):  # type: ignore[no-untyped-def]
    dep = make_deposit(client, auth)
    for name in ("a.bin", "b.bin"):
        client.put(dep["links"]["bucket"].replace("https://localhost", "") + f"/{name}", data=name.encode() * 999,
                   headers=auth)
    publish(client, auth, dep)
    services = app.extensions["repository"]
    progress = fixity.run_pass(services.db, services.files, str(tmp_path / "state.json"), 0)
    assert progress.complete and progress.checked == 2 and progress.problems == []
    key = sorted(stored_objects(settings))[0]
    weed.client().put_object(Bucket=s3["S3_BUCKET"], Key=key, Body=b"rotten")
    progress = fixity.run_pass(services.db, services.files, str(tmp_path / "state.json"), 0, throttle=Throttle(0))
    assert [p["problem"] for p in progress.problems] == ["size", "md5", "sha256"]


def test_backup_and_restore_take_the_objects(app, client, auth, settings, weed, tmp_path, capsys):  # type: ignore[no-untyped-def]
    """A backup copies the bucket's objects; a restore puts them into a new, empty bucket (and refuses one that is
    not empty)."""
    dep = published(client, auth, content=CONTENT)
    assert backup.main([str(tmp_path / "backup"), "--quiet"], settings) == 0
    restored_url = empty_database(tmp_path, "restored")
    new_bucket = f"t-{uuid.uuid4().hex[:24]}"
    try:
        restored = Settings.build(INSTANCE_PATH=str(tmp_path / "restored"), DATABASE_URL=restored_url,
                                  BASE_URL="https://localhost", SECRET_KEY="test-secret", BACKGROUND_WORKER=False,
                                  **weed.settings(new_bucket))
        weed.client().create_bucket(Bucket=new_bucket)
        weed.client().put_object(Bucket=new_bucket, Key="something", Body=b"x")
        assert restore.main([str(tmp_path / "backup"), "--quiet"], restored) == 2
        assert "is not empty" in capsys.readouterr().err
        weed.client().delete_object(Bucket=new_bucket, Key="something")
        assert restore.main([str(tmp_path / "backup"), "--quiet"], restored) == 0, capsys.readouterr()
        assert "restore check passed" in capsys.readouterr().out
        assert len(stored_objects(restored)) == 1
        again = create_app(restored)
        try:
            other = https_client(again)
            assert download(other, file_url(other, dep)).data == CONTENT
        finally:
            close_app(again)
    finally:
        empty_bucket(weed, new_bucket)
        drop_database(restored_url)


def test_two_instances_share_only_the_database_and_the_store(app, client, auth, settings, s3, weed, tmp_path):  # type: ignore[no-untyped-def]
    """A second application with an instance directory of its own (FILES_ROOT too) and the same database and
    bucket: what one stored, the other serves and sweeps; an upload a crashed node left half-done in the store is
    aborted by the other's sweep, and nothing of it was ever visible."""
    other_settings = dataclasses.replace(settings, INSTANCE_PATH=str(tmp_path / "node-b"),
                                         FILES_ROOT=str(tmp_path / "node-b" / "files"))
    node_b = create_app(other_settings)
    try:
        other = https_client(node_b)
        dep = published(client, auth, content=CONTENT)
        got = download(other, file_url(other, dep))
        assert got.status_code == 200 and got.data == CONTENT
        assert download(other, file_url(other, dep), headers={"Range": "bytes=-10"}).data == CONTENT[-10:]
        # A PUT whose node died between two parts: an incomplete S3 upload, no object.
        left = weed.client().create_multipart_upload(Bucket=s3["S3_BUCKET"], Key="ab/cd/abcd-crashed")
        weed.client().upload_part(Bucket=s3["S3_BUCKET"], Key="ab/cd/abcd-crashed", UploadId=left["UploadId"],
                                  PartNumber=1, Body=b"p" * (5 * 1024 * 1024))
        assert "ab/cd/abcd-crashed" not in stored_objects(settings)
        services_b = node_b.extensions["repository"]
        with services_b.db.read() as conn:
            assert sweeper.sweep(services_b.files, conn, min_age=0) == 1  # the upload aborted; the file kept
        assert weed.client().list_multipart_uploads(Bucket=s3["S3_BUCKET"]).get("Uploads", []) == []
        assert download(client, file_url(client, dep)).data == CONTENT
    finally:
        close_app(node_b)


@pytest.mark.parametrize(("error", "status"), [
    ({"Error": {"Code": "InsufficientStorage"}, "ResponseMetadata": {"HTTPStatusCode": 507}}, 507),
    ({"Error": {"Code": "QuotaExceeded"}, "ResponseMetadata": {"HTTPStatusCode": 403}}, 507),
    ({"Error": {"Code": "SlowDown"}, "ResponseMetadata": {"HTTPStatusCode": 503}}, 503),
    ({"Error": {"Code": "InternalError"}, "ResponseMetadata": {"HTTPStatusCode": 500}}, 503),
])
def test_the_store_s_refusals_map_to_answers(error, status):  # type: ignore[no-untyped-def]
    """What an S3 service answers when it is full or failing (a SeaweedFS here cannot be filled on demand)."""
    import botocore.exceptions

    mapped = s3_error(botocore.exceptions.ClientError(error, "PutObject"))
    assert mapped is not None and mapped.status == status
    assert (mapped.headers.get("Retry-After") is not None) is (status == 503)
