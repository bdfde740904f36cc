"""The v1 JSON written from a stored record's bytes without building the record (the full public export's lines,
docs/operators/export.md#speed) is byte for byte what `render_v1` writes for the record built from those bytes,
with its `stats` put in: generated records of every type, open ones with files (whose internal keys go), people with
keys beyond the specification's (built whole), and the odd shapes a record can take."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest
from generated_records import generated

from serializers.jsonformats import render_v1, render_v1_stored, stored_top

STATS = {"views": 12, "unique_views": 9, "downloads": 3, "unique_downloads": 2, "volume": 4096,
         "version_views": 5, "version_unique_views": 4, "version_downloads": 1, "version_unique_downloads": 1,
         "version_volume": 1024}


def _both(record: dict[str, Any]) -> tuple[bytes, bytes]:
    """(the stored-bytes way, `render_v1` of the record built from the same bytes)."""
    data = orjson.dumps(record)
    top = stored_top(data)
    fast = render_v1_stored(top, {"stats": STATS}) if top is not None else b"(built whole)"
    return fast, render_v1({**orjson.loads(data), "stats": STATS}, None)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", ["dataset", "software", "publication", "image"])
def test_generated_records_give_the_same_bytes(kind: str) -> None:
    records = [record for record, _files in generated(kind, 12)]
    assert any(record.get("files") for record in records)  # open records show their files, with internal keys
    assert any(set(item) - {"bucket", "checksum", "key", "links", "size", "type"}
               for record in records for item in record.get("files") or [])
    for record in records:
        fast, built = _both(record)
        assert fast == built
        assert orjson.loads(fast)["stats"] == STATS


def test_stats_are_replaced_where_they_are_and_added_last_when_missing() -> None:
    record, _files = generated("dataset", 1)[0]
    record = {**record, "stats": {"views": 0}}
    fast, built = _both(record)
    assert fast == built and list(orjson.loads(fast)) == list(record)
    del record["stats"]
    fast, built = _both(record)
    assert fast == built and list(orjson.loads(fast))[-1] == "stats"


def test_people_with_keys_beyond_the_specification_are_built_whole() -> None:
    record, _files = generated("software", 1)[0]
    record = copy.deepcopy(record)
    record["metadata"]["creators"][0]["affiliation_id"] = "https://ror.org/02bfwt286"
    assert stored_top(orjson.dumps(record)) is None
    out = orjson.loads(render_v1({**record, "stats": STATS}, None))  # type: ignore[arg-type]
    assert "affiliation_id" not in out["metadata"]["creators"][0]


@pytest.mark.parametrize("files", [None, [], [{"key": "a.csv", "id": "x", "size": 1.5e3, "note": "é \"q\" \\u2028"}]])
def test_odd_file_lists_give_the_same_bytes(files: Any) -> None:
    record, _files = generated("dataset", 1)[0]
    record = {**record, "files": files, "metadata": {**record["metadata"], "custom": {"stats": {"files": [1]}}}}
    fast, built = _both(record)
    assert fast == built


def test_what_is_no_json_object_is_built_whole() -> None:
    assert stored_top(b"[1, 2]") is None
    assert stored_top(b"{not json") is None
