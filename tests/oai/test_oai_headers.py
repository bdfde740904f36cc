"""Headers and records are written as bytes, not as lxml elements: they must be exactly what lxml writes for the
same elements inside the envelope, whatever the identifier's host and the set names hold."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from lxml import etree

from repository.oai import response
from repository.oai.response import q
from serializers.text import sub

STAMP = datetime(2024, 2, 29, 23, 59, 58, 123456)
BODY = b'<oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/"><x>&amp;</x></oai_dc:dc>'
TEXTS = ["oai:example.org:12", "oai:h\u00f6st&co<1>:7", "type-dataset", "user-a&b", "user-\u00e9t\u00e9 <x>",
         "line\rbreak\ttab", "forbidden\x00\x08\ufffe\U0001f600 end", "quote\"'", "]]>"]


def lxml_page(identifier: str, specs: list[str], deleted: bool, body: bytes | None) -> bytes:
    """The page as the elements wrote it: header and record built in the tree, the body in a slot."""
    root = response.envelope(STAMP, "https://example.org/oai2d", {"verb": "ListRecords"})
    target = sub(sub(root, q("ListRecords")), q("record"))
    header = sub(target, q("header"), **({"status": "deleted"} if deleted else {}))
    sub(header, q("identifier"), identifier)
    sub(header, q("datestamp"), response.datestamp(STAMP))
    for spec in specs:
        sub(header, q("setSpec"), spec)
    bodies: list[bytes] = []
    if body is not None:
        response.slot(sub(target, q("metadata")), bodies, body)
    return response.to_bytes(root, bodies)


def bytes_page(identifier: str, specs: list[str], deleted: bool, body: bytes | None) -> bytes:
    root = response.envelope(STAMP, "https://example.org/oai2d", {"verb": "ListRecords"})
    bodies: list[bytes] = []
    header = response.header(identifier, STAMP, specs, deleted)
    response.slot(sub(root, q("ListRecords")), bodies, response.record(header, body))
    return response.to_bytes(root, bodies)


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("deleted", [False, True])
def test_a_record_is_what_lxml_writes(text: str, deleted: bool) -> None:
    body = None if deleted else BODY
    for identifier, specs in ((text, []), ("oai:example.org:1", [text]), (text, [text, "type-image-photo"])):
        written = bytes_page(identifier, specs, deleted, body)
        assert written == lxml_page(identifier, specs, deleted, body)
        etree.fromstring(written)  # well-formed


def test_a_header_alone_is_what_lxml_writes() -> None:
    root = etree.Element(q("OAI-PMH"), nsmap={None: response.NS})
    element = sub(root, q("header"))
    sub(element, q("identifier"), TEXTS[1])
    sub(element, q("datestamp"), response.datestamp(STAMP))
    sub(element, q("setSpec"), TEXTS[3])
    expected = etree.tostring(element, encoding="UTF-8")
    assert response.header(TEXTS[1], STAMP, [TEXTS[3]], False) == expected.replace(
        b' xmlns="http://www.openarchives.org/OAI/2.0/"', b"")


def test_datestamps_are_utc_at_second_granularity() -> None:
    assert response.datestamp(STAMP) == "2024-02-29T23:59:58Z"
    aware = datetime(2024, 3, 1, 1, 59, 58, 999999, tzinfo=timezone(timedelta(hours=2)))
    assert response.datestamp(aware) == "2024-02-29T23:59:58Z"
