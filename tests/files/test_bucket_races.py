"""Writes to a bucket racing a publish, a delete or each other: every write either lands (and then is in the
published record) or is refused with an error object, never a 500, on SQLite and on PostgreSQL.

Threads with their own test clients run truly concurrently against PostgreSQL (the driver releases the GIL);
on SQLite they queue on its write lock, which the same assertions must survive."""

from __future__ import annotations

import io
import os
import threading
import uuid
from collections.abc import Callable

import pytest
from helpers.factories import make_deposit, upload
from helpers.http import https_client
from helpers.seaweed import stored_paths

from app import create_app

API = "/api/deposit/depositions"
ROUNDS = 6


@pytest.fixture
def race_app(make_settings):  # type: ignore[no-untyped-def]
    application = create_app(make_settings(RATELIMIT_ENABLED=False))
    yield application
    application.extensions["repository"].db.dispose()


@pytest.fixture
def race_auth(race_app) -> dict[str, str]:  # type: ignore[no-untyped-def]
    from repository.accounts import tokens

    with race_app.extensions["repository"].db.write() as conn:
        user_id = tokens.create_user(conn, "racer@example.org")
        token = tokens.create_token(conn, user_id, list(tokens.SCOPES))[1]
    return {"Authorization": f"Bearer {token}"}


def race(app, calls: list[Callable]) -> list:  # type: ignore[no-untyped-def,type-arg]
    """Run each `call(client)` in its own thread with its own client, all released at once; their results."""
    barrier = threading.Barrier(len(calls))
    results: list = [None] * len(calls)

    def run(i: int) -> None:
        client = https_client(app)
        barrier.wait()
        try:
            results[i] = calls[i](client)
        except BaseException as exc:  # noqa: BLE001 - reported by the assertions below
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return results


def bucket_path(dep: dict) -> str:
    return dep["links"]["bucket"].replace("https://localhost", "")


def stored_files(settings) -> set[str]:  # type: ignore[no-untyped-def]
    return {os.path.basename(p) for p in stored_paths(settings)}


def file_ids_in_db(app) -> set[str]:  # type: ignore[no-untyped-def]
    from sqlalchemy import select

    from repository.storage.tables.files import file_instances

    with app.extensions["repository"].db.read() as conn:
        return set(conn.execute(select(file_instances.c.id)).scalars())


def put(bucket: str, key: str, body: bytes, auth: dict) -> Callable:  # type: ignore[type-arg]
    return lambda client: ("put", key, client.put(f"{bucket}/{key}", data=body, headers=auth))


def post(dep_id: int, key: str, body: bytes, auth: dict) -> Callable:  # type: ignore[type-arg]
    def call(client):  # type: ignore[no-untyped-def]
        response = client.post(
            f"{API}/{dep_id}/files", data={"name": key, "file": (io.BytesIO(body), key)}, headers=auth,
            content_type="multipart/form-data",
        )
        return "post", key, response

    return call


@pytest.mark.slow
def test_uploads_racing_a_publish_land_in_the_record_or_are_refused(race_app, race_auth, settings):
    client = https_client(race_app)
    for round_ in range(ROUNDS):
        dep = make_deposit(client, race_auth, title=f"Race {round_}")
        base = upload(client, race_auth, dep, name="base.csv", content=f"base {round_}".encode())
        upload(client, race_auth, dep, name="gone.csv", content=f"gone {round_}".encode())
        renamed = upload(client, race_auth, dep, name="old.csv", content=f"old {round_}".encode())
        bucket = bucket_path(dep)
        calls = [put(bucket, f"put{i}.txt", f"{round_} put {i}".encode(), race_auth) for i in range(4)]
        calls += [post(dep["id"], f"post{i}.txt", f"{round_} post {i}".encode(), race_auth) for i in range(3)]
        calls.append(lambda c, url=f"{bucket}/gone.csv": ("delete", "gone.csv", c.delete(url, headers=race_auth)))
        calls.append(lambda c, url=f"{API}/{dep['id']}/files/{renamed['id']}": (
            "rename", "old.csv", c.put(url, json={"name": "new.csv"}, headers=race_auth)))
        calls.append(lambda c, url=f"{API}/{dep['id']}/actions/publish": ("publish", None, c.post(url, headers=race_auth)))
        results = race(race_app, calls)

        assert [r.status_code for kind, _, r in results if kind == "publish"] == [202], round_
        record = client.get(f"/api/records/{dep['id']}/files", headers=race_auth).json
        in_record = {entry["key"] for entry in record["entries"]}
        deposit_bucket = {o["key"] for o in client.get(bucket, headers=race_auth).json["contents"]}
        assert deposit_bucket == in_record, round_
        assert "base.csv" in in_record and base["filename"] == "base.csv"
        for kind, key, response in results:
            if kind == "publish":
                continue
            assert response.status_code < 500, (kind, key, response.status_code)
            assert response.json["status"] == response.status_code if response.status_code >= 400 else True
            done = response.status_code in (200, 201, 204)
            assert done or response.status_code == 403, (kind, key, response.status_code, response.json)
            if kind in ("put", "post"):
                assert (key in in_record) is done, (round_, kind, key, response.status_code)
            elif kind == "delete":
                assert ("gone.csv" not in in_record) is done, (round_, response.status_code)
            else:
                assert ("new.csv" in in_record and "old.csv" not in in_record) is done, (round_, in_record)
    # Refused uploads left nothing on disk: every file there is one the database points at.
    assert stored_files(settings) == file_ids_in_db(race_app)


