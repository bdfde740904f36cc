"""v1 record -> index document: field names of docs/reference-behaviour.md#index-fields, the stored record, sortable keys."""

from __future__ import annotations

from repository.search.documents import sort_key, sort_keys, to_index_document
from repository.search.mapping import fields

from .factories import corpus, make_record


def test_flat_fields_of_a_full_record():
    record = make_record(
        1001, conceptrecid="1000", stats={"views": 10, "version_views": 7, "downloads": 3},
        metadata={
            "description": "<p>Sensor &amp; data</p>", "keywords": ["a-b", "Sensors"],
            "resource_type": {"type": "publication", "subtype": "article", "title": "Journal article"},
            "communities": [{"id": "zenodo"}], "subjects": [{"term": "Astronomy", "identifier": "X1", "scheme": "s"}],
            "grants": [{"code": "123", "acronym": "AC", "title": "Grant", "funder": {"doi": "10.13039/1", "name": "F"}}],
            "journal": {"title": "J", "volume": 2, "year": "2020"}, "meeting": {"title": "M", "session": "S1"},
            "related_identifiers": [{"identifier": "10.1/x", "relation": "cites", "scheme": "doi"}],
            "locations": [{"lat": 1.5, "lon": 2, "place": "P"}, {"place": "nowhere"}],
            "relations": {"version": [{"index": 2, "is_last": False, "count": 3}]},
            "custom": {"dwc:family": ["Felidae"]},
        })
    doc = to_index_document(record)
    assert doc["recid"] == 1001 and doc["conceptrecid"] == 1000 and doc["revision"] == 1
    assert doc["doi"] == "10.5281/zenodo.1001" and doc["conceptdoi"] == "10.5281/zenodo.1000"
    assert doc["description"] == "Sensor & data"
    assert doc["creators.name"] == ["Doe, Jane"] and doc["creators.orcid"] == ["0000-0002-1825-0097"]
    assert doc["keywords"] == ["a-b", "Sensors"] and doc["communities"] == ["zenodo"]
    assert (doc["resource_type.type"], doc["resource_type.subtype"]) == ("publication", "article")
    assert doc["subject.term"] == ["Astronomy"] and doc["grants.funder.doi"] == ["10.13039/1"]
    assert doc["journal.volume"] == "2" and doc["meeting.session"] == "S1" and "meeting.place" not in doc
    assert doc["related.identifier"] == ["10.1/x"] and doc["related.relation"] == ["cites"]
    assert doc["locations.point"] == [{"lat": 1.5, "lon": 2.0}] and doc["locations.place"] == ["P", "nowhere"]
    assert (doc["relations.version.is_last"], doc["relations.version.index"]) == (False, 2)
    assert doc["stats.version_views"] == 7 and doc["stats.unique_views"] == 0
    assert doc["publication_date"] == "2021-04-01" and doc["year"] == 2021
    assert doc["created"] == "2021-04-01T09:12:33Z"
    assert (doc["filename"], doc["filetype"], doc["filecount"], doc["size"]) == (["data.csv"], ["csv"], 1, 5)
    assert doc["custom"] == ["dwc:family:Felidae"] and doc["owners"] == [1]
    assert doc["record"] == record


def test_every_document_field_is_in_the_template():
    mapped = set(fields())
    for record in corpus():
        assert set(to_index_document(record)) - {"record"} <= mapped


def test_non_open_records_carry_no_files_in_the_index():
    record = make_record(5, metadata={"access_right": "restricted"})
    doc = to_index_document(record)
    assert "files" not in doc["record"] and "bucket" not in doc["record"]["links"]
    assert "filename" not in doc and "filetype" not in doc and doc["filecount"] == 1
    assert "files" in record  # the caller's dict is not changed


def test_unversioned_records_count_as_the_last_version():
    record = make_record(5)
    del record["metadata"]["relations"]
    doc = to_index_document(record)
    assert (doc["relations.version.is_last"], doc["relations.version.index"], doc["relations.version.count"]) == \
        (True, 0, 1)


def test_sort_keys_order_like_their_parts():
    def key(created, recid):
        return sort_keys({"recid": recid, "created": created})["sort_mostrecent"]
    assert key("2020-01-01T00:00:00Z", 9) < key("2020-01-02T00:00:00Z", 1)
    assert key("2020-01-01T00:00:00Z", 1) < key("2020-01-01T00:00:00Z", 2)  # recid breaks ties
    assert key("2020-01-01T00:00:00Z", 1) < key(None, 1)  # missing sorts last

    def session(s, part, recid=1):
        return sort_keys({"recid": recid, "meeting.session": s, "meeting.session_part": part})[
            "sort_conference_session"]
    assert session("A", "2") < session("A", "1") < session("B", "9")  # session asc, part desc
    assert session("A", "ab") < session("A", "a")  # desc: a longer value with the same start comes first
    assert session("A", "z") < session("A", None)
    assert set(sort_key(["é"], 1)) <= set("0123456789abcdef")
