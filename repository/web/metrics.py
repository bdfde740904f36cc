"""Prometheus metrics: requests (count and latency per endpoint, method and status), bytes received and sent,
rate-limit refusals, counted by each process; and, read from the database and the search engine when /metrics is
scraped, the outbox, the mail outbox, the index's documents and the database's size.

Under gunicorn every worker process counts its own requests: with PROMETHEUS_MULTIPROC_DIR set (gunicorn_conf does
so from the settings, before any worker imports prometheus_client) they are kept in files there and /metrics, in
whichever worker answers, sums them (prometheus_client's multiprocess mode). A single process (tests, `flask run`)
counts in memory.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator

from flask import Flask, Response, g, request
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector
from werkzeug.datastructures import MultiDict

from repository.search.params import parse_search_args
from repository.services import Services
from repository.worker import jobs

log = logging.getLogger(__name__)

REQUESTS = Counter("repository_http_requests", "Requests answered, by endpoint, method and status.",
                   ["endpoint", "method", "status"])
LATENCY = Histogram("repository_http_request_duration_seconds",
                    "Time from the request's arrival in the app to its response (a download's transfer left out).",
                    ["endpoint", "method", "status"],
                    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0))
RECEIVED = Counter("repository_http_received_bytes", "Request bodies received (uploads), by endpoint.", ["endpoint"])
SENT = Counter("repository_http_sent_bytes", "Response bodies sent (downloads), by endpoint.", ["endpoint"])
REFUSED = Counter("repository_ratelimit_rejections", "Requests refused with 429 (rate limits), by endpoint.",
                  ["endpoint"])


def install(app: Flask) -> None:
    """Count every request of `app` (call first in create_app: its clock starts before the other hooks run, the
    rate limiter's included)."""

    @app.before_request
    def start_clock() -> None:
        g.metrics_start = time.perf_counter()

    @app.after_request
    def count(response: Response) -> Response:
        try:
            _count(response)
        except Exception:  # noqa: BLE001 - metrics never fail a request
            log.exception("could not count the request in the metrics")
        return response


# The methods HTTP defines; any other a client sends is counted as "other" (one series, not one per invention).
METHODS = frozenset(("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE"))


def _count(response: Response) -> None:
    endpoint = request.endpoint or "unmatched"  # a 404 or 405: one series, not one per URL tried
    method = request.method if request.method in METHODS else "other"
    status_code = str(response.status_code)
    REQUESTS.labels(endpoint, method, status_code).inc()
    started = g.get("metrics_start")
    if started is not None:
        LATENCY.labels(endpoint, method, status_code).observe(time.perf_counter() - started)
    if request.content_length:
        RECEIVED.labels(endpoint).inc(request.content_length)
    if response.content_length and request.method != "HEAD":
        SENT.labels(endpoint).inc(response.content_length)
    if response.status_code == 429:
        REFUSED.labels(endpoint).inc()


class StateCollector(Collector):
    """Gauges read when scraped: the outbox and the mail outbox (pending, oldest, failing), the index's documents,
    the database's size and the free disk. A source that does not answer is reported by `repository_source_up` 0."""

    def __init__(self, services: Services) -> None:
        self.services = services

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("repository_source_up", "Whether the source answered this scrape.", labels=["source"])
        try:
            yield from self._database()
            up.add_metric(["database"], 1)
        except Exception as exc:  # noqa: BLE001 - a dead database is a reading, not a failed scrape
            log.warning("metrics: the database did not answer: %s", exc)
            up.add_metric(["database"], 0)
        try:
            yield self._index()
            up.add_metric(["search"], 1)
        except Exception as exc:  # noqa: BLE001 - as above
            log.warning("metrics: the search engine did not answer: %s", exc)
            up.add_metric(["search"], 0)
        yield up

    def _database(self) -> list[Metric]:
        # The same readings as the jobs page of the administration area (repository.worker.jobs).
        with self.services.db.read() as conn:
            now = jobs.readings(conn, self.services.db, self.services.files.root)
        queues = {"outbox": now.outbox, "mail_outbox": now.mail}
        found: list[Metric] = []
        for name, queue in queues.items():
            what = "outbox (indexing, DOI registration)" if name == "outbox" else "mail outbox"
            found += [
                GaugeMetricFamily(f"repository_{name}_pending", f"Entries of the {what} not yet done.",
                                  value=queue.pending),
                GaugeMetricFamily(f"repository_{name}_oldest_seconds",
                                  f"Age of the oldest pending entry of the {what} (0: none).", value=queue.oldest_seconds),
                GaugeMetricFamily(f"repository_{name}_failing", f"Pending entries of the {what} that failed at least once.",
                                  value=queue.failing),
            ]
        found.append(GaugeMetricFamily("repository_database_bytes", "Size of the database.", value=now.database_bytes))
        if now.disk_free_bytes is not None:
            found.append(GaugeMetricFamily("repository_disk_free_bytes", "Free bytes of the fullest disk among the "
                                           "files' and a SQLite database's.", value=now.disk_free_bytes))
        return found

    def _index(self) -> Metric:
        total = self.services.search.search(parse_search_args(MultiDict({"size": "1"}))).total
        return GaugeMetricFamily("repository_index_documents", "Records in the live search index.", value=total)


class _ThisProcess(Collector):
    """The metrics this process counted (and the process's own: CPU, memory, open files)."""

    def collect(self) -> Iterator[Metric]:
        yield from REGISTRY.collect()


def exposition(services: Services) -> Response:
    """The Prometheus text exposition of every metric: the counters of all processes, then the gauges read now."""
    registry = CollectorRegistry(auto_describe=False)
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        MultiProcessCollector(registry)
    else:
        registry.register(_ThisProcess())
    registry.register(StateCollector(services))
    return Response(generate_latest(registry), content_type=CONTENT_TYPE_LATEST, headers={"Cache-Control": "no-store"})
