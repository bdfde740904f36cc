"""Every reference record in every format equals its reviewed golden file (REGEN_GOLDEN=1 rewrites them)."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest
from reference_records import all_records

from serializers import REGISTRY, oai_format
from serializers.errors import NotDescribable
from serializers.text import page_document

GOLDEN = Path(__file__).parent / "golden"
REGEN = os.environ.get("REGEN_GOLDEN") == "1"
EXTENSIONS = {"v1": "json", "json": "json", "marcxml": "xml", "bibtex": "bib", "datacite": "xml",
              "datacite3": "xml", "dc": "xml", "csl": "json", "jsonld": "json", "citation": "txt",
              "linkset": "json", "linkset-text": "txt", "rocrate": "json", "croissant": "json", "codemeta": "json",
              "cff": "cff"}
NAMES = sorted(all_records())


def _check(path: Path, produced: bytes) -> None:
    if REGEN:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(produced)
    assert path.exists(), f"no golden file {path}; run with REGEN_GOLDEN=1 and review it"
    assert produced == path.read_bytes(), f"{path.name} differs from its golden file"


@pytest.mark.parametrize("fmt", sorted(REGISTRY))
@pytest.mark.parametrize("name", NAMES)
def test_record_matches_golden(records, ctx, name, fmt):
    if not REGISTRY[fmt].applies(records[name]):  # a format for other kinds of record (Croissant: datasets)
        with pytest.raises(NotDescribable):
            REGISTRY[fmt].render(records[name], ctx)
        return
    produced = REGISTRY[fmt].render(records[name], ctx)
    if EXTENSIONS[fmt] == "json":
        # Stored indented so a reviewer can read it; the content is still compared byte for byte.
        produced = orjson.dumps(orjson.loads(produced), option=orjson.OPT_INDENT_2) + b"\n"
    _check(GOLDEN / name / f"{fmt}.{EXTENSIONS[fmt]}", produced)


@pytest.mark.parametrize("prefix", ["oai_registry", "oai_registry3"])
def test_oai_wrapper_matches_golden(records, ctx, prefix):
    element = oai_format(prefix).element(records["article"], ctx)
    _check(GOLDEN / "article" / f"{prefix}.xml", page_document([element]))


def test_golden_set_has_no_strays():
    for name in NAMES:
        expected = {f"{fmt}.{EXTENSIONS[fmt]}" for fmt in REGISTRY if REGISTRY[fmt].applies(all_records()[name])}
        found = {p.name for p in (GOLDEN / name).iterdir()} - {"oai_registry.xml", "oai_registry3.xml"}
        assert found == expected, name
