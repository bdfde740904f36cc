"""Backends for the search contract suite: the embedded engine, and a real OpenSearch node (OPENSEARCH_URL, or the
node the tests start) reached through the listener that checks every request against OpenSearch's specification."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import tantivy
from opensearchpy.exceptions import NotFoundError

from repository.search.backend import SearchBackend
from repository.search.documents import to_index_document
from repository.search.embedded.tantivy_query import register_analyzers, to_tantivy
from repository.search.mapping import fields
from repository.search.open import open_search

from .factories import corpus
from .opensearch_listener import Listener

BACKENDS = ["embedded", "opensearch"]


@pytest.fixture(scope="session")
def opensearch_proxy(opensearch_url: str) -> Iterator[Listener]:
    """The checking proxy in front of the real node: the node answers, the specification checks both ways."""
    with Listener(upstream=opensearch_url).running() as proxy:
        yield proxy


def _open(kind: str, tmp: Any, request: pytest.FixtureRequest) -> tuple[SearchBackend, Callable[[], None]]:
    if kind == "embedded":
        return open_search(f"embedded://{tmp}"), lambda: None
    proxy: Listener = request.getfixturevalue("opensearch_proxy")
    seen = len(proxy.problems)
    prefix = f"test{uuid.uuid4().hex[:10]}"
    backend = open_search(proxy.url, prefix=prefix, timeout=60)

    def cleanup() -> None:
        backend.client.indices.delete(index=f"{prefix}-*", params={"allow_no_indices": "true"})
        try:
            backend.client.indices.delete_index_template(name=prefix)
        except NotFoundError:
            pass
        assert proxy.problems[seen:] == [], "requests or answers outside OpenSearch's specification"

    return backend, cleanup


# How the corpus gets into the embedded engine: live writes (`index`), the reindex path (engine-ready JSON through
# `load_documents`), and tantivy Documents built field by field (`to_tantivy`, the reference the JSON form must equal).
LOADS = ["embedded", "embedded-bulk", "embedded-documents", *BACKENDS[1:]]


def _load(kind: str, backend: SearchBackend, docs: list[dict[str, Any]]) -> None:
    if kind == "embedded-bulk":
        backend.create_new_index()
        backend.load_documents((d["recid"], d["revision"], backend.engine_document(d)) for d in docs)
        backend.swap()
    elif kind == "embedded-documents":
        index = register_analyzers(tantivy.Index.open(str(backend.root / (backend.root / "CURRENT").read_text())))
        writer = index.writer(heap_size=50_000_000, num_threads=1)
        for doc in docs:
            writer.add_document(to_tantivy(doc, fields()))
        writer.commit()
        writer.wait_merging_threads()
    else:
        backend.index(docs)


@pytest.fixture(scope="module", params=LOADS)
def loaded(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchBackend]:
    """A backend holding the generated corpus (read-only for the tests using it)."""
    backend, cleanup = _open(request.param.partition("-")[0], tmp_path_factory.mktemp("loaded"), request)
    # Reversed, so the engine's internal order (insertion) disagrees with the recid tie-breaker.
    _load(request.param, backend, [to_index_document(r) for r in reversed(corpus())])
    yield backend
    cleanup()


@pytest.fixture(params=BACKENDS)
def fresh(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[SearchBackend]:
    """An empty backend for tests that write."""
    backend, cleanup = _open(request.param, tmp_path, request)
    yield backend
    cleanup()
