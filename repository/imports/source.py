"""Talking to the service records are imported from, politely (docs/operators/migration.md#politeness): every
request waits out a `Retry-After` (429, 503) and an exhausted rate-limit window (`X-RateLimit-Remaining: 0` until
`X-RateLimit-Reset`), retries what failed on the way a few times, and reports what still fails as a SourceError
naming the address and the reason."""

from __future__ import annotations

import email.utils
import threading
import time
from collections.abc import Callable
from typing import Any

import orjson
import requests

RETRIES = 4  # attempts after the first, for a 429/5xx or a broken connection
LONGEST_WAIT = 300.0  # seconds: a source asking for longer is not waited for
TIMEOUT = 60.0  # seconds without a byte from the source
# The v1 record shape and its search envelope, under the reference's name, which this service takes as an alias
# (`application/json` would give this service's bare array of legacy records).
RECORDS = "application/vnd.zenodo.v1+json"


class SourceError(Exception):
    """A request to the source that failed for good (after the retries), or an answer that is not what the API
    answers; the message names the address and the reason."""


class Source:
    """The service at `base` (its BASE_URL), read with `token` if given; `sleep` waits (the tests hand in their
    clock's), `verify` is requests' (a CA bundle for a source with a self-signed certificate); `connections`: the
    requests in flight at most (the import's concurrency), each kept open for the next."""

    def __init__(self, base: str, token: str | None = None, verify: bool | str = True,
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.time,
                 connections: int = 10) -> None:
        self.base = base.rstrip("/")
        self.session = requests.Session()
        # requests keeps 10 connections a host: past that, each request would open (and handshake) a new one.
        adapter = requests.adapters.HTTPAdapter(pool_maxsize=max(10, connections))
        self.session.mount("https://", adapter)
        self.session.mount("http://", adapter)
        self.session.trust_env = False  # the operator's arguments say where to go, not the environment
        self.session.verify = verify
        self.session.headers["User-Agent"] = "repository-import/1 (+docs/operators/migration.md)"
        if token:
            self.session.headers["Authorization"] = f"Bearer {token}"
        # Results a page asks for: the reference service lists at most 25 a page to anonymous clients and 100 to
        # those with a token (docs/reference-behaviour.md#search), and refuses larger pages.
        self.page_size = 100 if token else 25
        self.sleep, self.clock = sleep, clock
        self.waited = 0.0  # seconds spent waiting on the source's word, for the final report
        self._window = threading.Lock()  # one wait for an exhausted window, not one per thread

    def json(self, url: str, params: dict[str, Any] | None = None) -> Any:
        """The JSON answer at `url` (absolute, or a path under the base); SourceError if there is none."""
        for attempt in range(2):  # a garbled answer is asked for once more
            response = self.get(url, params, stream=False, accept=RECORDS)
            try:
                return orjson.loads(response.content)
            except orjson.JSONDecodeError as exc:
                if attempt:
                    raise SourceError(f"{response.url}: the answer is not JSON ({exc})") from exc
        raise AssertionError("unreachable")

    def get(self, url: str, params: dict[str, Any] | None = None, stream: bool = True,
            accept: str = "*/*") -> requests.Response:
        """A 200 answer at `url`, after the waits and retries the source asks for; SourceError otherwise."""
        if not url.startswith(("http://", "https://")):
            url = self.base + url
        last = ""
        for attempt in range(RETRIES + 1):
            try:
                response = self.session.get(url, params=params, stream=stream, timeout=TIMEOUT,
                                            headers={"Accept": accept})
            except requests.RequestException as exc:
                last = f"{type(exc).__name__}: {exc}"
                self._wait(min(2.0 ** attempt, LONGEST_WAIT))
                continue
            self._respect_window(response)
            if response.status_code == 200:
                return response
            response.close()
            last = f"HTTP {response.status_code}"
            if response.status_code not in (429, 500, 502, 503, 504):
                break
            self._wait(self._retry_after(response, attempt))
        raise SourceError(f"{url}: {last}")

    def _retry_after(self, response: requests.Response, attempt: int) -> float:
        value = response.headers.get("Retry-After", "")
        if value.isdigit():
            return min(float(value), LONGEST_WAIT)
        try:  # or an HTTP date
            when = email.utils.parsedate_to_datetime(value).timestamp()
        except (TypeError, ValueError, IndexError):
            return min(2.0 ** attempt, LONGEST_WAIT)
        return min(max(when - self.clock(), 0.0), LONGEST_WAIT)

    def _respect_window(self, response: requests.Response) -> None:
        """The rate-limit headers this service and the reference send: an exhausted window is waited out before
        the next request rather than answered with 429s (docs/operators/migration.md#politeness)."""
        remaining, reset = response.headers.get("X-RateLimit-Remaining"), response.headers.get("X-RateLimit-Reset")
        if remaining != "0" or not (reset or "").isdigit():
            return
        with self._window:
            self._wait(min(max(float(str(reset)) - self.clock(), 0.0), LONGEST_WAIT))

    def _wait(self, seconds: float) -> None:
        if seconds > 0:
            self.waited += seconds
            self.sleep(seconds)

    def close(self) -> None:
        self.session.close()
