"""The page tests' live servers (browser tests) get rate limits a journey cannot reach: a browser journey makes a
hundred requests a minute from one address (pages, its scripts' API calls, exports fetched by the test), which the
default guest and user limits would answer with 429 on a fast machine. The limits have tests of their own
(tests/web/test_ratelimit.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="module", autouse=True)
def roomy_rate_limits() -> Iterator[None]:
    # Module-scoped and autouse: set before a module's live server starts, which reads them from its environment.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RATELIMIT_GUEST", "10000/minute")
        patch.setenv("RATELIMIT_USER", "10000/minute")
        yield