@pytest.mark.slow
def test_concurrent_puts_of_one_key_keep_the_last_one(race_app, race_auth, settings):
    client = https_client(race_app)
    for round_ in range(3):
        dep = make_deposit(client, race_auth)
        bucket = bucket_path(dep)
        bodies = [f"round {round_} writer {i}".encode() for i in range(8)]
        results = race(race_app, [put(bucket, "same.bin", body, race_auth) for body in bodies])
        assert [r.status_code for _, _, r in results] == [200] * 8, [r.status_code for _, _, r in results]
        contents = client.get(bucket, headers=race_auth).json["contents"]
        assert [o["key"] for o in contents] == ["same.bin"]
        final = client.get(f"{bucket}/same.bin", headers=race_auth)
        assert final.data in bodies
        final.close()
    # Every replaced version was freed: only the last file of each round is left.
    assert stored_files(settings) == file_ids_in_db(race_app)
    assert len(stored_files(settings)) == 3


def test_concurrent_multipart_uploads_of_one_name_give_one_file_and_400s(race_app, race_auth, settings):
    client = https_client(race_app)
    dep = make_deposit(client, race_auth)
    results = race(race_app, [post(dep["id"], "same.csv", f"writer {i}".encode(), race_auth) for i in range(8)])
    statuses = sorted(r.status_code for _, _, r in results)
    assert statuses == [201] + [400] * 7, statuses
    assert all("exists" in r.json["message"] for _, _, r in results if r.status_code == 400)
    assert [f["filename"] for f in client.get(f"{API}/{dep['id']}/files", headers=race_auth).json] == ["same.csv"]
    assert stored_files(settings) == file_ids_in_db(race_app) and len(stored_files(settings)) == 1


def test_deleting_a_draft_while_uploading_gives_404s_and_leaves_nothing(race_app, race_auth, settings):
    client = https_client(race_app)
    for round_ in range(3):
        dep = make_deposit(client, race_auth)
        upload(client, race_auth, dep, name="first.csv")
        bucket = bucket_path(dep)
        calls = [put(bucket, f"p{i}.bin", b"x" * 1000, race_auth) for i in range(4)]
        calls += [post(dep["id"], f"m{i}.csv", b"y" * 1000, race_auth) for i in range(3)]
        calls.append(lambda c, url=f"{API}/{dep['id']}": ("delete", None, c.delete(url, headers=race_auth)))
        results = race(race_app, calls)
        for kind, key, response in results:
            if kind == "delete":
                assert response.status_code == 201
            else:
                assert response.status_code in (200, 201, 404), (round_, kind, key, response.status_code)
                if response.status_code == 404:
                    assert response.json["status"] == 404
        assert client.get(f"{API}/{dep['id']}", headers=race_auth).status_code == 404
    # The deleted drafts' files, landed or refused, are all gone.
    assert stored_files(settings) == set() and file_ids_in_db(race_app) == set()


