"""Builders for v1 record dicts (docs/reference-behaviour.md#record-json) and a generated corpus for the search tests."""

from __future__ import annotations

import copy
from typing import Any

TYPES = [("publication", "article"), ("publication", "preprint"), ("dataset", None), ("software", None),
         ("image", "photo"), ("poster", None)]
ACCESS = ["open", "open", "open", "embargoed", "restricted", "closed"]
WORDS = ["ocean", "glacier", "neural", "protein", "galaxy", "sediment", "climate", "genome"]


def make_record(recid: int, **overrides: Any) -> dict[str, Any]:
    """A published v1 record; `overrides` replace top-level keys, `metadata` keys merge."""
    doi = f"10.5281/zenodo.{recid}"
    record: dict[str, Any] = {
        "id": recid, "conceptrecid": str(recid - 1), "doi": doi, "conceptdoi": f"10.5281/zenodo.{recid - 1}",
        "created": "2021-04-01T09:12:33+00:00", "updated": "2021-04-01T09:13:02+00:00", "revision": 1,
        "owners": [1],
        "stats": {"views": 0, "version_views": 0, "downloads": 0},
        "files": [{"bucket": "b", "checksum": "md5:00", "key": "data.csv", "size": 5, "type": "csv",
                   "links": {"self": f"https://x/api/files/b/data.csv?{recid}"}}],
        "links": {"self": f"https://x/api/records/{recid}", "bucket": "https://x/api/files/b"},
        "metadata": {
            "title": f"Record {recid}", "description": "<p>Plain description</p>", "access_right": "open",
            "publication_date": "2021-04-01", "resource_type": {"type": "dataset", "title": "Dataset"},
            "creators": [{"name": "Doe, Jane", "orcid": "0000-0002-1825-0097"}], "doi": doi,
            "license": {"id": "CC-BY-4.0"},
            "relations": {"version": [{"index": 0, "is_last": True, "count": 1}]},
        },
    }
    meta = overrides.pop("metadata", {})
    record.update(copy.deepcopy(overrides))
    record["metadata"].update(copy.deepcopy(meta))
    return record


def corpus() -> list[dict[str, Any]]:
    """40 records: 12 concepts of 1-3 versions plus singles, spread over types, rights, years and places."""
    records = []
    for i in range(40):
        recid = 1000 + 2 * i  # conceptrecid = recid - 1 unless versioned below
        rtype, subtype = TYPES[i % len(TYPES)]
        access = ACCESS[i % len(ACCESS)]
        meta: dict[str, Any] = {
            "title": f"{WORDS[i % 8].capitalize()} study number {i}",
            "description": f"<p>About {WORDS[(i + 3) % 8]} and more.</p>",
            "access_right": access,
            "publication_date": f"{2015 + i % 8}-0{1 + i % 9}-1{i % 10}",
            "resource_type": {"type": rtype, **({"subtype": subtype} if subtype else {}), "title": rtype},
            "keywords": [WORDS[i % 8], f"kw-{i % 5}"] + (["a-b"] if i % 7 == 0 else []),
            "communities": [{"id": "zenodo"}] + ([{"id": "ecfunded"}] if i % 4 == 0 else []),
        }
        if i % 10 == 3:
            meta["locations"] = [{"lat": 46.2 + i / 100, "lon": 6.1, "place": "Geneva"}]
        if i % 10 == 7:
            meta["locations"] = [{"lat": -33.9, "lon": 151.2, "place": "Sydney"}, {"lat": 10.0, "lon": 170.0}]
        if i % 6 == 1:
            meta["custom"] = {"dwc:family": ["Felidae"], "obo:RO_0002453": [{"subject": ["Cat"], "object": ["Flea"]}]}
        if i % 5 == 2:
            meta["meeting"] = {"title": "Conf", "session": f"S{i % 3}", "session_part": f"P{i % 4}"}
        if i % 5 == 4:
            meta["journal"] = {"title": "Journal of Tests", "year": str(2010 + i % 3), "volume": str(i % 4)}
        # As the service builds them: files only on records whose files are public.
        files = [{"bucket": "b", "checksum": "md5:00", "key": f"f{i}.{'pdf' if i % 2 else 'csv'}", "size": i,
                  "type": "pdf" if i % 2 else "csv", "links": {"self": f"https://x/api/files/b/f{i}"}}]
        if meta.get("access_right", "open") != "open":
            files = []
        records.append(make_record(
            recid, metadata=meta, files=files, created=f"2022-01-{1 + i % 28:02d}T10:{i:02d}:00+00:00",
            stats={"views": i * 3 % 17, "version_views": i * 3 % 17}, owners=[1 + i % 3]))
    # Concept 1069 holds three versions: 1070 (v0), 1072 (v1), 1074 (last).
    for index, recid in enumerate((1070, 1072, 1074)):
        records[(recid - 1000) // 2] = make_record(
            recid, conceptrecid="1069", conceptdoi="10.5281/zenodo.1069",
            created=f"2023-0{index + 1}-01T00:00:00+00:00",
            metadata={"title": f"Versioned thing v{index}", "keywords": ["versioned"],
                      "relations": {"version": [{"index": index, "is_last": index == 2, "count": 3}]},
                      "communities": [{"id": "zenodo"}]})
    return records
