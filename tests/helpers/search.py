"""Searching a backend the way a client asks, and reading the ids of a page."""

from __future__ import annotations

from typing import Any

from werkzeug.datastructures import MultiDict

from repository.search.backend import SearchBackend, SearchResult
from repository.search.params import parse_search_args


def run(backend: SearchBackend, **args: Any) -> SearchResult:
    """Search with query arguments as a client sends them."""
    return backend.search(parse_search_args(MultiDict(args), cursor_key=b"test-key"))


def ids(result: SearchResult) -> list[int]:
    """The record ids of a page, in order."""
    return [hit["id"] for hit in result.hits]
