"""Stored renditions behind ListRecords and GetRecord: rendered once, served while current, never stale; built
records read when fresh, rebuilt when missing or stale; tombstones get none; a failed store fails no read."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import orjson
import pytest
from helpers.bulk_records import insert_records, take_down
from helpers.oai_client import CANONICAL, HOST, Oai, xpath_one
from lxml import etree
from sqlalchemy import delete, event, insert, select, text, update

from repository.oai import response
from repository.records.build import build_records, get_record_rows
from repository.records.lookups import DatabaseLookups
from repository.records.render_context import render_context
from repository.storage.tables.derived import built_records, renditions
from repository.storage.tables.records import records
from serializers import oai_format

T0 = datetime(2024, 3, 1, 12, 0, 0)


def stored(db, fmt: str = "oai:oai_dc") -> dict[int, str]:  # type: ignore[no-untyped-def]
    """record id -> digest of its stored rendition in `fmt`."""
    with db.read() as conn:
        query = select(renditions.c.record_id, renditions.c.digest).where(renditions.c.format == fmt)
        return dict(conn.execute(query).all())


def built(db, settings, recid: int) -> dict:  # type: ignore[no-untyped-def]
    with db.read() as conn:
        return build_records(conn, settings, DatabaseLookups(conn), get_record_rows(conn, [recid]))[0]


def store_built(db, settings, recid: int, **metadata: str) -> None:  # type: ignore[no-untyped-def]
    """The row the indexer writes for a record, its metadata changed by `metadata` (to tell the copy apart)."""
    record = built(db, settings, recid)
    record["metadata"].update(metadata)
    with db.write() as conn:
        row = get_record_rows(conn, [recid])[0]
        conn.execute(delete(built_records).where(built_records.c.record_id == recid))
        conn.execute(insert(built_records).values(
            record_id=recid, revision=row["revision"], updated=row["updated"], record=orjson.dumps(record),
            engine="test", document=b"",
        ))  # fmt: skip


def titles(reply) -> list[str]:  # type: ignore[no-untyped-def]
    return [str(t) for t in reply.xpath("//dc:title/text()")]


def without_response_date(body: bytes) -> bytes:
    return re.sub(rb"<responseDate>[^<]*</responseDate>", b"", body)


def test_renditions_are_stored_once_and_reused(oai: Oai, db, settings):
    recids = insert_records(db, settings, 5, T0)
    first = oai.client.get("/oai2d", query_string={"verb": "ListRecords", "metadataPrefix": "oai_dc"}).data
    digests = stored(db)
    assert sorted(digests) == sorted(recids) and len(set(digests.values())) == 5
    executed: list[str] = []
    event.listen(db.engine, "before_cursor_execute", lambda *a: executed.append(a[2].lower()))
    again = oai.client.get("/oai2d", query_string={"verb": "ListRecords", "metadataPrefix": "oai_dc"}).data
    # Byte for byte, from the stored bodies; only <responseDate> may differ (the clock may pass a second between).
    assert without_response_date(again) == without_response_date(first)
    assert not any(sql.startswith(("insert", "begin immediate")) for sql in executed)
    assert stored(db) == digests
    oai.get(verb="ListRecords", metadataPrefix="oai_datacite")  # an alias is stored under its format's name
    assert sorted(stored(db, "oai:oai_registry")) == sorted(recids)


@pytest.mark.slow
@pytest.mark.parametrize("prefix", CANONICAL)
def test_the_metadata_is_what_the_serializer_renders(oai: Oai, db, settings, prefix):
    [recid] = insert_records(db, settings, 1, T0)
    identifier = f"oai:{HOST}:{recid}"
    cold = oai.get(verb="GetRecord", identifier=identifier, metadataPrefix=prefix)
    assert stored(db, f"oai:{oai_format(prefix).prefix}")
    warm = oai.client.get(
        "/oai2d", query_string={"verb": "GetRecord", "identifier": identifier, "metadataPrefix": prefix}
    ).data
    assert etree.tostring(cold.one("//o:GetRecord")) == etree.tostring(
        xpath_one(etree.fromstring(warm), "//o:GetRecord")
    )
    # Exactly what the element gives inside an envelope, namespace declarations included.
    expected = oai_format(prefix).element(built(db, settings, recid), render_context(settings, db))
    envelope = response.envelope(datetime(2024, 1, 1), "https://example.org/oai2d", {})
    etree.SubElement(envelope, response.q("metadata")).append(expected)
    document = etree.tostring(envelope, encoding="UTF-8")
    assert document[document.index(b"<metadata>") : document.rindex(b"</metadata>") + 11] in warm


def test_a_changed_record_is_rendered_again(oai: Oai, db, settings):
    recids = insert_records(db, settings, 3, T0)
    first = oai.get(verb="ListRecords", metadataPrefix="oai_dc")
    assert titles(first) == [f"Generated record {n}" for n in range(3)]
    before = stored(db)
    with db.write() as conn:  # what an edit and publish change
        row = get_record_rows(conn, [recids[1]])[0]
        conn.execute(update(records).where(records.c.id == recids[1]).values(
            metadata={**row["metadata"], "title": "Renamed"}, revision=2, updated=T0 + timedelta(hours=1),
        ))  # fmt: skip
    assert titles(oai.get(verb="ListRecords", metadataPrefix="oai_dc")) == [
        "Generated record 0", "Generated record 2", "Renamed",
    ]  # fmt: skip
    after = stored(db)
    assert after[recids[1]] != before[recids[1]]
    assert {r: after[r] for r in (recids[0], recids[2])} == {r: before[r] for r in (recids[0], recids[2])}


def test_a_fresh_built_record_is_used_and_a_stale_one_ignored(oai: Oai, db, settings):
    recids = insert_records(db, settings, 2, T0)
    store_built(db, settings, recids[0], title="From the built copy")
    reply = oai.get(verb="ListRecords", metadataPrefix="oai_dc")
    assert titles(reply) == ["From the built copy", "Generated record 1"]
    with db.write() as conn:  # the record changes after it was indexed: its built copy is stale
        conn.execute(update(records).where(records.c.id == recids[0]).values(revision=2))
    reply = oai.get(verb="ListRecords", metadataPrefix="oai_dc")
    assert titles(reply) == ["Generated record 0", "Generated record 1"]


def test_missing_built_records_fall_back_to_building(oai: Oai, db, settings):
    recids = insert_records(db, settings, 6, T0)
    store_built(db, settings, recids[2])
    with db.read() as conn:
        assert conn.execute(select(built_records.c.record_id)).scalars().all() == [recids[2]]
    reply = oai.get(verb="ListRecords", metadataPrefix="oai_dc")
    assert titles(reply) == [f"Generated record {n}" for n in range(5)]
    reply = oai.get(verb="ListRecords", resumptionToken=reply.token.text)
    assert titles(reply) == ["Generated record 5"]
    assert sorted(stored(db)) == sorted(recids)


def test_deleted_records_get_no_rendition(oai: Oai, db, settings):
    recids = insert_records(db, settings, 3, T0)
    oai.get(verb="ListRecords", metadataPrefix="oai_dc")
    take_down(db, recids[0], T0 + timedelta(days=1))
    reply = oai.get(verb="ListRecords", metadataPrefix="oai_dc")
    assert reply.identifiers == [f"oai:{HOST}:{r}" for r in (recids[1], recids[2], recids[0])]
    assert len(reply.xpath("//o:metadata")) == 2
    assert reply.one("//o:header[@status='deleted']/o:identifier/text()") == f"oai:{HOST}:{recids[0]}"
    one = oai.get(verb="GetRecord", identifier=f"oai:{HOST}:{recids[0]}", metadataPrefix="oai_registry")
    assert one.one("//o:header/@status") == "deleted" and not one.xpath("//o:metadata")
    assert recids[0] not in stored(db, "oai:oai_registry")


def test_a_failed_store_does_not_fail_the_read(oai: Oai, db, settings):
    insert_records(db, settings, 2, T0)
    with db.write() as other:  # another writer holds the lock (SQLite: the database's) past a store's wait
        if not db.is_sqlite:
            other.execute(text("LOCK TABLE renditions IN EXCLUSIVE MODE"))
        reply = oai.get(verb="ListRecords", metadataPrefix="oai_dc")
    assert reply.error is None and titles(reply) == ["Generated record 0", "Generated record 1"]
    assert stored(db) == {}
    oai.get(verb="ListRecords", metadataPrefix="oai_dc")
    assert len(stored(db)) == 2
