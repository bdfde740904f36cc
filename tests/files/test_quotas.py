"""Quotas over HTTP: the per-bucket limit (BUCKET_QUOTA_BYTES) and the per-user total (USER_QUOTA_BYTES), checked
before any byte is written when the size is known (a PUT's Content-Length, a multipart initiate, the old files
interface), while streaming otherwise (a chunked PUT stops at the room left), and last under the locks (a limit
lowered meanwhile, two uploads at once). Each refusal is a 413 error object naming the limit and the use, and
leaves nothing stored, not even a temporary file."""

from __future__ import annotations

import io
import threading
from pathlib import Path

import pytest
from helpers.factories import make_deposit, publish
from helpers.http import https_client

from app import create_app

BUCKET_LIMIT = 1000
USER_LIMIT = 1500


@pytest.fixture
def settings(make_settings):  # type: ignore[no-untyped-def]
    return make_settings(BUCKET_QUOTA_BYTES=BUCKET_LIMIT, USER_QUOTA_BYTES=USER_LIMIT, RATELIMIT_ENABLED=False)


def bucket_of(dep: dict) -> str:
    return dep["links"]["bucket"].replace("https://localhost", "")


def put(client, auth, bucket: str, key: str, size: int):  # type: ignore[no-untyped-def]
    return client.put(f"{bucket}/{key}", data=b"x" * size, headers=auth)


def put_chunked(client, auth, bucket: str, key: str, size: int):  # type: ignore[no-untyped-def]
    """A body without Content-Length, as a server hands on a chunked request (wsgi.input_terminated)."""
    return client.put(f"{bucket}/{key}", input_stream=io.BytesIO(b"y" * size), headers=auth,
                      environ_overrides={"wsgi.input_terminated": True, "HTTP_TRANSFER_ENCODING": "chunked",
                                         "CONTENT_LENGTH": ""})


def keys(client, auth, bucket: str) -> list[str]:  # type: ignore[no-untyped-def]
    return sorted(o["key"] for o in client.get(bucket, headers=auth).json["contents"])


def leftovers(settings) -> list[Path]:  # type: ignore[no-untyped-def]
    tmp = Path(settings.FILES_ROOT) / ".tmp"
    return [p for p in tmp.rglob("*") if p.is_file()] if tmp.exists() else []


def quota_error(answer, scope: str, limit: int, used: int) -> dict:  # type: ignore[no-untyped-def]
    assert answer.status_code == 413, answer.json
    assert answer.json["status"] == 413
    item = answer.json["errors"][0]
    assert (item["quota"], item["limit"], item["used"]) == (scope, limit, used), item
    assert f"limit for {'this deposit' if scope == 'bucket' else 'all your files'}" in answer.json["message"]
    assert f"{limit} bytes" in answer.json["message"] and f"{used} bytes are in use" in answer.json["message"]
    return item


@pytest.fixture
def bucket(client, auth) -> str:  # type: ignore[no-untyped-def]
    return bucket_of(make_deposit(client, auth))


def test_the_bucket_shows_its_quota(client, auth, bucket):
    body = client.get(bucket, headers=auth).json
    assert body["quota_size"] == body["max_file_size"] == BUCKET_LIMIT


def test_a_put_past_the_bucket_quota_is_refused_before_its_bytes(client, auth, bucket, settings):
    assert put(client, auth, bucket, "a.bin", 700).status_code == 200
    item = quota_error(put(client, auth, bucket, "b.bin", 301), "bucket", BUCKET_LIMIT, 700)
    assert (item["field"], item["requested"]) == ("Content-Length", 301)
    assert keys(client, auth, bucket) == ["a.bin"] and leftovers(settings) == []
    assert put(client, auth, bucket, "b.bin", 300).status_code == 200  # exactly the limit fits


def test_a_chunked_put_stops_at_the_room_left(client, auth, bucket, settings):
    assert put(client, auth, bucket, "a.bin", 600).status_code == 200
    item = quota_error(put_chunked(client, auth, bucket, "b.bin", 401), "bucket", BUCKET_LIMIT, 600)
    assert item["field"] == "body" and "requested" not in item
    assert keys(client, auth, bucket) == ["a.bin"] and leftovers(settings) == []
    fits = put_chunked(client, auth, bucket, "b.bin", 400)
    assert fits.status_code == 200 and fits.json["size"] == 400


