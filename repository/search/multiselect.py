"""Multi-select facet counts (docs/api/records.md#facet-counts): each facet counts the records that every filter in
force matches but the facet's own, so that a count is what clicking it gives (with no value of that facet chosen)
or adds (with one chosen).

Above the engines: a facet whose counts differ from the search's own aggregations is counted by one more search of
the same backend, with the filters it applies and one hit, one search per distinct set of filters (at most one per
facet with a filter in force, plus one when post-filters are in force). A search with no facet filter costs
nothing more, and the default counting (`post_filter`, the reference's) never comes here."""

from __future__ import annotations

import dataclasses

from repository.search.backend import SearchReader, SearchResult
from repository.search.params import SearchRequest


def counted_without(req: SearchRequest, facet: str | None, facets: tuple[str, ...]) -> SearchRequest:
    """The search whose aggregations are `facets` counted under every filter of `req` but those of `facet`."""
    dropped = {id(node) for name, node in req.facet_filters if name == facet}
    kept = tuple(n for n in req.filters + req.post_filters if id(n) not in dropped)
    return dataclasses.replace(req, filters=kept, post_filters=(), facets=facets, size=1, offset=0, after=None,
                               multiselect=False)


def search(backend: SearchReader, req: SearchRequest) -> SearchResult:
    """`backend.search(req)`, its aggregations counted the multi-select way when `req.multiselect` asks."""
    result = backend.search(req)
    if not req.multiselect or not req.facets or not req.facet_filters:
        return result
    active = {name for name, _ in req.facet_filters}
    groups: dict[str | None, list[str]] = {}
    for facet in req.facets:
        if facet in active:
            groups.setdefault(facet, []).append(facet)
        elif req.post_filters:  # the search's own counts leave the post-filters out
            groups.setdefault(None, []).append(facet)
    aggregations = dict(result.aggregations)
    for own, names in groups.items():
        aggregations.update(backend.search(counted_without(req, own, tuple(names))).aggregations)
    return dataclasses.replace(result, aggregations=aggregations)
