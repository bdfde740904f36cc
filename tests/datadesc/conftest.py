"""Fixtures for the data-description tests: valid example documents and a folder of table files."""

from __future__ import annotations

import copy
import json
import socket
from pathlib import Path
from typing import Any

import pytest
from helpers.datadesc_docs import CORPUS, DESCRIPTOR, VALID_ROWS, csv_bytes


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Validation must work offline: any attempt to open a connection fails the test."""

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"network access attempted: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.fixture
def corpus() -> dict[str, Any]:
    """A valid software corpus document using every field."""
    return copy.deepcopy(CORPUS)


@pytest.fixture
def descriptor() -> dict[str, Any]:
    """A valid tabular dataset descriptor naming data.csv and codebook.md."""
    return copy.deepcopy(DESCRIPTOR)


@pytest.fixture
def package_dir(tmp_path: Path, descriptor: dict[str, Any]) -> Path:
    """A folder holding a valid datapackage.json, its data.csv and its codebook."""
    (tmp_path / "datapackage.json").write_text(json.dumps(descriptor, indent=2))
    (tmp_path / "data.csv").write_bytes(csv_bytes(*VALID_ROWS))
    (tmp_path / "codebook.md").write_text("# Codebook\n")
    return tmp_path