def test_replacing_a_file_counts_the_difference(client, auth, bucket):
    assert put(client, auth, bucket, "a.bin", 800).status_code == 200
    assert put(client, auth, bucket, "a.bin", 950).status_code == 200  # 950 in place of 800
    assert put_chunked(client, auth, bucket, "a.bin", 1000).status_code == 200
    quota_error(put(client, auth, bucket, "b.bin", 1), "bucket", BUCKET_LIMIT, 1000)
    # Freeing bytes always passes.
    assert put(client, auth, bucket, "a.bin", 10).status_code == 200


@pytest.mark.slow
def test_a_multipart_upload_reserves_its_size_from_initiate(client, auth, bucket, settings):
    started = client.post(f"{bucket}/big.bin?uploads&size=600&partSize=300", headers=auth)
    assert started.status_code == 200, started.json
    item = quota_error(put(client, auth, bucket, "a.bin", 500), "bucket", BUCKET_LIMIT, 600)
    assert (item["stored"], item["reserved"]) == (0, 600)
    assert "reserved by open multipart uploads" in client.put(f"{bucket}/a.bin", data=b"x" * 500,
                                                            headers=auth).json["message"]
    item = quota_error(client.post(f"{bucket}/other.bin?uploads&size=401&partSize=401", headers=auth),
                       "bucket", BUCKET_LIMIT, 600)
    assert (item["field"], item["requested"]) == ("size", 401)
    assert put(client, auth, bucket, "a.bin", 400).status_code == 200
    uid = started.json["id"]
    for n in (0, 1):
        assert client.put(f"{bucket}/big.bin?uploadId={uid}&partNumber={n}", data=b"p" * 300,
                          headers=auth).status_code == 200
    done = client.post(f"{bucket}/big.bin?uploadId={uid}", headers=auth)
    assert done.status_code == 200, done.json
    # Completed: its bytes count as a file, no longer as a reservation.
    item = quota_error(put(client, auth, bucket, "c.bin", 1), "bucket", BUCKET_LIMIT, 1000)
    assert (item["stored"], item["reserved"]) == (1000, 0)
    # Aborting an upload gives its room back.
    client.delete(f"{bucket}/a.bin", headers=auth)
    other = client.post(f"{bucket}/other.bin?uploads&size=400&partSize=400", headers=auth).json["id"]
    quota_error(put(client, auth, bucket, "c.bin", 1), "bucket", BUCKET_LIMIT, 1000)
    assert client.delete(f"{bucket}/other.bin?uploadId={other}", headers=auth).status_code == 204
    assert put(client, auth, bucket, "c.bin", 400).status_code == 200
    assert leftovers(settings) == []


def test_a_complete_past_a_limit_lowered_meanwhile_is_refused_and_kept(make_settings, make_token):
    roomy = create_app(make_settings(BUCKET_QUOTA_BYTES=10_000, RATELIMIT_ENABLED=False))
    try:
        client = https_client(roomy)
        auth = {"Authorization": f"Bearer {make_token()}"}
        bucket = bucket_of(make_deposit(client, auth))
        uid = client.post(f"{bucket}/big.bin?uploads&size=2000&partSize=1000", headers=auth).json["id"]
        for n in (0, 1):
            client.put(f"{bucket}/big.bin?uploadId={uid}&partNumber={n}", data=b"p" * 1000, headers=auth)
    finally:
        roomy.extensions["repository"].db.dispose()
    tight = create_app(make_settings(BUCKET_QUOTA_BYTES=1500, RATELIMIT_ENABLED=False))
    try:
        client = https_client(tight)
        refused = client.post(f"{bucket}/big.bin?uploadId={uid}", headers=auth)
        item = quota_error(refused, "bucket", 1500, 0)
        assert item["requested"] == 2000
        assert keys(client, auth, bucket) == []
        listing = client.get(f"{bucket}/big.bin?uploadId={uid}", headers=auth).json
        assert listing["missing"] == [] and listing["completed"] is False  # kept: abort it, or make room
        assert client.delete(f"{bucket}/big.bin?uploadId={uid}", headers=auth).status_code == 204
    finally:
        tight.extensions["repository"].db.dispose()


