"""HTTP semantics of the bucket interface: which keys a PUT stores (last path segment, NFC, no dot segments, no
odd characters), whole files only (Content-Range refused), client checksums verified, `?versionId=`, and the
multipart interface's media type."""

import base64
import hashlib
import io
from urllib.parse import quote

import pytest
from helpers.factories import make_deposit, publish
from helpers.http import download, https_client
from helpers.seaweed import stored_paths

API = "/api/deposit/depositions"


@pytest.fixture
def bucket(client, auth) -> str:  # type: ignore[no-untyped-def]
    return make_deposit(client, auth)["links"]["bucket"].replace("https://localhost", "")


@pytest.fixture(scope="module")
def empty_bucket(module_app, module_auth) -> str:  # type: ignore[no-untyped-def]
    """A draft's bucket in the module's shared app, for the uploads that must be refused: each test checks
    that it is still empty and that no file was stored."""
    bucket = make_deposit(https_client(module_app), module_auth)["links"]["bucket"]
    return bucket.replace("https://localhost", "")


def keys(client, auth, bucket: str) -> list[str]:  # type: ignore[no-untyped-def]
    return [o["key"] for o in client.get(bucket, headers=auth).json["contents"]]


def stored_files(settings) -> list[str]:  # type: ignore[no-untyped-def]
    return stored_paths(settings)


def assert_error(response, status: int) -> None:  # type: ignore[no-untyped-def]
    assert response.status_code == status, (response.status_code, response.data[:300])
    assert response.json["status"] == status and response.json["message"]


# Keys ---------------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_stored_name_is_the_last_path_segment(client, auth, bucket):
    response = client.put(f"{bucket}/dir/sub/file.txt", data=b"one", headers=auth)
    assert response.status_code == 200 and response.json["key"] == "file.txt"
    assert response.json["links"]["self"].endswith(f"{bucket}/file.txt")
    assert download(client, f"{bucket}/file.txt", headers=auth).data == b"one"
    # Another folder, the same name: the same file, replaced. An encoded slash is a slash.
    assert client.put(f"{bucket}/other/file.txt", data=b"two", headers=auth).json["key"] == "file.txt"
    assert client.put(f"{bucket}/a%2Fb.txt", data=b"three", headers=auth).json["key"] == "b.txt"
    assert keys(client, auth, bucket) == ["file.txt", "b.txt"]
    assert download(client, f"{bucket}/file.txt", headers=auth).data == b"two"


@pytest.mark.parametrize("path", [".", "..", "a/./b.txt", "a/../b.txt", "../../etc/passwd", "%2E%2E", "x/%2e/y.txt"])
def test_dot_segments_are_refused(module_client, module_auth, empty_bucket, module_settings, path):
    response = module_client.put(f"{empty_bucket}/{path}", data=b"x", headers=module_auth)
    assert_error(response, 400)
    assert response.json["errors"][0]["field"] == "key"
    assert keys(module_client, module_auth, empty_bucket) == [] and stored_files(module_settings) == []


@pytest.mark.parametrize(
    "path",
    [
        "bad%01name.txt", "nul%00.txt", "del%7F.txt", "nel%C2%85.txt",  # control characters (C0, DEL, C1)
        "tab%09.txt", "line%0Abreak.txt",
        "back%5Cslash.txt",  # a path separator for a Windows downloader
        "gpj%E2%80%AE.exe",  # a right-to-left override: shown as "exe.jpg"
        "%FF%FE.txt",  # not UTF-8: would be stored as U+FFFD
        "a" * 256,  # longer than 255 bytes, the longest name file systems allow
        "\u00e9" * 128,  # 128 characters, 256 bytes in UTF-8
        "dir/",  # no file name after the last slash
    ],
)
def test_odd_keys_are_400_error_objects(module_client, module_auth, empty_bucket, module_settings, path):
    response = module_client.put(f"{empty_bucket}/{path}", data=b"x", headers=module_auth)
    assert_error(response, 400)
    assert keys(module_client, module_auth, empty_bucket) == [] and stored_files(module_settings) == []


def test_longest_names_and_unusual_but_harmless_characters_are_kept(client, auth, bucket):
    for name in ("a" * 255, "\u00e9" * 127, "r\u00e9sum\u00e9 (v2) [final] #1 & co.pdf", "\u6570\u636e.csv",
                 "\U0001f469\u200d\U0001f52c.txt", ".hidden", "no-extension"):
        response = client.put(f"{bucket}/{quote(name)}", data=b"x", headers=auth)
        assert response.status_code == 200 and response.json["key"] == name
        assert download(client, response.json["links"]["self"].replace("https://localhost", ""), headers=auth).data == b"x"


