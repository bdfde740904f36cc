"""Downloads under RFC 9110: single byte ranges, what is ignored (several ranges, other units, HEAD, empty files),
what is 416, conditional requests in the RFC's order (If-Match, If-Unmodified-Since, If-None-Match,
If-Modified-Since, then Range with If-Range), HEAD."""

import hashlib

import pytest
from helpers.factories import make_deposit, published
from helpers.http import download, https_client
from werkzeug.http import http_date

CONTENT = bytes(range(256)) * 4  # 1,024 bytes
SIZE = len(CONTENT)
HUGE = "9" * 5000  # past the 4,300 digits int() accepts


@pytest.fixture(scope="module")
def url(module_app, module_auth) -> str:  # type: ignore[no-untyped-def]
    """A published file, built once for the module: the tests given it only read it (none counts downloads)."""
    client = https_client(module_app)
    dep = published(client, module_auth, content=CONTENT)
    record = client.get(f"/api/records/{dep['id']}").json
    return record["files"][0]["links"]["self"].replace("https://localhost", "")


def get(client, url: str, **headers: str):  # type: ignore[no-untyped-def]
    return download(client, url, headers={k.replace("_", "-"): v for k, v in headers.items()})


def head_of(client, url: str, **kwargs):  # type: ignore[no-untyped-def]
    """HEAD, closing the response's file as a server would."""
    response = client.head(url, **kwargs)
    response.close()
    return response


def assert_416(response) -> None:  # type: ignore[no-untyped-def]
    assert response.status_code == 416, (response.status_code, response.data[:200])
    assert response.json["status"] == 416 and response.json["message"]
    assert response.headers["Content-Range"] == f"bytes */{SIZE}"


@pytest.mark.parametrize(
    ("header", "start", "stop"),
    [
        ("bytes=100-199", 100, 200),
        ("bytes=1000-", 1000, SIZE),
        ("bytes=-24", SIZE - 24, SIZE),
        ("bytes=-5000", 0, SIZE),  # a suffix longer than the file: the whole file (RFC 9110 §14.1.3)
        (f"bytes=-{HUGE}", 0, SIZE),
        ("bytes=1000-99999999999999999999", 1000, SIZE),  # a last byte past the end is the end
        (f"bytes=10-{HUGE}", 10, SIZE),
        ("bytes=0-0", 0, 1),
        ("bytes=0-4,", 0, 5),  # an empty list element is allowed
        ("Bytes = 5-9", 5, 10),
    ],
)
def test_single_ranges(module_client, url, header, start, stop):
    response = get(module_client, url, Range=header)
    assert response.status_code == 206, (response.status_code, response.data[:200])
    assert response.data == CONTENT[start:stop]
    assert response.headers["Content-Range"] == f"bytes {start}-{stop - 1}/{SIZE}"
    assert response.headers["Content-Length"] == str(stop - start)
    assert "Content-MD5" not in response.headers  # the whole file's checksum would not match a part


@pytest.mark.parametrize(
    "header",
    [
        "bytes=0-1,3-4",  # several ranges: the whole file (RFC 9110 allows ignoring Range)
        "bytes=0-10, 20-30, 5000-",
        "items=0-3",  # another unit MUST be ignored
        "garbage",  # no unit at all
        "",
    ],
)
def test_ranges_answered_with_the_whole_file(module_client, url, header):
    response = get(module_client, url, Range=header)
    assert response.status_code == 200 and response.data == CONTENT
    assert response.headers["Content-MD5"] == hashlib.md5(CONTENT).hexdigest()


@pytest.mark.parametrize(
    "header",
    ["bytes=-0", "bytes=1024-", "bytes=5000-6000", f"bytes={HUGE}-", "bytes=9-5", "bytes=-5-10", "bytes=--5",
     "bytes=a-b", "bytes=", "bytes=,", "bytes=0-1,x"],
)
def test_unsatisfiable_or_malformed_byte_ranges_are_416(module_client, url, header):
    assert_416(get(module_client, url, Range=header))


def test_head_sends_the_headers_without_body_and_is_not_a_download(module_client, url):
    full = get(module_client, url)
    head = head_of(module_client, url)
    assert head.status_code == 200 and head.data == b""
    for name in ("Content-Length", "ETag", "Last-Modified", "Content-Type", "Content-MD5", "Accept-Ranges"):
        assert head.headers[name] == full.headers[name]
    ranged = head_of(module_client, url, headers={"Range": "bytes=0-9"})  # Range is defined for GET only
    assert ranged.status_code == 200 and ranged.headers["Content-Length"] == str(SIZE)
    assert head_of(module_client, url + "?versionId=nope").status_code == 404


