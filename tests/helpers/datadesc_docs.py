"""The data-description documents the datadesc tests share: a corpus, a descriptor, valid rows, CSV bytes."""

from __future__ import annotations

import copy
import json
from typing import Any

HEADER = "country,year,value,indicator,source,unit,notes"

CORPUS: dict[str, Any] = {
    "research_software": [
        {
            "canonical_url": "https://host-a.example/group/tool",
            "platform": "host-a",
            "mentions": [
                {
                    "metadata_source": "extract-urls-pmc",
                    "id": "PMC123456",
                    "id_type": "pmc",
                    "pub_date": "2021-03",
                    "version": {
                        "identification_url": "https://host-a.example/group/tool/releases/tag/v1.2",
                        "type": "tag",
                        "based_on": "url",
                        "version": "v1.2",
                        "reference": "v1.2",
                        "date": "2021-02-01T10:00:00Z",
                        "archive_url": "https://archive.example/record/1",
                    },
                    "mentioning_urls": [
                        "https://host-a.example/group/tool",
                        "https://host-a.example/group/tool/x",
                    ],
                }
            ],
            "repositories": [
                {
                    "vcs": "git",
                    "clone_url": "https://host-a.example/group/tool.git",
                    "accessible": True,
                    "main_repo": True,
                    "trunk": False,
                    "structure": None,
                    "latest": {
                        "version": "v1.3",
                        "version_type": "tag",
                        "revision_id": "0123456789abcdef0123456789abcdef01234567",
                        "tag_sha": "abcde",
                        "languages": [{"language": "Python", "fraction": 0.93}],
                        "date": "2022-05-06T07:08:09+02:00",
                        "archive_id": "arc:1:rel:abc123;origin=https://host-a.example/group/tool;visit=1",
                        "archive_dir_id": "arc:1:dir:def456",
                        "licenses": [{"license": "MIT", "confidence": 98}],
                        "metadata_files": ["CITATION.cff", "codemeta.json", ".service.json"],
                        "id": "tool-latest",
                    },
                },
                {
                    "vcs": "svn",
                    "clone_url": None,
                    "accessible": None,
                    "trunk": True,
                    "structure": ["https://svn.example/tool", True, ["b1"], ["t1"], True, []],
                    "latest": {"version": "1234", "version_type": "revision", "revision_id": "1234"},
                },
            ],
        }
    ],
    "version": "2024-01-31",
    "date": "2024-01-31T12:00:00Z",
}

DESCRIPTOR: dict[str, Any] = {
    "name": "indicators",
    "title": "Country indicators",
    "description": "Indicators by country and year.",
    "id": "10.5281/zenodo.1234567",
    "version": "1.0.0",
    "created": "2024-02-29",
    "author": "A. Author",
    "license": "https://creativecommons.org/licenses/by/4.0/",
    "encoding": "UTF-8",
    "note": "Example",
    "codebook": "codebook.md",
    "resources": [
        {
            "name": "data",
            "path": "data.csv",
            "format": "csv",
            "mediatype": "text/csv",
            "encoding": "UTF-8",
            "schema": {
                "fields": [
                    {"name": "country", "type": "string", "description": "Country name or ISO code"},
                    {"name": "year", "type": "integer", "constraints": {"minimum": 1990, "maximum": 2030}},
                    {"name": "value", "type": "number"},
                    {"name": "indicator", "type": "string"},
                    {"name": "source", "type": "string"},
                    {"name": "unit", "type": "string"},
                    {"name": "notes", "type": "string"},
                ],
                "missingValues": ["", "NA", "N/A", "null", "NULL", "NaN"],
                "primaryKey": [],
                "foreignKeys": [],
            },
        }
    ],
}

VALID_ROWS = [
    "Germany,1990,1.5,gdp,World Bank,USD,first",
    "FR,2030,2,gdp,World Bank,USD,",
    "NLD,2001,-3.25e2,gdp,,,",
    "NA,2005,NA,gdp,N/A,null,NULL",
    "Bolivia,2010,NaN,,,,",
]


def csv_bytes(*rows: str, header: str = HEADER) -> bytes:
    """A CSV file's bytes from a header and rows."""
    return ("\n".join([header, *rows]) + "\n").encode()


# Over HTTP (tests/datadesc_api): the deposit API and the documents put in deposits.
API = "/api/deposit/depositions"
CODEBOOK = b"# Codebook\n\nOne row per country and year.\n"
INVALID_ROWS = ["Germany,1989,1.5,gdp,,,", "Atlantis,2000,2,gdp,,,", "France,2001,lots,gdp,,,"]

def descriptor_bytes(**changes: Any) -> bytes:
    """The example datapackage.json (data.csv and codebook.md), with top-level changes."""
    doc = copy.deepcopy(DESCRIPTOR)
    doc.update(changes)
    return json.dumps(doc).encode()


def file_id(client, auth, dep: dict, name: str) -> str:  # type: ignore[no-untyped-def]
    """The id of the deposit's file called `name`."""
    listing = client.get(f"{API}/{dep['id']}/files", headers=auth).json
    return next(f["id"] for f in listing if f["filename"] == name)


def report(client, auth, dep: dict, name: str) -> Any:  # type: ignore[no-untyped-def]
    """The deposit file's validation report response."""
    return client.get(f"{API}/{dep['id']}/files/{file_id(client, auth, dep, name)}/validation", headers=auth)
