"""The files suite runs against both stores (docs/operators/object-storage.md): every test that builds its settings
(`make_settings`) runs once on the local directory and once on S3 (SeaweedFS, a bucket of its own per test). The S3
runs are `slow` (a plain `pytest` leaves them out; scripts/test.sh and .ci/run run them). A test about the local
directory itself (its files on disk, fsync, a full file system) is marked `local_store` and runs on it alone."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator

import pytest
from helpers.seaweed import Weed, answers, empty_bucket, start_weed

from repository.config import Settings

STORES = ["local", pytest.param("s3", marks=pytest.mark.slow)]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "local_store: about the local directory store itself; not run on S3")
    config.addinivalue_line("markers", "s3_store: about the S3 store itself; run on S3 only")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "files_store" in metafunc.fixturenames:
        marked = metafunc.definition.get_closest_marker
        stores = ["local"] if marked("local_store") else STORES[1:] if marked("s3_store") else STORES  # S3: slow
        metafunc.parametrize("files_store", stores, scope="function")


@pytest.fixture(scope="session")
def weed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Weed]:
    """The S3 server: TEST_S3_ENDPOINT's (.ci/run starts one), else one of this test process's own."""
    endpoint = os.environ.get("TEST_S3_ENDPOINT", "")
    if endpoint:
        if not answers(endpoint):
            pytest.fail(f"TEST_S3_ENDPOINT={endpoint} does not answer (bash scripts/seaweedfs.sh start)")
        yield Weed(endpoint)
        return
    server = start_weed(str(tmp_path_factory.mktemp("weed")))
    yield server
    server.stop()


@pytest.fixture
def s3_settings(request: pytest.FixtureRequest) -> Iterator[dict[str, object]]:
    """Settings naming a fresh bucket of the S3 server (created by the service at start-up), emptied and removed
    after the test."""
    server: Weed = request.getfixturevalue("weed")
    bucket = f"t-{uuid.uuid4().hex[:24]}"
    yield server.settings(bucket)
    empty_bucket(server, bucket)


@pytest.fixture
def make_settings(make_settings: Callable[..., Settings], files_store: str,
                  request: pytest.FixtureRequest) -> Callable[..., Settings]:
    if files_store == "local":
        return make_settings
    store = request.getfixturevalue("s3_settings")
    return lambda **overrides: make_settings(**{**store, **overrides})