def test_keys_are_normalised_to_nfc(client, auth, bucket):
    decomposed, composed = "Cafe\u0301.txt", "Caf\u00e9.txt"  # as macOS sends it, as most others do
    first = client.put(f"{bucket}/{decomposed}", data=b"first", headers=auth)
    assert first.status_code == 200 and first.json["key"] == composed
    second = client.put(f"{bucket}/{composed}", data=b"second", headers=auth)
    assert second.json["key"] == composed
    assert keys(client, auth, bucket) == [composed]  # one file, replaced
    assert download(client, f"{bucket}/{decomposed}", headers=auth).data == b"second"
    assert client.delete(f"{bucket}/{decomposed}", headers=auth).status_code == 204
    assert keys(client, auth, bucket) == []


def test_a_leading_slash_is_merged_never_stored(client, auth, bucket):
    response = client.put(f"{bucket}//lead.txt", data=b"x", headers=auth)
    assert response.status_code == 308 and response.headers["Location"].endswith(f"{bucket}/lead.txt")
    assert keys(client, auth, bucket) == []
    assert client.put(f"{bucket}/lead.txt", data=b"x", headers=auth).json["key"] == "lead.txt"


def test_no_key_is_not_an_upload(client, auth, bucket):
    assert_error(client.put(f"{bucket}/", data=b"x", headers=auth), 405)


def test_multipart_names_obey_the_same_length_rule(client, auth):
    dep = make_deposit(client, auth)
    response = client.post(f"{API}/{dep['id']}/files", data={"name": "a" * 300, "file": (io.BytesIO(b"x"), "f")},
                           headers=auth, content_type="multipart/form-data")
    assert_error(response, 400)
    assert client.get(f"{API}/{dep['id']}/files", headers=auth).json == []


# Whole files and checksums ----------------------------------------------------------------------------------


def test_content_range_on_a_put_is_refused_and_nothing_is_stored(client, auth, bucket, settings):
    response = client.put(f"{bucket}/part.bin", data=b"x" * 1000, headers={**auth, "Content-Range": "bytes 0-999/2000"})
    assert_error(response, 400)
    assert response.json["errors"][0]["field"] == "Content-Range"
    assert keys(client, auth, bucket) == [] and stored_files(settings) == []
    client.put(f"{bucket}/part.bin", data=b"whole", headers=auth)
    again = client.put(f"{bucket}/part.bin", data=b"y" * 10, headers={**auth, "Content-Range": "bytes 0-9/20"})
    assert_error(again, 400)
    assert download(client, f"{bucket}/part.bin", headers=auth).data == b"whole"


BODY = b"the bytes of a file\n" * 100


def b64(digest: bytes) -> str:
    return base64.b64encode(digest).decode()


@pytest.mark.parametrize(
    "headers",
    [
        {"Content-MD5": b64(hashlib.md5(BODY).digest())},
        {"Content-MD5": hashlib.md5(BODY).hexdigest()},  # the hex form the reference sends on downloads
        {"Content-Digest": f"sha-256=:{b64(hashlib.sha256(BODY).digest())}:"},
        {"Content-Digest": f"sha-512=:{b64(hashlib.sha512(BODY).digest())}:, md5=:{b64(hashlib.md5(BODY).digest())}:"},
        {"Content-Digest": f"SHA-256=:{b64(hashlib.sha256(BODY).digest())}:"},
        {"Content-Digest": "crc32c=:AAAAAA==:"},  # an algorithm we do not compute is ignored (RFC 9530)
    ],
)
def test_matching_checksums_are_accepted(client, auth, bucket, headers):
    response = client.put(f"{bucket}/data.txt", data=BODY, headers={**auth, **headers})
    assert response.status_code == 200, response.json
    assert response.json["checksum"] == "md5:" + hashlib.md5(BODY).hexdigest()


@pytest.mark.slow
@pytest.mark.parametrize(
    "headers",
    [
        {"Content-MD5": b64(hashlib.md5(b"other").digest())},
        {"Content-MD5": hashlib.md5(b"other").hexdigest()},
        {"Content-Digest": f"sha-256=:{b64(hashlib.sha256(b'other').digest())}:"},
        {"Content-Digest": f"md5=:{b64(hashlib.md5(BODY).digest())}:, sha-256=:{b64(hashlib.sha256(b'x').digest())}:"},
        {"Content-MD5": b64(hashlib.md5(BODY).digest()), "Content-Digest": f"md5=:{b64(hashlib.md5(b'x').digest())}:"},
    ],
)
def test_a_checksum_mismatch_is_400_and_stores_nothing(client, auth, bucket, settings, headers):
    client.put(f"{bucket}/data.txt", data=b"kept", headers=auth)
    response = client.put(f"{bucket}/data.txt", data=BODY, headers={**auth, **headers})
    assert_error(response, 400)
    assert download(client, f"{bucket}/data.txt", headers=auth).data == b"kept"
    assert len(stored_files(settings)) == 1  # the refused upload left nothing on disk