def test_head_and_range_continuations_are_not_counted_as_downloads(app, client, auth):
    dep = published(client, auth, content=CONTENT)
    record = client.get(f"/api/records/{dep['id']}").json
    url = record["files"][0]["links"]["self"].replace("https://localhost", "")

    def downloads() -> tuple[int, int]:
        app.extensions["repository"].stats.on_pass()  # the worker's pass aggregates the counts
        stats = client.get(f"/api/records/{dep['id']}").json["stats"]
        return stats["version_downloads"], stats["version_volume"]

    head_of(client, url)
    assert get(client, url, Range="bytes=100-199").status_code == 206  # a continuation: no new request
    assert downloads() == (0, 0)
    assert get(client, url, Range="bytes=0-99").status_code == 206  # a download's start: the file's size counts
    assert downloads() == (1, SIZE)


@pytest.mark.parametrize("header", ["bytes=0-0", "bytes=-1", "bytes=5-", "bytes=0-1,2-3"])
def test_an_empty_file_with_a_range_is_the_empty_file(client, auth, header):
    dep = make_deposit(client, auth)
    bucket = dep["links"]["bucket"].replace("https://localhost", "")
    assert client.put(f"{bucket}/empty.txt", data=b"", headers=auth).json["size"] == 0
    response = download(client, f"{bucket}/empty.txt", headers={**auth, "Range": header})
    assert response.status_code == 200 and response.data == b""
    assert response.headers["Content-Length"] == "0"


# Conditional requests ---------------------------------------------------------------------------------------


def validators(client, url: str) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    response = head_of(client, url)
    return response.headers["ETag"], response.headers["Last-Modified"]


PAST, FUTURE = http_date(946684800), http_date(4102444800)  # 2000-01-01, 2100-01-01


def test_if_unmodified_since(module_client, url):
    _, modified = validators(module_client, url)
    failed = get(module_client, url, If_Unmodified_Since=PAST)
    assert failed.status_code == 412 and failed.json["status"] == 412 and failed.json["message"]
    assert get(module_client, url, If_Unmodified_Since=modified).status_code == 200
    assert get(module_client, url, If_Unmodified_Since=FUTURE).data == CONTENT
    assert get(module_client, url, If_Unmodified_Since="not a date").status_code == 200  # ignored (RFC 9110)
    assert get(module_client, url, If_Unmodified_Since=PAST, Range="bytes=0-9").status_code == 412


def test_if_match(module_client, url):
    etag, _ = validators(module_client, url)
    assert get(module_client, url, If_Match=etag).status_code == 200
    assert get(module_client, url, If_Match=f'"other", {etag}').status_code == 200
    assert get(module_client, url, If_Match="*").status_code == 200
    assert get(module_client, url, If_Match='"other"').status_code == 412
    assert get(module_client, url, If_Match=f"W/{etag}").status_code == 412  # If-Match compares strongly
    assert get(module_client, url, If_Match='"other"', Range="bytes=0-9").status_code == 412  # before Range
    # If-Match wins over If-Unmodified-Since (which is then not looked at).
    assert get(module_client, url, If_Match=etag, If_Unmodified_Since=PAST).status_code == 200


def test_if_none_match_and_if_modified_since(module_client, url):
    etag, modified = validators(module_client, url)
    not_modified = get(module_client, url, If_None_Match=etag)
    assert not_modified.status_code == 304 and not_modified.data == b""
    assert not_modified.headers["ETag"] == etag
    assert get(module_client, url, If_None_Match=f"W/{etag}").status_code == 304  # weak comparison
    assert get(module_client, url, If_None_Match=etag, Range="bytes=0-9").status_code == 304  # before Range
    # If-None-Match wins.
    assert get(module_client, url, If_None_Match='"other"', If_Modified_Since=FUTURE).status_code == 200
    assert get(module_client, url, If_Modified_Since=FUTURE).status_code == 304
    assert get(module_client, url, If_Modified_Since=modified).status_code == 304
    assert get(module_client, url, If_Modified_Since=PAST).status_code == 200
    assert get(module_client, url, If_Modified_Since="yesterday").status_code == 200


def test_if_range(module_client, url):
    etag, modified = validators(module_client, url)
    assert get(module_client, url, Range="bytes=0-9", If_Range=etag).status_code == 206
    assert get(module_client, url, Range="bytes=0-9", If_Range=modified).status_code == 206
    for stale in ('"other"', f"W/{etag}", PAST, "not a date"):
        response = get(module_client, url, Range="bytes=0-9", If_Range=stale)
        assert response.status_code == 200 and response.data == CONTENT
    # A changed file is never mixed with the part a module_client already has.
    assert get(module_client, url, Range="bytes=9999-", If_Range='"other"').status_code == 200
