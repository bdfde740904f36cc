"""Fixtures for data-description documents over HTTP: example deposits and a way to wait for validation."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from helpers.datadesc_docs import API, CODEBOOK, VALID_ROWS, csv_bytes, descriptor_bytes
from helpers.factories import make_deposit


@pytest.fixture
def runner(app):  # type: ignore[no-untyped-def]
    """The app's background validator; every test ends with it idle, before the database goes away."""
    validator = app.extensions["repository"].validations
    yield validator
    validator.wait_idle()


@pytest.fixture(autouse=True)
def _idle_at_end(runner) -> Iterator[None]:  # type: ignore[no-untyped-def]
    yield


@pytest.fixture
def multipart(client, auth) -> Callable[..., dict]:  # type: ignore[no-untyped-def]
    """Upload `content` as `name` to a deposit through the old multipart interface; returns the file JSON."""

    def send(dep: dict, name: str, content: bytes, headers: dict | None = None) -> dict:
        response = client.post(
            f"{API}/{dep['id']}/files",
            data={"name": name, "file": (io.BytesIO(content), name)},
            headers=headers or auth,
            content_type="multipart/form-data",
        )
        assert response.status_code == 201, response.json
        return response.json

    return send


@pytest.fixture
def bucket_put(client, auth) -> Callable[..., dict]:  # type: ignore[no-untyped-def]
    """PUT `content` as `key` into the deposit's bucket; returns the object JSON."""

    def send(dep: dict, key: str, content: bytes) -> dict:
        bucket = dep["links"]["bucket"].replace("https://localhost", "")
        response = client.put(f"{bucket}/{key}", data=content, headers=auth)
        assert response.status_code == 200, response.json
        return response.json

    return send


@pytest.fixture
def package_deposit(client, auth, multipart, runner) -> Callable[..., tuple[dict, dict[str, dict]]]:  # type: ignore[no-untyped-def]
    """A deposit holding a datapackage.json, its data.csv and codebook (multipart); validated before returning."""

    def make(rows: list[str] = VALID_ROWS, descriptor: bytes | None = None, **overrides: Any) -> tuple[dict, dict]:
        dep = make_deposit(client, auth, **overrides)
        uploaded = {
            "data.csv": multipart(dep, "data.csv", csv_bytes(*rows)),
            "codebook.md": multipart(dep, "codebook.md", CODEBOOK),
            "datapackage.json": multipart(dep, "datapackage.json", descriptor or descriptor_bytes()),
        }
        runner.wait_idle()
        return dep, uploaded

    return make
