"""Outputs parse back with independent readers and keep titles, creators, identifiers and hostile text."""

from __future__ import annotations

import io
import re

import bibtexparser
import orjson
import pymarc
import pytest
import yaml
from bibtexparser import middlewares
from datacite import schema45
from lxml import etree
from reference_records import all_records

from serializers import REGISTRY
from serializers.datacite import datacite_json
from serializers.text import clean

NAMES = sorted(all_records())
FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")


def _bibtex(text: str) -> bibtexparser.Library:
    library = bibtexparser.parse_string(
        text, append_middleware=[middlewares.LatexDecodingMiddleware(), middlewares.SeparateCoAuthors()]
    )
    assert not library.failed_blocks
    return library


@pytest.mark.parametrize("name", NAMES)
def test_marcxml_parses_back(records, ctx, name):
    record = clean(records[name])
    [marc] = pymarc.parse_xml_to_array(io.BytesIO(REGISTRY["marcxml"].render(records[name], ctx)))
    md = record["metadata"]
    assert marc["001"].data == str(record["id"])
    assert marc["245"]["a"] == md["title"]
    names = [f["a"] for f in marc.get_fields("100", "700") if "4" not in f]
    assert names == [c["name"] for c in md["creators"]]
    dois = [f["a"] for f in marc.get_fields("024") if f["2"] == "doi"]
    assert dois == [record["doi"]]


def test_marc_650_carries_the_real_license(records, ctx):
    for name, expected in (("article", "CC-BY-4.0"), ("thesis", "CC-BY-SA-4.0"), ("software", "Apache-2.0")):
        [marc] = pymarc.parse_xml_to_array(io.BytesIO(REGISTRY["marcxml"].render(records[name], ctx)))
        licenses = [f["a"] for f in marc.get_fields("650") if f.indicators == pymarc.Indicators("1", "7")]
        assert licenses == [expected]


def test_marcxml_collection_parses_back(records, ctx):
    marcs = pymarc.parse_xml_to_array(io.BytesIO(REGISTRY["marcxml"].render_page(list(records.values()), ctx)))
    assert [m["001"].data for m in marcs] == [str(r["id"]) for r in records.values()]


@pytest.mark.parametrize("name", NAMES)
def test_bibtex_parses_back(records, ctx, name):
    record = clean(records[name])
    [entry] = _bibtex(REGISTRY["bibtex"].render(records[name], ctx).decode()).entries
    fields = entry.fields_dict
    assert fields["title"].value == " ".join(record["metadata"]["title"].split())
    assert fields["author"].value == [c["name"] for c in record["metadata"]["creators"]]
    assert fields["doi"].value == record["doi"]
    assert entry.key.endswith(f"_{record['id']}")


def test_bibtex_entry_types(records, ctx):
    types = {name: _bibtex(REGISTRY["bibtex"].render(records[name], ctx).decode()).entries[0].entry_type
             for name in records}
    assert types["article"] == "article" and types["thesis"] == "phdthesis" and types["book"] == "book"
    assert types["conferencepaper"] == "inproceedings" and types["section"] == "incollection"
    assert types["dataset"] == "dataset" and types["software"] == "software" and types["patent"] == "misc"


def test_bibtex_special_characters_survive(records, ctx):
    body = REGISTRY["bibtex"].render(records["conferencepaper"], ctx).decode()
    assert r"\textasciicircum{}" in body and r"\textbackslash{}" in body and r"\{braces\}" in body
    [entry] = _bibtex(body).entries
    # pylatexenc reads \textasciicircum{} as U+02C6 (the glyph LaTeX prints); map it back to compare.
    note = entry.fields_dict["note"].value.replace("\u02c6", "^")
    assert note == records["conferencepaper"]["metadata"]["notes"]
    assert entry.fields_dict["keywords"].value == "xml, <escaping>, a & b"


def test_bibtex_page_has_unique_stable_keys(records, ctx):
    page = REGISTRY["bibtex"].render_page(list(records.values()), ctx)
    keys = [e.key for e in _bibtex(page.decode()).entries]
    assert len(keys) == len(set(keys)) == len(records)
    assert page == REGISTRY["bibtex"].render_page(list(records.values()), ctx)
    assert keys[0] == "muller_ludenscheidt_2024_1001"


@pytest.mark.parametrize("name", NAMES)
def test_datacite_json_is_valid(records, ctx, name):
    assert schema45.validate(datacite_json(records[name], ctx))


JSON_FORMATS = ("v1", "json", "csl", "jsonld", "rocrate", "croissant", "codemeta")


def _texts(fmt: str, body: bytes) -> list[str]:
    """Every text a reader of the format gets back."""
    if fmt in JSON_FORMATS or fmt == "cff":
        found: list[str] = []

        def walk(value):
            if isinstance(value, str):
                found.append(value)
            elif isinstance(value, dict):
                for item in value.values():
                    walk(item)
            elif isinstance(value, list):
                for item in value:
                    walk(item)

        walk(yaml.safe_load(body) if fmt == "cff" else orjson.loads(body))
        return found
    if fmt == "bibtex":
        return [str(f.value) for e in _bibtex(body.decode()).entries for f in e.fields]
    if fmt == "citation":
        return [body.decode()]
    return [t for t in etree.fromstring(body).itertext()]


@pytest.mark.parametrize("fmt", sorted(name for name, s in REGISTRY.items() if s.describes))  # linksets: no title
@pytest.mark.parametrize("name", ["conferencepaper", "patent", "thesis", "book", "article"])
def test_unicode_and_hostile_text_survive(records, ctx, name, fmt):
    if not REGISTRY[fmt].applies(records[name]):  # CodeMeta of a book: refused (test_community_validators.py)
        return
    body = REGISTRY[fmt].render(records[name], ctx)
    title = records[name]["metadata"]["title"]
    # JSON escapes control characters and YAML quotes them: a reader gets the title back as it was.
    expected = title if fmt in JSON_FORMATS or fmt == "cff" else FORBIDDEN.sub("", title)
    assert any(expected in text for text in _texts(fmt, body)), f"title lost in {fmt}"
    if fmt not in ("v1", "json"):
        assert not FORBIDDEN.search(body.decode()), f"control character left in {fmt}"
