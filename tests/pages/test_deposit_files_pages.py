"""The deposit form's file area without JavaScript: plain forms upload two files at once, rename, move and delete
them, each time back at the form (`/deposit/<id>#files`) with a notice in the area; the API sees the same files.
Another user's deposition is a 404, a forged form changes nothing, and a published deposition's files stay. A file
replaced keeps its name and place, the area shows both checksums and the room the quota leaves, and a refused
replacement keeps the old file."""

from __future__ import annotations

import hashlib
import io
import re
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from helpers.factories import metadata
from helpers.http import download, https_client
from helpers.pages import csrf_from, referer, session_headers, signed_in
from werkzeug.datastructures import FileStorage
from werkzeug.test import stream_encode_multipart

from app import create_app
from repository.ondemand import wait_all_idle

PASSWORD = "correct horse battery"
API = "/api/deposit/depositions"


def new_draft(client, **overrides) -> dict:  # type: ignore[no-untyped-def]
    created = client.post(API, json={"metadata": metadata(**overrides)}, headers=session_headers(client))
    assert created.status_code == 201, created.json
    return created.json


def files_page(client, dep_id: int) -> str:  # type: ignore[no-untyped-def]
    page = client.get(f"/deposit/{dep_id}/files")
    assert page.status_code == 200
    return page.get_data(as_text=True)


def post(client, dep_id: int, path: str, data: dict, **kwargs):  # type: ignore[no-untyped-def]
    """POST a form of the file page as the browser does (the page's token, its Referer)."""
    page = f"/deposit/{dep_id}/files"
    form = {"csrf_token": csrf_from(files_page(client, dep_id)), "next": page} | data
    return client.post(f"{page}{path}", data=form, headers=referer(page), **kwargs)


def upload(client, dep_id: int, *files: tuple[str, bytes]):  # type: ignore[no-untyped-def]
    parts = [(io.BytesIO(content), name) for name, content in files]
    return post(client, dep_id, "", {"file": parts}, content_type="multipart/form-data")


def api_names(client, dep_id: int) -> list[str]:  # type: ignore[no-untyped-def]
    return [f["filename"] for f in client.get(f"{API}/{dep_id}/files").json]


def notice(html: str) -> str:
    found = re.search(r'<div class="files-status[^"]*"[^>]*>([^<]*)</div>', html)
    assert found is not None, "no status region in the file area"
    return found.group(1)


@pytest.fixture
def owner(client, app):  # type: ignore[no-untyped-def]
    signed_in(client, app, "owner@example.org", PASSWORD)
    return client


@pytest.mark.slow  # 0.4 s and more of work
def test_upload_two_files_rename_move_and_delete(owner):
    dep = new_draft(owner)
    assert "No files yet." in files_page(owner, dep["id"])

    answer = upload(owner, dep["id"], ("data.csv", b"a,b\n1,2\n"), ("read me.txt", b"hello" * 1000))
    assert answer.status_code == 303 and answer.headers["Location"].endswith(f"/deposit/{dep['id']}/files#files")
    assert api_names(owner, dep["id"]) == ["data.csv", "read me.txt"]
    html = files_page(owner, dep["id"])
    assert notice(html) == "Uploaded data.csv, read me.txt."
    assert "2 files," in html and "5.0 kB" in html and "8 bytes" in html
    checksums = {f["filename"]: f["checksum"] for f in owner.get(f"{API}/{dep['id']}/files").json}
    assert checksums["data.csv"] in html and checksums["read me.txt"] in html
    assert notice(files_page(owner, dep["id"])) == ""  # a notice is shown once

    # The bytes stored are those sent.
    stored = download(owner, owner.get(f"{API}/{dep['id']}/files").json[1]["links"]["download"])
    assert stored.get_data() == b"hello" * 1000

    moved = post(owner, dep["id"], "/order", {"key": "read me.txt", "move": "up"})
    assert moved.status_code == 303 and api_names(owner, dep["id"]) == ["read me.txt", "data.csv"]
    assert notice(files_page(owner, dep["id"])) == "Moved read me.txt up."
    post(owner, dep["id"], "/order", {"key": "read me.txt", "move": "up"})  # already first: nothing changes
    assert api_names(owner, dep["id"]) == ["read me.txt", "data.csv"]

    renamed = post(owner, dep["id"], "/read%20me.txt/rename", {"name": "README.txt"})
    assert renamed.status_code == 303 and api_names(owner, dep["id"]) == ["README.txt", "data.csv"]
    taken = post(owner, dep["id"], "/README.txt/rename", {"name": "data.csv"})
    assert taken.status_code == 303 and "is there already" in notice(files_page(owner, dep["id"]))

    deleted = post(owner, dep["id"], "/data.csv/delete", {})
    assert deleted.status_code == 303 and api_names(owner, dep["id"]) == ["README.txt"]
    assert notice(files_page(owner, dep["id"])) == "Deleted data.csv."
    gone = post(owner, dep["id"], "/data.csv/delete", {})
    assert gone.status_code == 303 and "does not exist" in notice(files_page(owner, dep["id"]))


