"""Publication dates the embedded engine's date column cannot hold (64-bit nanoseconds: 1677-09-22 to 2262-04-11),
which the deposit form accepts (any day of the years 1-9999): a digitised 16th-century work. tantivy refused the
whole document, so such a record was published but never found, and its indexing failed at every pass. Now the
date is left out of the column and ranges over the publication date are read from its sort key column: every
record is found, ordered and filtered by its date, through a live index and a reindex alike."""

from __future__ import annotations

import json

import pytest
from helpers.factories import published
from helpers.http import https_client
from helpers.search import ids, run

from repository.search.documents import to_index_document
from repository.search.open import open_search

from .factories import make_record

DATES = ["1500-01-01", "1677-09-21", "1677-09-22", "2016-02-26", "2262-04-11", "2262-04-12", "2300-06-01"]


@pytest.fixture(scope="module")
def dated(module_app, module_auth):  # type: ignore[no-untyped-def]
    """One record per date of DATES, published through the API: date -> record id."""
    http = https_client(module_app)
    return {date: published(http, module_auth, title=f"Astrolabe {date}", publication_date=date)["record_id"]
            for date in DATES}


def _dates(client, query: str) -> list[str]:  # type: ignore[no-untyped-def]
    """The publication dates of the records of DATES that `query` finds, in its order."""
    words = "" if "q=" in query else "q=title:astrolabe&"
    response = client.get(f"/api/records/?{words}size=20&{query}")
    assert response.status_code == 200, response.json
    return [hit["metadata"]["publication_date"] for hit in response.json["hits"]["hits"]]


@pytest.mark.slow
def test_every_record_is_found_in_the_order_of_its_date(module_client, dated):
    assert _dates(module_client, "sort=publication_date") == DATES
    assert _dates(module_client, "sort=-publication_date") == DATES[::-1]
    for date, recid in dated.items():
        found = module_client.get(f'/api/records/?q=title:"astrolabe {date}"').json["hits"]["hits"]
        assert [hit["id"] for hit in found] == [recid]


@pytest.mark.slow
@pytest.mark.parametrize(("query", "expected"), [
    ("publication_date=1400--1600", ["1500-01-01"]),
    ("publication_date=--1677-09-21", ["1500-01-01", "1677-09-21"]),
    ("publication_date=1677-09-21--1677-09-22", ["1677-09-21", "1677-09-22"]),
    ("publication_date=2262-04-11--", ["2262-04-11", "2262-04-12", "2300-06-01"]),
    ("publication_date=>1500-01-01--<2300-06-01", DATES[1:-1]),
    ("publication_date=1500--1500", ["1500-01-01"]),
    ("publication_date=1600--1676", []),
    ("publication_date=1600--1677", ["1677-09-21", "1677-09-22"]),
    ("q=title:astrolabe AND publication_date:[1400 TO 1700}", ["1500-01-01", "1677-09-21", "1677-09-22"]),
    # A bound within a day: the record of that day (at its start) is before it.
    ("q=title:astrolabe AND publication_date:[1500-01-01T12:00:00Z TO 1677-09-21T00:00:00Z]", ["1677-09-21"]),
    ("q=title:astrolabe AND publication_date:{1677-09-21 TO 2262-04-12T06:00:00Z}",
     ["1677-09-22", "2016-02-26", "2262-04-11", "2262-04-12"]),
    ("q=title:astrolabe AND publication_date:>2262-04-11", ["2262-04-12", "2300-06-01"]),
    ("q=title:astrolabe AND publication_date:<=1500-01-01", ["1500-01-01"]),
])
def test_a_date_range_finds_the_records_of_its_days(module_client, dated, query, expected):
    assert _dates(module_client, f"sort=publication_date&{query}") == expected


def test_the_years_facet_and_exists_count_every_record(module_client, dated):
    found = module_client.get("/api/records/?q=title:astrolabe AND _exists_:publication_date"
                              "&facets=publication_date").json
    assert found["hits"]["total"] == len(DATES)
    buckets = found["aggregations"]["publication_date"]["buckets"]
    years = {bucket["key_as_string"]: bucket["doc_count"] for bucket in buckets}
    assert years == {"1500": 1, "1677": 2, "2016": 1, "2262": 2, "2300": 1}


def test_a_stored_document_holding_such_a_date_is_reindexed_without_it(tmp_path):
    """A document stored before the dates were left out holds the date in its column's JSON, which tantivy refuses:
    the reindex loads it without the date, and it is found by its date through the key."""
    backend = open_search(f"embedded://{tmp_path}", cache_entries=0)
    docs = [to_index_document(make_record(recid, metadata={"publication_date": date}))
            for recid, date in ((11, "1500-01-01"), (12, "2016-02-26"))]
    stored = []
    for doc in docs:
        document = json.loads(backend.engine_document(doc))
        document["publication_date"] = [f"{doc['publication_date']}T00:00:00+00:00"]  # as it was stored
        stored.append((doc["recid"], doc["revision"], json.dumps(document).encode()))
    backend.create_new_index()
    assert backend.load_documents(stored) == 2
    backend.swap()
    assert ids(run(backend, sort="publication_date")) == [11, 12]
    assert ids(run(backend, q="publication_date:[1400 TO 1600]")) == [11]
    assert ids(run(backend, q="publication_date:[2016 TO 2017]")) == [12]
    assert ids(run(backend, publication_date="--2000")) == [11]


def test_a_document_refused_for_another_reason_is_still_refused(tmp_path):
    """Only a date the column cannot hold is dropped and retried: any other fault the engine finds stays an error."""
    backend = open_search(f"embedded://{tmp_path}", cache_entries=0)
    document = json.loads(backend.engine_document(to_index_document(make_record(11))))
    document["recid"] = ["not a number"]
    backend.create_new_index()
    with pytest.raises(ValueError):
        backend.load_documents([(11, 1, json.dumps(document).encode())])
