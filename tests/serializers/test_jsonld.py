"""schema.org JSON-LD as Google's Dataset rich results and schema.org read it: plain-text descriptions, files with a
media type and a size, the repository as the DataCatalog, coverage in space and time, and links (`@id`) only to
identifiers that resolve."""

from __future__ import annotations

import copy
import re
from typing import Any

import orjson
import pytest

from serializers import REGISTRY

MEDIA_TYPE = re.compile(r"[a-z]+/[a-z0-9][-+.\w]*")


def render(record: dict, ctx) -> dict:  # type: ignore[no-untyped-def]
    return orjson.loads(REGISTRY["jsonld"].render(record, ctx))


def ids(value: Any) -> list[str]:
    """Every `@id` anywhere in a JSON-LD value."""
    if isinstance(value, dict):
        return [v for k, v in value.items() if k == "@id"] + [i for v in value.values() for i in ids(v)]
    if isinstance(value, list):
        return [i for v in value for i in ids(v)]
    return []


def test_description_and_method_are_plain_text(records, ctx):
    article = render(records["article"], ctx)
    assert article["description"] == "An abstract with a formula a < b & c."
    dataset = render(records["dataset"], ctx)
    assert dataset["description"] == "Hourly readings." and dataset["measurementTechnique"] == "Buoys."
    for name in records:
        assert "<p>" not in render(records[name], ctx).get("description", ""), name


def test_dataset_files_carry_media_type_and_size(records, ctx):
    dataset = render(records["dataset"], ctx)
    [download] = dataset["distribution"]
    assert download == {"@type": "DataDownload", "name": "readings.csv", "encodingFormat": "text/csv",
                        "contentSize": "987654321 B",
                        "contentUrl": records["dataset"]["files"][0]["links"]["self"]}
    assert MEDIA_TYPE.fullmatch(download["encodingFormat"])


def test_dataset_is_in_the_repository_catalog_and_free_when_open(records, ctx):
    dataset = render(records["dataset"], ctx)
    assert dataset["includedInDataCatalog"] == {"@type": "DataCatalog", "name": ctx.publisher, "url": ctx.base_url}
    assert dataset["isAccessibleForFree"] is True
    closed = copy.deepcopy(records["dataset"])
    closed["metadata"]["access_right"] = "restricted"
    restricted = render(closed, ctx)
    assert "distribution" not in restricted and "isAccessibleForFree" not in restricted
    assert "includedInDataCatalog" in restricted  # its description is still in the catalog


def test_google_dataset_required_and_recommended_properties(records, ctx):
    dataset = render(records["dataset"], ctx)
    for key in ("name", "description", "url", "identifier", "creator", "license", "version",
                "spatialCoverage", "temporalCoverage", "distribution", "includedInDataCatalog", "datePublished"):
        assert dataset.get(key), key
    assert "spatial" not in dataset and "temporal" not in dataset  # Google reads the *Coverage names
    assert dataset["temporalCoverage"] == ["2020-01-01/.."]


def test_locations_are_places_with_coordinates_when_known(records, ctx):
    places = render(records["dataset"], ctx)["spatialCoverage"]
    assert places == [
        {"@type": "Place", "name": "North Sea", "geo": {"@type": "GeoCoordinates", "latitude": 56.0,
                                                        "longitude": 3.0}},
        {"@type": "Place", "name": "Bergen, Norway"},
    ]
    assert render(records["article"], ctx)["spatialCoverage"][0]["description"] == "Main campus"


@pytest.mark.parametrize("name", ["article", "dataset", "software", "book", "patent", "photo"])
def test_every_id_is_an_absolute_url(records, ctx, name):
    for found in ids(render(records[name], ctx)):
        assert re.match(r"https?://[^\s/]+/", found), found


def test_is_part_of_only_what_resolves(records, ctx):
    record = copy.deepcopy(records["dataset"])
    record["metadata"]["related_identifiers"] = [
        {"identifier": "1234-5678", "relation": "isPartOf", "scheme": "issn"},
        {"identifier": "978-3-16-148410-0", "relation": "isPartOf", "scheme": "isbn"},
        {"identifier": "10.1234/series.1", "relation": "isPartOf", "scheme": "doi"},
        {"identifier": "https://example.org/collection", "relation": "isPartOf", "scheme": "url"},
        {"identifier": "ark:/13030/tf5p30086k", "relation": "hasPart", "scheme": "ark"},
        {"identifier": "urn:lsid:ubio.org:namebank:11815", "relation": "isIdenticalTo", "scheme": "lsid"},
    ]
    out = render(record, ctx)
    assert out["isPartOf"] == [{"@id": "https://doi.org/10.1234/series.1"}, {"@id": "https://example.org/collection"},
                               {"@id": f"{ctx.base_url}/communities/ocean"}]
    assert out["hasPart"] == [{"@id": "https://n2t.net/ark:/13030/tf5p30086k"}]
    assert "sameAs" not in out  # an LSID has no resolver


def test_funders_of_the_grants(records, ctx):
    funders = render(records["article"], ctx)["funder"]
    assert {f["name"] for f in funders} == {"European Commission", "National Institutes of Health"}
    assert all(f["@type"] == "Organization" and f["@id"].startswith("https://doi.org/10.13039/") for f in funders)