@pytest.mark.slow
def test_the_user_total_spans_deposits_and_counts_shared_files_once(client, auth):
    first = make_deposit(client, auth)
    assert put(client, auth, bucket_of(first), "a.bin", 900).status_code == 200
    second = bucket_of(make_deposit(client, auth, title="Second"))
    item = quota_error(put(client, auth, second, "b.bin", 700), "user", USER_LIMIT, 900)
    assert item["requested"] == 700
    quota_error(client.post(f"{second}/big.bin?uploads&size=601&partSize=601", headers=auth), "user",
                USER_LIMIT, 900)
    assert put(client, auth, second, "b.bin", 600).status_code == 200
    assert client.delete(f"{second}/b.bin", headers=auth).status_code == 204
    # The record and its new version share the file: its 900 bytes count once (in three buckets).
    publish(client, auth, first)
    draft = client.post(f"/api/deposit/depositions/{first['id']}/actions/newversion", headers=auth)
    draft_id = int(draft.json["links"]["latest_draft"].rsplit("/", 1)[1])
    new_bucket = bucket_of(client.get(f"/api/deposit/depositions/{draft_id}", headers=auth).json)
    assert put(client, auth, new_bucket, "c.bin", 100).status_code == 200
    assert put(client, auth, second, "d.bin", 500).status_code == 200
    quota_error(put(client, auth, second, "e.bin", 1), "user", USER_LIMIT, 1500)


def test_another_users_files_do_not_count(client, auth, make_token):
    assert put(client, auth, bucket_of(make_deposit(client, auth)), "a.bin", 1000).status_code == 200
    other = {"Authorization": f"Bearer {make_token('other@example.org')}"}
    assert put(client, other, bucket_of(make_deposit(client, other)), "a.bin", 1000).status_code == 200


def test_the_old_files_interface_is_held_to_the_quota(client, auth):
    dep = make_deposit(client, auth)
    def send(name: str, size: int):  # type: ignore[no-untyped-def]
        return client.post(f"/api/deposit/depositions/{dep['id']}/files", headers=auth,
                           data={"name": name, "file": (io.BytesIO(b"z" * size), name)},
                           content_type="multipart/form-data")
    assert send("a.bin", 900).status_code == 201
    item = quota_error(send("b.bin", 200), "bucket", BUCKET_LIMIT, 900)
    assert item["field"] == "file"
    assert keys(client, auth, bucket_of(dep)) == ["a.bin"]


def race(app, auth: dict, targets: list[tuple[str, str]], size: int) -> list[int]:  # type: ignore[no-untyped-def]
    """PUT `size` bytes to each (bucket, key) at once; returns the status codes."""
    barrier = threading.Barrier(len(targets))
    codes = [0] * len(targets)

    def run(n: int) -> None:
        own = https_client(app)
        barrier.wait()
        codes[n] = put(own, auth, targets[n][0], targets[n][1], size).status_code

    threads = [threading.Thread(target=run, args=(n,)) for n in range(len(targets))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return codes


@pytest.mark.slow
def test_two_uploads_at_once_never_both_pass_a_limit(app, client, auth):
    """Each fits alone, not both: the bucket's row (same bucket) or the owner's row (two buckets) serialises the
    last check, so exactly one lands, on either database."""
    for round_ in range(3):
        same = bucket_of(make_deposit(client, auth, title=f"Same {round_}"))
        assert sorted(race(app, auth, [(same, "a.bin"), (same, "b.bin")], 600)) == [200, 413], round_
        client.delete(f"{same}/a.bin", headers=auth)
        client.delete(f"{same}/b.bin", headers=auth)
    one, two = (bucket_of(make_deposit(client, auth, title=t)) for t in ("One", "Two"))
    for round_ in range(3):
        assert sorted(race(app, auth, [(one, "a.bin"), (two, "b.bin")], 800)) == [200, 413], round_
        for bucket in (one, two):
            for key in keys(client, auth, bucket):
                assert client.delete(f"{bucket}/{key}", headers=auth).status_code == 204


def test_replacing_a_file_a_record_still_holds_frees_nothing_of_the_user_total(client, auth):
    dep = make_deposit(client, auth)
    assert put(client, auth, bucket_of(dep), "a.bin", 900).status_code == 200
    publish(client, auth, dep)
    draft = client.post(f"/api/deposit/depositions/{dep['id']}/actions/newversion", headers=auth)
    draft_id = int(draft.json["links"]["latest_draft"].rsplit("/", 1)[1])
    new_bucket = bucket_of(client.get(f"/api/deposit/depositions/{draft_id}", headers=auth).json)
    # Smaller than the file it replaces, but the published record keeps the old 900 bytes: 1700 in all.
    item = quota_error(put(client, auth, new_bucket, "a.bin", 800), "user", USER_LIMIT, 900)
    assert item["requested"] == 800
    assert put(client, auth, new_bucket, "a.bin", 600).status_code == 200  # 1500: exactly the limit
