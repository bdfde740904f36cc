"""The search backend protocol both engines implement, and the result and aggregation shapes they share
(`open.py` opens one)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from repository.search.params import SearchRequest

# Terms aggregations: name -> (index field, size); `type` nests `subtype` (docs/reference-behaviour.md#search-parameters).
TERMS_FACETS = {"access_right": ("access_right", 10), "type": ("resource_type.type", 10),
                "file_type": ("filetype", 10), "keywords": ("keywords", 10), "communities": ("communities", 10)}
SUBTYPE = ("resource_type.subtype", 20)


@dataclass
class SearchResult:
    """One page: `_source` records in order, the exact total, OpenSearch-shaped aggregations, the next cursor."""

    hits: list[dict[str, Any]]
    total: int
    aggregations: dict[str, Any] = field(default_factory=dict)
    next_cursor: str | None = None


class SearchReader(Protocol):
    """What reading the index needs: the record searches and pages, the parity check, the health check."""

    def search(self, req: SearchRequest) -> SearchResult:
        """Run one search; raises ServiceUnavailable when the engine cannot answer."""

    def get_revisions(self) -> dict[int, int]:
        """recid -> indexed revision of every document in the live index (for parity checks)."""

    def ping(self) -> bool:
        """True when the engine answers."""

    def suggest(self, words: list[str]) -> list[str]:
        """`words` (analyzed by "exact", analysis.py) with each one no title or description holds replaced by the
        nearest frequent term of those fields, if any (the search page's "did you mean" when nothing matches)."""


# The fields whose terms "did you mean" offers (their unstemmed companions: a suggestion is a word as written).
SUGGEST_FIELDS = ("title.exact", "description.exact")


class SearchWriter(Protocol):
    """What keeping the live index in step with the database needs: the outbox's index rows, takedowns."""

    def index(self, docs: list[dict[str, Any]]) -> None:
        """Upsert index documents by recid (an older revision never replaces a newer one); visible on return."""

    def index_documents(self, entries: list[tuple[int, int, bytes]]) -> None:
        """As `index`, for the engine-ready form of the documents of distinct records: (recid, revision,
        `IndexBuilder.engine_document`), which the indexer has made already for the stored copies."""

    def delete(self, recids: Iterable[int], revisions: Mapping[int, int] | None = None) -> None:
        """Remove records from the index; visible on return; unknown ids are ignored. `revisions` gives a record's
        revision at its removal where known: no document of that revision or older may come back afterwards, not
        even from a rebuild that read it before the removal."""


class IndexBuilder(Protocol):
    """What a full rebuild needs: a new index beside the live one, loaded in bulk from the engine-ready documents
    stored at indexing, then swapped in."""

    engine: str  # names the engine-ready form of `engine_document` and its version (stored in built_records)
    # Older forms whose stored documents become this form by a cheap function of the document alone (no build):
    # a reindex upgrades them on the way, and the records stored beside them stay valid (records/stored.py).
    upgrades: dict[str, Callable[[bytes], bytes]]

    def create_new_index(self) -> str:
        """Start an empty index beside the live one; writes go to both until `swap`. Returns its name."""

    def building(self) -> bool:
        """True while a new index exists beside the live one (a rebuild or a bulk load not yet swapped in)."""

    def bulk_load(self, docs: Iterable[dict[str, Any]], batch_size: int = 500) -> int:
        """Load documents into the new index (not yet live); returns how many were loaded."""

    def engine_document(self, doc: dict[str, Any]) -> bytes:
        """An index document in the form the engine loads with no work per field (`load_documents`)."""

    def with_source(self, document: bytes, record: bytes) -> bytes:
        """`document` (an `engine_document` made without SOURCE_FIELD) with `record` (orjson bytes) as that field:
        what `engine_document` gives for the whole document, up to the order of its keys."""

    def load_documents(self, documents: Iterable[tuple[int, int, bytes]]) -> int:
        """Load (recid, revision, engine_document) into the new index the fastest way; returns how many."""

    def swap(self) -> None:
        """Make the new index the live one atomically, then drop the old one."""


class SearchBackend(SearchReader, SearchWriter, IndexBuilder, Protocol):
    """What the service needs from a search engine: each of its three roles (`open.py` opens one)."""


def terms_aggregation(buckets: dict[str, int], size: int, other: int = 0) -> dict[str, Any]:
    """Counts -> an OpenSearch terms aggregation: doc_count desc, then key asc, cut at `size`; `other` counts the
    documents of buckets the engine already left out."""
    ordered = sorted(buckets.items(), key=lambda kv: (-kv[1], str(kv[0])))
    return {"doc_count_error_upper_bound": 0, "sum_other_doc_count": other + sum(c for _, c in ordered[size:]),
            "buckets": [{"key": k, "doc_count": c} for k, c in ordered[:size]]}


def year_bucket(year: int, count: int) -> dict[str, Any]:
    """A yearly date_histogram bucket as OpenSearch renders it with format `yyyy`."""
    epoch_ms = int(datetime(year, 1, 1, tzinfo=UTC).timestamp() * 1000)
    return {"key_as_string": f"{year:04d}", "key": epoch_ms, "doc_count": count}


@dataclass(frozen=True)
class Parity:
    """How the index differs from the database: records missing, extra, or at another revision."""

    missing: list[int]
    extra: list[int]
    stale: list[int]

    @property
    def ok(self) -> bool:
        """True when the index holds exactly the expected records at their revisions."""
        return not (self.missing or self.extra or self.stale)


def compare_revisions(expected: dict[int, int], indexed: dict[int, int]) -> Parity:
    """Compare `{recid: revision}` of the published records with `backend.get_revisions()`."""
    return Parity(missing=sorted(expected.keys() - indexed.keys()), extra=sorted(indexed.keys() - expected.keys()),
                  stale=sorted(r for r in expected.keys() & indexed.keys() if expected[r] != indexed[r]))
