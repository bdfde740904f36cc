"""Usage statistics under COUNTER Release 5 and Make Data Count, over HTTP: the traffic a review sent (HEAD, Range
continuations, a crawler, repeated clicks, two users, two versions) counted as investigations and requests with the
double-click filter, uniques per session (visitor and hour), totals per version and per concept."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from helpers.factories import new_version, published
from helpers.http import download, https_client

from app import create_app
from repository.ondemand import wait_all_idle

BASE = "https://localhost"
T0 = datetime(2026, 3, 2, 10, 0, 0)
FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0"
SAFARI = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_1) AppleWebKit/605.1.15 Version/17.1 Safari/605.1.15"
CRAWLER = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"  # on the COUNTER list
CHECKER = "curl/8.5.0"  # the test's own reads of the counts: a machine on the COUNTER robots list, never counted
V1_FILE, V2_FILE = b"a,b\n1,2\n" * 50, b"v2 contents"


class Clock:
    """The app's now, set by the test: 30 s windows and hours pass without sleeping."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def at(self, seconds: float) -> None:
        self.now = T0 + timedelta(seconds=seconds)


def _stats(client, recid: int) -> dict:  # type: ignore[no-untyped-def]
    response = client.get(f"/api/records/{recid}", headers={"User-Agent": CHECKER})
    assert response.status_code == 200
    return response.json["stats"]


def _counts(stats: dict, prefix: str = "") -> tuple[int, ...]:
    return tuple(stats[prefix + name] for name in ("views", "unique_views", "downloads", "unique_downloads", "volume"))


def _file(client, recid: int) -> str:  # type: ignore[no-untyped-def]
    record = client.get(f"/api/records/{recid}", headers={"User-Agent": CHECKER}).json
    return record["files"][0]["links"]["self"].replace(BASE, "")


@pytest.mark.slow
def test_the_reviews_traffic_is_counted_as_counter_says(app, client, auth, make_token):
    services = app.extensions["repository"]
    clock = services.clock = Clock(T0 - timedelta(hours=2))
    first = published(client, auth, content=V1_FILE)
    v1, v2 = first["id"], new_version(client, auth, first, V2_FILE)
    file1, file2 = _file(client, v1), _file(client, v2)
    services.stats.on_pass()
    assert _counts(_stats(client, v1)) == _counts(_stats(client, v1), "version_") == (0, 0, 0, 0, 0)

    guest = {"User-Agent": FIREFOX}
    user_b = {"Authorization": f"Bearer {make_token('second@example.org')}", "User-Agent": SAFARI}

    def get(url: str, headers: dict, seconds: float, address: str = "192.0.2.10", **extra: str) -> int:
        clock.at(seconds)
        response = download(client, url, headers={**headers, **extra}, environ_base={"REMOTE_ADDR": address})
        return response.status_code

    def head(url: str, headers: dict, seconds: float) -> int:
        clock.at(seconds)
        response = client.head(url, headers=headers, environ_base={"REMOTE_ADDR": "192.0.2.10"})
        response.close()  # a file response's handle, as a server would
        return response.status_code

    # Investigations of version 1 by a guest: the landing page, then the API twice within 30 s of the previous click
    # (double clicks: one investigation), then again 40 s later (a second one). HEADs send nothing: not counted.
    assert get(f"/records/{v1}", guest, 0) == 200
    assert get(f"/api/records/{v1}", guest, 10) == 200
    services.stats.on_pass()  # a pass in the middle of a double click: the filter spans passes
    assert get(f"/api/records/{v1}", guest, 20) == 200
    assert get(f"/api/records/{v1}", guest, 60) == 200
    assert head(f"/api/records/{v1}", guest, 61) == head(f"/records/{v1}", guest, 61) == 200
    # A crawler reads the page, the API and the file: none of it counts.
    for url in (f"/records/{v1}", f"/api/records/{v1}", file1):
        assert get(url, {"User-Agent": CRAWLER}, 62) == 200

    # User B (a token: the user is the visitor, whatever the address) reads version 2 twice, 95 s apart, then once
    # more 10 s later from another address and browser (a double click); and version 1 once.
    assert get(f"/api/records/{v2}", user_b, 5) == 200
    assert get(f"/api/records/{v2}", user_b, 100) == 200
    assert get(f"/api/records/{v2}", {**user_b, "User-Agent": FIREFOX}, 110, address="198.51.100.7") == 200
    assert get(f"/api/records/{v1}", user_b, 100) == 200

    # Requests of version 1's file by the guest: a whole download; a Range continuation (not a new request); a
    # restart from byte 0 within 30 s (a double click); 35 s later a new download; HEAD never counts.
    assert get(file1, guest, 200) == 200
    assert get(file1, guest, 205, Range="bytes=100-") == 206
    assert get(file1, guest, 210, Range="bytes=0-99") == 206
    assert get(file1, guest, 245) == 200
    assert head(file1, guest, 246) == 200
    # An hour later: a new COUNTER session of the same guest (a second unique request).
    assert get(file1, guest, 3600 + 200) == 200
    # User B downloads version 2's file once.
    assert get(file2, user_b, 300) == 200

    services.indexer.run_pass()  # the worker's pass aggregates the events

    size1, size2 = len(V1_FILE), len(V2_FILE)
    # Version 1: the guest's 2 investigations and B's 1 (2 sessions); 3 requests in 2 sessions (the hours).
    assert _counts(_stats(client, v1), "version_") == (3, 2, 3, 2, 3 * size1)
    # Version 2: B's 2 investigations (1 session) and 1 request.
    assert _counts(_stats(client, v2), "version_") == (2, 1, 1, 1, size2)
    # The concept (every version): totals add up; B's session touched both versions but is one unique.
    concept = (5, 2, 4, 3, 3 * size1 + size2)
    assert _counts(_stats(client, v1)) == _counts(_stats(client, v2)) == concept
    assert services.indexer.run_pass() == 0 and _counts(_stats(client, v1)) == concept  # nothing counted twice

    # The landing page shows the same counts.
    page = client.get(f"/records/{v1}", headers={"User-Agent": CHECKER}).get_data(as_text=True)
    assert page and services.stats.on_pass() == 0  # a robot's read: not even an event


def test_two_processes_writing_out_of_order_still_filter_double_clicks(app, client, auth, settings):
    """Each server process buffers its own events: a click can reach the table after a later one already counted."""
    first_process = app.extensions["repository"]
    recid = published(client, auth)["id"]
    second_app = create_app(settings)  # another process on the same database
    second_process = second_app.extensions["repository"]
    try:
        other = https_client(second_app)
        first_process.clock, second_process.clock = Clock(T0 + timedelta(seconds=10)), Clock(T0)
        assert client.get(f"/api/records/{recid}", headers={"User-Agent": FIREFOX}).status_code == 200
        assert other.get(f"/api/records/{recid}", headers={"User-Agent": FIREFOX}).status_code == 200
        first_process.stats.on_pass()  # the later click first: counted for now
        assert _stats(client, recid)["version_views"] == 1
        second_process.stats.on_pass()  # the earlier one, 10 s before it: the two are one investigation
        assert _counts(_stats(client, recid), "version_")[:2] == (1, 1)
        first_process.clock.now = second_process.clock.now = T0 + timedelta(seconds=41)  # 31 s after the last
        assert other.get(f"/api/records/{recid}", headers={"User-Agent": FIREFOX}).status_code == 200
        second_process.stats.on_pass()
        assert _counts(_stats(client, recid), "version_")[:2] == (2, 1)
    finally:
        wait_all_idle()  # every background thread's connection back in the pool before the pool goes
        second_process.db.dispose()