def test_mixed_load_on_one_deposit_never_fails(race_app, race_auth, settings):
    """Replacing, adding, renaming and deleting at once, as a busy client does: defined answers only."""
    client = https_client(race_app)
    dep = make_deposit(client, race_auth)
    files = [upload(client, race_auth, dep, name=f"f{i}.csv", content=f"file {i}".encode()) for i in range(4)]
    bucket = bucket_path(dep)
    calls = [put(bucket, "shared.bin", f"shared {i}".encode(), race_auth) for i in range(3)]
    calls += [post(dep["id"], "shared.csv", f"multi {i}".encode(), race_auth) for i in range(2)]
    calls += [lambda c, f=f: ("rename", f["filename"], c.put(
        f"{API}/{dep['id']}/files/{f['id']}", json={"name": "target.csv"}, headers=race_auth)) for f in files[:2]]
    calls += [lambda c, f=f: ("delete", f["filename"], c.delete(
        f"{API}/{dep['id']}/files/{f['id']}", headers=race_auth)) for f in files[2:]]
    calls.append(lambda c: ("sort", None, c.put(
        f"{API}/{dep['id']}/files", json=[{"id": f["id"]} for f in reversed(files)], headers=race_auth)))
    results = race(race_app, calls)
    allowed = {"put": {200}, "post": {201, 400}, "rename": {200, 400}, "delete": {204}, "sort": {200, 400}}
    for kind, key, response in results:
        assert response.status_code in allowed[kind], (kind, key, response.status_code, response.get_data())
    keys = [f["filename"] for f in client.get(f"{API}/{dep['id']}/files", headers=race_auth).json]
    assert sorted(keys) == sorted(set(keys))
    assert {"shared.bin", "shared.csv", "target.csv"} <= set(keys)
    assert stored_files(settings) == file_ids_in_db(race_app)


@pytest.mark.slow
def test_reindex_check_reports_a_deposit_whose_files_differ_from_its_record(app, client, auth, settings, capsys):
    """The consistency check finds what the race used to leave: an upload sitting in a published deposit's bucket
    but missing from its record (made here directly in the database), and the reverse."""
    from sqlalchemy import delete, insert, select

    from repository.storage.tables.deposits import deposits
    from repository.storage.tables.files import objects
    from repository.timeutil import utcnow
    from scripts import reindex

    made = []
    for i in range(3):
        dep = make_deposit(client, auth, title=f"Checked {i}")
        upload(client, auth, dep, name="data.csv", content=f"data {i}".encode())
        upload(client, auth, dep, name="more.csv", content=f"more {i}".encode())
        assert client.post(f"{API}/{dep['id']}/actions/publish", headers=auth).status_code == 202
        made.append(dep["id"])
    assert reindex.main(["--check", "--quiet"], settings) == 0
    assert "file check passed" in capsys.readouterr().out

    late, lost, _ok = made
    with app.extensions["repository"].db.write() as conn:
        bucket = conn.execute(select(deposits.c.bucket_id).where(deposits.c.id == late)).scalar()
        file_id = conn.execute(select(objects.c.file_id).where(objects.c.bucket_id == bucket)).scalars().first()
        conn.execute(insert(objects).values(version_id=str(uuid.uuid4()), bucket_id=bucket, key="late.txt",
                                            file_id=file_id, mimetype="text/plain", position=9, created=utcnow(),
                                            updated=utcnow()))
        lost_bucket = conn.execute(select(deposits.c.bucket_id).where(deposits.c.id == lost)).scalar()
        conn.execute(delete(objects).where(objects.c.bucket_id == lost_bucket, objects.c.key == "more.csv"))
    assert reindex.main(["--check", "--quiet"], settings) == 1
    out = capsys.readouterr().out
    assert f"deposit {late}: its files differ from record {late}'s (only in the deposit: 'late.txt')" in out
    assert f"deposit {lost}: its files differ from record {lost}'s (only in the record: 'more.csv')" in out
    assert "file check FAILED: 2 published deposit(s)" in out and "index check passed" in out


@pytest.mark.slow
def test_a_constraint_still_hit_answers_409_not_500(app, client):
    """The safety net under the locks: a unique or foreign-key violation that reaches the top of a request (here a
    real duplicate key in the database, from a route of this test) is a 409 error object, not a bare 500."""
    from sqlalchemy import insert

    from repository.storage.tables.files import buckets
    from repository.timeutil import utcnow

    def duplicate() -> str:
        with app.extensions["repository"].db.write() as conn:
            row = {"id": "same", "locked": False, "created": utcnow(), "updated": utcnow()}
            conn.execute(insert(buckets).values(**row))
            conn.execute(insert(buckets).values(**row))
        return "unreachable"

    app.add_url_rule("/api/_test_duplicate", "test_duplicate", duplicate)
    response = client.get("/api/_test_duplicate")
    assert response.status_code == 409 and response.json["status"] == 409
    assert "simultaneous" in response.json["message"]
