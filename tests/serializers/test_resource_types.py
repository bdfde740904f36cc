"""The one resource-type table: pinned whole by a reviewed golden file, and every row renders in every format."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import orjson
import pytest
from helpers.xsd import validate
from reference_records import make_record

from serializers import OAI_FORMATS, REGISTRY, RenderContext
from serializers.errors import NotDescribable
from serializers.vocabulary import TYPES, type_info

GOLDEN = Path(__file__).parent / "golden" / "resource_types.json"
XML_FORMATS = {"marcxml": "marc21", "datacite": "datacite4", "datacite3": "datacite3", "dc": "oai_dc"}


def _table() -> bytes:
    rows = [dataclasses.asdict(rt) for rt in TYPES.values()]
    return orjson.dumps(rows, option=orjson.OPT_INDENT_2) + b"\n"


def test_table_matches_golden() -> None:
    # A changed cell changes what DataCite, CSL, JSON-LD, DC, MARC and BibTeX say: review it, then
    # REGEN_GOLDEN=1 rewrites this file along with the format goldens it moves.
    if os.environ.get("REGEN_GOLDEN") == "1":
        GOLDEN.write_bytes(_table())
    assert _table() == GOLDEN.read_bytes(), "the resource-type table differs from golden/resource_types.json"


def _record(type_id: str) -> dict:
    rt = TYPES[type_id]
    rtype = {"type": rt.type, "title": rt.title} | ({"subtype": rt.subtype} if rt.subtype else {})
    return make_record(2000, {
        "title": "A title", "publication_date": "2024-01-15", "description": "Text.", "resource_type": rtype,
        "license": {"id": "CC-BY-4.0"}, "creators": [{"name": "Lean, Lee"}],
        "journal": {"title": "J", "volume": "1"}, "notes": "A note.",
    })


@pytest.mark.parametrize("type_id", list(TYPES))
def test_every_row_renders_in_every_format(ctx: RenderContext, type_id: str) -> None:
    record = _record(type_id)
    assert type_info(record["metadata"]) is TYPES[type_id]
    for serializer in REGISTRY.values():
        if serializer.applies(record):
            assert serializer.render(record, ctx)
        else:  # a format for other kinds of record (Croissant: datasets)
            with pytest.raises(NotDescribable):
                serializer.render(record, ctx)
    for fmt, schema in XML_FORMATS.items():
        validate(REGISTRY[fmt].render(record, ctx), schema)
    for oai in OAI_FORMATS.values():
        assert len(oai.element(record, ctx))


@pytest.mark.parametrize("type_id", list(TYPES))
def test_bibtex_entry_type_is_one_of_the_rows_candidates(ctx: RenderContext, type_id: str) -> None:
    entry = REGISTRY["bibtex"].render(_record(type_id), ctx).decode()
    entry_type = entry.partition("{")[0].removeprefix("@")
    assert entry_type in (*TYPES[type_id].bibtex, "misc")
