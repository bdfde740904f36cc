"""Search over published records: one `q` parser, one request model, two engines behind one protocol."""

from repository.search.backend import Parity, SearchBackend, SearchResult, compare_revisions
from repository.search.documents import to_index_document
from repository.search.open import open_search
from repository.search.params import SearchRequest, page_links, parse_search_args

__all__ = ["Parity", "SearchBackend", "SearchRequest", "SearchResult", "compare_revisions", "open_search",
           "page_links", "parse_search_args", "to_index_document"]