@pytest.mark.parametrize(
    "headers",
    [
        {"Content-MD5": "not base64!"},
        {"Content-MD5": b64(b"fifteen bytes!!")},
        {"Content-MD5": ""},
        {"Content-Digest": "sha-256=abc"},
        {"Content-Digest": "sha-256=:not base64!:"},
        {"Content-Digest": f"sha-256=:{b64(hashlib.md5(BODY).digest())}:"},  # an MD5's length
        {"Content-Digest": "sha-256"},
        {"Content-Digest": ""},
        {"Content-Digest": ",,,"},
    ],
)
def test_malformed_checksum_headers_are_400(module_client, module_auth, empty_bucket, module_settings,
                                            headers):
    response = module_client.put(f"{empty_bucket}/data.txt", data=BODY, headers={**module_auth, **headers})
    assert_error(response, 400)
    assert keys(module_client, module_auth, empty_bucket) == [] and stored_files(module_settings) == []


@pytest.mark.slow
def test_large_upload_checked_with_sha256(client, auth, bucket):
    body = bytes(range(256)) * (8 * 1024 + 3)  # 2 MiB and a bit: several chunks
    header = {"Content-Digest": f"sha-256=:{b64(hashlib.sha256(body).digest())}:"}
    response = client.put(f"{bucket}/big.bin", data=io.BytesIO(body), headers={**auth, **header})
    assert response.status_code == 200 and response.json["size"] == len(body)


# Versions ---------------------------------------------------------------------------------------------------


def test_version_id_serves_that_version_or_404(client, auth, bucket):
    old = client.put(f"{bucket}/v.txt", data=b"old", headers=auth).json
    new = client.put(f"{bucket}/v.txt", data=b"new", headers=auth).json
    assert download(client, f"{bucket}/v.txt?versionId={new['version_id']}", headers=auth).data == b"new"
    assert download(client, new["links"]["version"].replace("https://localhost", ""), headers=auth).data == b"new"
    assert_error(download(client, f"{bucket}/v.txt?versionId={old['version_id']}", headers=auth), 404)
    assert_error(download(client, f"{bucket}/v.txt?versionId=nonsense", headers=auth), 404)
    assert client.head(f"{bucket}/v.txt?versionId={old['version_id']}", headers=auth).status_code == 404
    # Deleting "that version" must not delete the current one.
    assert_error(client.delete(f"{bucket}/v.txt?versionId={old['version_id']}", headers=auth), 404)
    assert keys(client, auth, bucket) == ["v.txt"]
    assert client.delete(f"{bucket}/v.txt?versionId={new['version_id']}", headers=auth).status_code == 204
    assert keys(client, auth, bucket) == []


def test_version_id_of_a_record_file(client, auth):
    dep = make_deposit(client, auth)
    client.put(dep["links"]["bucket"].replace("https://localhost", "") + "/data.csv", data=b"a,b\n", headers=auth)
    publish(client, auth, dep)
    entry = client.get(f"/api/records/{dep['id']}/files").json["entries"][0]
    url = entry["links"]["self"].replace("https://localhost", "")
    listing = client.get(url.rsplit("/", 1)[0]).json["contents"][0]
    assert download(client, f"{url}?versionId={listing['version_id']}").data == b"a,b\n"
    deposit_version = client.get(dep["links"]["bucket"].replace("https://localhost", ""), headers=auth).json
    assert_error(download(client, f"{url}?versionId={deposit_version['contents'][0]['version_id']}"), 404)


# The multipart interface's media type -----------------------------------------------------------------------


@pytest.mark.parametrize("content_type", ["application/json", "text/plain", "multipart/mixed; boundary=B",
                                          "application/x-www-form-urlencoded", None])
def test_multipart_upload_with_another_media_type_is_415(client, auth, content_type):
    dep = make_deposit(client, auth)
    headers = dict(auth)
    if content_type:
        headers["Content-Type"] = content_type
    response = client.post(f"{API}/{dep['id']}/files", data=b'{"name": "x"}', headers=headers)
    assert_error(response, 415)
    assert client.get(f"{API}/{dep['id']}/files", headers=auth).json == []


def test_multipart_upload_without_a_boundary_is_400(client, auth):
    dep = make_deposit(client, auth)
    response = client.post(f"{API}/{dep['id']}/files", data=b"--B\r\n", headers={**auth, "Content-Type": "multipart/form-data"})
    assert_error(response, 400)


@pytest.mark.parametrize("length", ["abc", "-5", "1e3", " 5", "1" * 5000, "99999999999999999999999"])
def test_a_malformed_content_length_stores_nothing(module_client, module_auth, empty_bucket, module_settings,
                                                   length):
    response = module_client.put(f"{empty_bucket}/cl.txt", data=b"hello", headers=module_auth,
                                 environ_overrides={"CONTENT_LENGTH": length})
    assert_error(response, 400)
    assert keys(module_client, module_auth, empty_bucket) == [] and stored_files(module_settings) == []