def test_back_to_the_form_by_default(owner):
    dep = new_draft(owner)
    token = csrf_from(files_page(owner, dep["id"]))
    for wanted in (None, "https://evil.example/", f"/deposit/{dep['id'] + 1}"):
        form = {"csrf_token": token, "file": (io.BytesIO(b"x"), f"f{len(str(wanted))}.txt")}
        if wanted:
            form["next"] = wanted
        answer = owner.post(f"/deposit/{dep['id']}/files", data=form, headers=referer("/deposit/1"),
                            content_type="multipart/form-data")
        assert answer.status_code == 303
        assert answer.headers["Location"].endswith(f"/deposit/{dep['id']}#files")
    form = owner.get(f"/deposit/{dep['id']}").get_data(as_text=True)  # the deposit form shows the file area
    assert 'id="files"' in form and notice(form) == "Uploaded f10.txt."
    assert all(f'data-key="{name}"' in form for name in ("f4.txt", "f21.txt", "f10.txt"))


def test_refusals_are_notices_and_change_nothing(owner):
    dep = new_draft(owner)
    upload(owner, dep["id"], ("data.csv", b"1"))
    again = upload(owner, dep["id"], ("other.txt", b"2"), ("data.csv", b"3"))
    assert again.status_code == 303
    text = notice(files_page(owner, dep["id"]))
    assert text.startswith("Uploaded other.txt. “data.csv” was not uploaded: A file named “data.csv” is there")
    assert download(owner, owner.get(f"{API}/{dep['id']}/files").json[0]["links"]["download"]).get_data() == b"1"

    nothing = post(owner, dep["id"], "", {}, content_type="multipart/form-data")
    assert nothing.status_code == 303 and "Choose one or more files" in notice(files_page(owner, dep["id"]))
    bad_name = upload(owner, dep["id"], ("..", b"x"))
    assert bad_name.status_code == 303 and "Invalid file name" in notice(files_page(owner, dep["id"]))
    bad_move = post(owner, dep["id"], "/order", {"key": "data.csv", "move": "sideways"})
    assert bad_move.status_code == 303 and "up or down" in notice(files_page(owner, dep["id"]))
    assert sorted(api_names(owner, dep["id"])) == ["data.csv", "other.txt"]


def test_a_forged_form_changes_nothing(owner):
    dep = new_draft(owner)
    page = f"/deposit/{dep['id']}/files"
    for headers, token in (({}, csrf_from(files_page(owner, dep["id"]))), (referer(page), "forged"),
                           (referer(page), None)):
        form = {"file": (io.BytesIO(b"x"), "x.txt")} | ({"csrf_token": token} if token else {})
        answer = owner.post(page, data=form, headers=headers, content_type="multipart/form-data")
        assert answer.status_code == 400 and answer.mimetype == "text/html"
        assert "refused" in answer.get_data(as_text=True)
    assert api_names(owner, dep["id"]) == []


def test_another_users_deposition_is_not_found(owner, app):
    dep = new_draft(owner)
    upload(owner, dep["id"], ("data.csv", b"1"))
    other = https_client(app)
    guest = other.get(f"/deposit/{dep['id']}/files")
    assert guest.status_code == 302 and "/login/" in guest.headers["Location"]  # a guest signs in first
    signed_in(other, app, "other@example.org", PASSWORD)
    assert other.get(f"/deposit/{dep['id']}/files").status_code == 404
    token = csrf_from(other.get("/deposit").get_data())
    page = f"/deposit/{dep['id']}/files"
    for path, data in (("", {"file": (io.BytesIO(b"x"), "x.txt")}), ("/data.csv/delete", {}),
                       ("/order", {"key": "data.csv", "move": "down"}), ("/data.csv/rename", {"name": "y"})):
        answer = other.post(page + path, data={"csrf_token": token} | data, headers=referer(page),
                            content_type="multipart/form-data")
        assert answer.status_code == 404 and answer.mimetype == "text/html", path
    assert other.get(f"/deposit/{dep['id'] + 999}/files").status_code == 404
    assert api_names(owner, dep["id"]) == ["data.csv"]


