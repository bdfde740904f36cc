"""Fixtures for the serializer tests: the reference records and a render context."""

from __future__ import annotations

import os
import sys

import pytest

# The root conftest puts tests/ on sys.path, where this directory would pass for a namespace package named
# `serializers` and hide the real one (the editable install's finder runs after the path finder). A regular
# package in any sys.path entry wins over namespace portions, so the project root on the path fixes it.
# Lasting fix for the whole suite: `pythonpath = ["."]` in [tool.pytest.ini_options].
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)
if getattr(sys.modules.get("serializers"), "__file__", "") is None:
    del sys.modules["serializers"]

from reference_records import BASE, PREFIX, all_records  # noqa: E402

from serializers import RenderContext  # noqa: E402


@pytest.fixture(scope="session")
def records() -> dict[str, dict]:
    """Fixture name -> reference record (shared: tests must not mutate it)."""
    return all_records()


@pytest.fixture(scope="session")
def ctx() -> RenderContext:
    """The context the golden files were rendered with."""
    return RenderContext(base_url=BASE, doi_prefix=PREFIX, datacentre_symbol="REPO.TEST", publisher="Repository")
