"""`/metrics` over HTTP: off without METRICS_TOKEN, 401 without it, counters that move with the requests, gauges
read from the database and the index, and, under gunicorn, the requests of every worker process summed."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import requests
from helpers.factories import published
from helpers.http import free_port, https_client, wait_until_serving
from prometheus_client.parser import text_string_to_metric_families

from app import create_app

TOKEN = "scrape-secret-0123456789"
SCRAPE = {"Authorization": f"Bearer {TOKEN}"}


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """(sample name, sorted labels) -> value of a Prometheus text exposition."""
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def value(scraped: dict, name: str, **labels: str) -> float:
    return scraped.get((name, tuple(sorted(labels.items()))), 0.0)


def scrape(client) -> dict:  # type: ignore[no-untyped-def]
    response = client.get("/metrics", headers=SCRAPE)
    assert response.status_code == 200 and response.mimetype == "text/plain"
    return samples(response.get_data(as_text=True))


def test_metrics_are_off_without_a_token(client):
    assert client.get("/metrics").status_code == 404
    assert client.get("/metrics", headers=SCRAPE).status_code == 404


@pytest.mark.slow
def test_the_token_protects_them(make_settings):
    client = https_client(create_app(make_settings(METRICS_TOKEN=TOKEN)))
    missing = client.get("/metrics")
    assert missing.status_code == 401 and missing.json["status"] == 401
    assert missing.headers["WWW-Authenticate"].startswith("Bearer")
    assert client.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert client.get("/metrics", headers={"Authorization": f"Basic {TOKEN}"}).status_code == 401
    assert client.get("/metrics", headers=SCRAPE).status_code == 200


def test_guessing_the_token_is_throttled(make_settings):
    """Scrapes are counted per address before the token is compared: a guesser past the limit gets 429 whatever it
    sends (so a right guess is not told apart), at a rate no guessing gets anywhere with."""
    client = https_client(create_app(make_settings(METRICS_TOKEN=TOKEN)))
    answers = [client.get("/metrics", headers={"Authorization": f"Bearer guess-{n}"}).status_code for n in range(70)]
    assert set(answers[:60]) == {401} and set(answers[60:]) == {429}
    refused = client.get("/metrics", headers=SCRAPE)
    assert refused.status_code == 429 and refused.json["status"] == 429 and int(refused.headers["Retry-After"]) > 0


def test_unknown_methods_are_one_series(make_settings):
    """The method label takes the methods HTTP defines; anything else a client sends counts as `other`, so no
    guest can add series (memory, until restart) by inventing methods."""
    client = https_client(create_app(make_settings(METRICS_TOKEN=TOKEN)))
    for n in range(5):
        client.open("/api/", method=f"BREW{n}")
    scraped = scrape(client)
    methods = {dict(labels).get("method") for name, labels in scraped if name == "repository_http_requests_total"}
    assert not any(m and m.startswith("BREW") for m in methods)
    assert value(scraped, "repository_http_requests_total", endpoint="unmatched", method="other", status="405") == 5


@pytest.mark.slow
def test_counters_move_with_the_requests(make_settings, make_token):
    client = https_client(create_app(make_settings(METRICS_TOKEN=TOKEN, RATELIMIT_GUEST="3/minute")))
    before = scrape(client)
    for _ in range(3):
        assert client.get("/api/").status_code == 200
    assert client.get("/api/").status_code == 429
    assert client.get("/api/no-such-thing").status_code in (404, 429)
    after = scrape(client)
    ok = {"endpoint": "root.index", "method": "GET", "status": "200"}
    assert value(after, "repository_http_requests_total", **ok) - value(before, "repository_http_requests_total", **ok) == 3
    assert (value(after, "repository_http_request_duration_seconds_count", **ok)
            - value(before, "repository_http_request_duration_seconds_count", **ok)) == 3
    refused = value(after, "repository_ratelimit_rejections_total", endpoint="root.index")
    assert refused - value(before, "repository_ratelimit_rejections_total", endpoint="root.index") == 1
    sent = value(after, "repository_http_sent_bytes_total", endpoint="root.index")
    assert sent - value(before, "repository_http_sent_bytes_total", endpoint="root.index") > 3 * 100


@pytest.mark.slow
def test_gauges_read_the_database_and_the_index(make_settings, make_token):
    client = https_client(create_app(make_settings(METRICS_TOKEN=TOKEN)))
    auth = {"Authorization": f"Bearer {make_token()}"}
    before = scrape(client)
    assert value(before, "repository_index_documents") == 0
    assert value(before, "repository_source_up", source="database") == 1
    published(client, auth, content=b"x" * 5000)
    after = scrape(client)
    assert value(after, "repository_index_documents") == 1
    assert value(after, "repository_outbox_pending") == 0
    assert value(after, "repository_database_bytes") > 0
    received = value(after, "repository_http_received_bytes_total", endpoint="deposit_files.upload")
    assert received - value(before, "repository_http_received_bytes_total", endpoint="deposit_files.upload") > 5000


def test_a_dead_database_is_a_reading_not_an_error(make_settings):
    settings = make_settings(METRICS_TOKEN=TOKEN, AUTO_MIGRATE="false",
                             DATABASE_URL=f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/gone")
    scraped = scrape(https_client(create_app(settings)))
    assert value(scraped, "repository_source_up", source="database") == 0
    assert value(scraped, "repository_source_up", source="search") == 1


# --- the real server: two worker processes, one total -----------------------------------------------------------
@pytest.fixture(scope="module")
def metrics_env() -> Iterator[None]:
    """METRICS_TOKEN (and JSON logs, which name the process of each request) for this module's live server; a
    guest limit that the requests sent until both workers have answered cannot reach (one worker may take the
    first hundred connections on a busy machine)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("METRICS_TOKEN", TOKEN)
        patch.setenv("LOG_FORMAT", "json")
        patch.setenv("RATELIMIT_GUEST", "10000/minute")
        yield


def served_by(log_path: str, route: str) -> set[int]:
    """The processes whose access lines show a request to `route`."""
    pids = set()
    with open(log_path) as handle:
        for line in handle:
            if line.startswith("{"):
                entry = json.loads(line)
                if entry.get("logger") == "gunicorn.access" and entry.get("route") == route:
                    pids.add(entry["pid"])
    return pids


def test_the_workers_requests_are_summed(metrics_env, live_server):
    base, cert = live_server["url"], live_server["cert"]
    wait_until_serving(base, cert)
    sent = 0
    # A new connection each time: gunicorn's workers take turns accepting them; go on until both have answered.
    while sent < 20 or (len(served_by(live_server["log"], "/api/licenses/")) < 2 and sent < 400):
        assert requests.get(base + "/api/licenses/", verify=cert, timeout=30).status_code == 200
        sent += 1
    assert len(served_by(live_server["log"], "/api/licenses/")) == 2
    for _ in range(4):  # whichever worker answers the scrape, it reports every worker's requests
        scraped = samples(requests.get(base + "/metrics", headers=SCRAPE, verify=cert, timeout=30).text)
        assert value(scraped, "repository_http_requests_total",
                     endpoint="licenses.search_licenses", method="GET", status="200") == sent