def test_a_published_deposition_refuses_changes(owner):
    dep = new_draft(owner)
    upload(owner, dep["id"], ("data.csv", b"a,b\n1,2\n"))
    published = owner.post(f"{API}/{dep['id']}/actions/publish", headers=session_headers(owner))
    assert published.status_code == 202, published.json
    html = files_page(owner, dep["id"])
    assert "its files are fixed" in html and f'action="/deposit/{dep["id"]}/files"' not in html
    for path, data in (("", {"file": (io.BytesIO(b"x"), "x.txt")}), ("/data.csv/delete", {}),
                       ("/order", {"key": "data.csv", "move": "down"}), ("/data.csv/rename", {"name": "y.csv"})):
        answer = post(owner, dep["id"], path, data, content_type="multipart/form-data")
        assert answer.status_code == 303, path
        assert "make a new version" in notice(files_page(owner, dep["id"])).lower(), path
    assert api_names(owner, dep["id"]) == ["data.csv"]


@contextmanager
def quota_of_1000(make_settings) -> Iterator[tuple]:  # type: ignore[no-untyped-def]
    """(app, signed-in client, draft) of a service whose buckets hold 1000 bytes."""
    application = create_app(make_settings(BUCKET_QUOTA_BYTES=1000))
    try:
        client = https_client(application)
        signed_in(client, application, "owner@example.org", PASSWORD)
        yield application, client, new_draft(client)
    finally:
        wait_all_idle()  # every background thread's connection back in the pool before the pool goes
        application.extensions["repository"].db.dispose()


def test_a_full_quota_is_a_notice_and_keeps_nothing(make_settings):
    with quota_of_1000(make_settings) as (application, client, dep):
        assert upload(client, dep["id"], ("a.bin", b"x" * 600)).status_code == 303
        refused = upload(client, dep["id"], ("b.bin", b"y" * 600))
        assert refused.status_code == 303
        text = notice(files_page(client, dep["id"]))
        assert "“b.bin” was not uploaded: Quota exceeded" in text and "1000 bytes" in text
        assert api_names(client, dep["id"]) == ["a.bin"]
        files = application.extensions["repository"].files
        stored = [p for p in Path(files.root).rglob("*") if p.is_file()]
        assert len(stored) == 1  # the refused copy was not kept
        # A body larger than the bucket may hold is refused before the form is read (no temporary copy).
        page = f"/deposit/{dep['id']}"
        too_large = client.post(f"{page}/files", data=b"z" * (1000 + 1024 * 1024 + 1), headers=referer(page),
                                content_type="multipart/form-data; boundary=x")  # the length alone refuses it
        assert too_large.status_code == 413 and too_large.mimetype == "text/html"
        assert api_names(client, dep["id"]) == ["a.bin"]


def test_names_that_need_escaping_work_through_every_form(owner):
    dep = new_draft(owner)
    odd = "résumé 100%?#&.txt"
    assert upload(owner, dep["id"], (odd, b"odd")).status_code == 303
    assert api_names(owner, dep["id"]) == [odd]
    html = files_page(owner, dep["id"])
    [action] = re.findall(r'action="([^"]+/rename)"', html)
    renamed = post(owner, dep["id"], action.removeprefix(f"/deposit/{dep['id']}/files"), {"name": odd + ".bak"})
    assert renamed.status_code == 303 and api_names(owner, dep["id"]) == [odd + ".bak"]
    [action] = re.findall(r'action="([^"]+/delete)"', files_page(owner, dep["id"]))
    assert post(owner, dep["id"], action.removeprefix(f"/deposit/{dep['id']}/files"), {}).status_code == 303
    assert api_names(owner, dep["id"]) == []


@pytest.mark.slow
def test_a_form_upload_streams_the_file(owner, tmp_path):
    """The file goes to the store in chunks: the memory this process allocates while a 16 MB file is uploaded
    stays a small fraction of the file."""
    dep = new_draft(owner)
    big = tmp_path / "big.bin"
    big.write_bytes(bytes(range(256)) * (16 * 4096))
    token = csrf_from(files_page(owner, dep["id"]))
    page = f"/deposit/{dep['id']}/files"
    with big.open("rb") as source:
        # The body is encoded first, into a temporary file of its own that is closed afterwards (the test client
        # would leave the one it makes open).
        body, length, boundary = stream_encode_multipart({"csrf_token": token,
                                                           "file": FileStorage(source, "big.bin")})
    with body:
        tracemalloc.start()
        try:
            answer = owner.post(page, input_stream=body, content_length=length, headers=referer(page),
                                content_type=f"multipart/form-data; boundary={boundary}")
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert answer.status_code == 303
    assert [f["filesize"] for f in owner.get(f"{API}/{dep['id']}/files").json] == [big.stat().st_size]
    assert peak < big.stat().st_size / 4, peak


def replace(client, dep_id: int, key: str, name: str, content: bytes):  # type: ignore[no-untyped-def]
    return post(client, dep_id, f"/{key}/replace", {"file": (io.BytesIO(content), name)},
                content_type="multipart/form-data")


def stored_bytes(client, dep_id: int, key: str) -> bytes:  # type: ignore[no-untyped-def]
    [found] = [f for f in client.get(f"{API}/{dep_id}/files").json if f["filename"] == key]
    return download(client, found["links"]["download"]).get_data()


def test_replace_keeps_the_name_and_place_and_shows_both_checksums(client, app):
    signed_in(client, app, "owner@example.org", PASSWORD)
    dep = new_draft(client)
    upload(client, dep["id"], ("data.csv", b"a,b\n1,2\n"), ("notes.txt", b"first notes"))
    newer = b"a,b\n1,2\n3,4\n"
    answer = replace(client, dep["id"], "data.csv", "data-corrected.csv", newer)
    assert answer.status_code == 303 and answer.headers["Location"].endswith(f"/deposit/{dep['id']}/files#files")
    assert api_names(client, dep["id"]) == ["data.csv", "notes.txt"]  # name and place kept
    assert stored_bytes(client, dep["id"], "data.csv") == newer
    html = files_page(client, dep["id"])
    assert notice(html) == "Replaced data.csv with data-corrected.csv."
    assert hashlib.md5(newer, usedforsecurity=False).hexdigest() in html
    assert hashlib.sha256(newer).hexdigest() in html and hashlib.sha256(b"first notes").hexdigest() in html
    assert hashlib.sha256(b"a,b\n1,2\n").hexdigest() not in html
    # Each file has its own labelled replace form, a plain file input that works without JavaScript.
    assert re.search(r'<label for="replace-\d+-1">A file to put in the place of data.csv', html)
    assert f'action="/deposit/{dep["id"]}/files/notes.txt/replace" enctype="multipart/form-data"' in html
    # Only one copy of the bytes is left for each file: the replaced file's went.
    files = app.extensions["repository"].files
    assert len([p for p in Path(files.root).rglob("*") if p.is_file()]) == 2


@pytest.mark.slow  # 0.4 s and more of work
def test_refused_replacements_keep_the_old_file(client, app):
    signed_in(client, app, "owner@example.org", PASSWORD)
    dep = new_draft(client)
    upload(client, dep["id"], ("data.csv", b"kept"))
    nothing = post(client, dep["id"], "/data.csv/replace", {}, content_type="multipart/form-data")
    assert nothing.status_code == 303
    assert notice(files_page(client, dep["id"])) == "Choose the file to put in the place of data.csv first."
    absent = replace(client, dep["id"], "gone.csv", "x.csv", b"x")
    assert absent.status_code == 303
    assert "There is no file named “gone.csv” to replace" in notice(files_page(client, dep["id"]))
    assert api_names(client, dep["id"]) == ["data.csv"] and stored_bytes(client, dep["id"], "data.csv") == b"kept"

    other = https_client(app)
    signed_in(other, app, "other@example.org", PASSWORD)
    token = csrf_from(other.get("/deposit").get_data())
    page = f"/deposit/{dep['id']}/files"
    theirs = other.post(f"{page}/data.csv/replace", data={"csrf_token": token, "file": (io.BytesIO(b"y"), "y")},
                        headers=referer(page), content_type="multipart/form-data")
    assert theirs.status_code == 404 and theirs.mimetype == "text/html"
    assert stored_bytes(client, dep["id"], "data.csv") == b"kept"

    published = client.post(f"{API}/{dep['id']}/actions/publish", headers=session_headers(client))
    assert published.status_code == 202, published.json
    frozen = replace(client, dep["id"], "data.csv", "y.csv", b"y")  # the files are fixed from now on
    assert frozen.status_code == 303
    assert "make a new version" in notice(files_page(client, dep["id"])).lower()
    assert stored_bytes(client, dep["id"], "data.csv") == b"kept"


def test_a_replacement_counts_only_the_difference_against_the_quota(make_settings):
    with quota_of_1000(make_settings) as (_application, client, dep):
        upload(client, dep["id"], ("a.bin", b"x" * 600))
        assert 'data-room="400"' in files_page(client, dep["id"])  # what the page's script checks before sending
        assert replace(client, dep["id"], "a.bin", "a2.bin", b"y" * 900).status_code == 303  # 900 fits in 1000
        assert stored_bytes(client, dep["id"], "a.bin") == b"y" * 900
        html = files_page(client, dep["id"])
        assert 'data-room="100"' in html and notice(html) == "Replaced a.bin with a2.bin."
        refused = replace(client, dep["id"], "a.bin", "a3.bin", b"z" * 1001)
        assert refused.status_code == 303
        assert "Quota exceeded" in notice(files_page(client, dep["id"]))
        assert stored_bytes(client, dep["id"], "a.bin") == b"y" * 900
