"""ListIdentifiers and ListRecords: cursor pages, tokens (replay, expiry), sets, from/until, tombstones, cost."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from helpers.bulk_records import insert_records, set_updated, take_down
from helpers.http import https_client
from helpers.oai_client import CANONICAL, HOST, Oai
from sqlalchemy import event

from app import create_app

T0 = datetime(2024, 3, 1, 12, 0, 0)


def oai_id(recid: int) -> str:
    return f"oai:{HOST}:{recid}"


def harvest(oai: Oai, verb: str = "ListIdentifiers", **args: str) -> tuple[list[str], list]:
    """Every identifier of a list through its tokens, and each page's resumptionToken element."""
    reply = oai.get(verb=verb, metadataPrefix="oai_dc", **args)
    if reply.error == "noRecordsMatch":
        return [], []
    seen, tokens = reply.identifiers, [reply.token]
    while reply.token is not None and reply.token.text:
        reply = oai.get(verb=verb, resumptionToken=reply.token.text)
        assert reply.error is None
        seen += reply.identifiers
        tokens.append(reply.token)
    return seen, tokens


@pytest.mark.parametrize("verb", ["ListIdentifiers", "ListRecords"])
def test_pages_follow_datestamp_then_id_and_end_with_an_empty_token(oai: Oai, db, settings, clock, verb):
    recids = insert_records(db, settings, 12, T0, per_second=4)
    before = clock().replace(microsecond=0)
    seen, tokens = harvest(oai, verb)
    after = clock()
    assert seen == [oai_id(r) for r in recids]
    assert [(t.get("cursor"), t.get("completeListSize")) for t in tokens] == [
        ("0", "12"),
        ("5", "12"),
        ("10", "12"),
    ]
    assert [bool(t.text) for t in tokens] == [True, True, False]
    assert "expirationDate" not in tokens[-1].attrib
    expires = datetime.strptime(tokens[0].get("expirationDate"), "%Y-%m-%dT%H:%M:%SZ")
    # Two minutes after the first page was answered, however long the machine took to answer it.
    assert before + timedelta(minutes=2) <= expires <= after + timedelta(minutes=2)


def test_a_list_of_a_multiple_of_the_page_size_has_no_empty_page(oai: Oai, db, settings):
    insert_records(db, settings, 10, T0)
    seen, tokens = harvest(oai)
    assert len(seen) == 10 and len(tokens) == 2 and tokens[-1].text is None


def test_a_single_page_has_no_token(oai: Oai, db, settings):
    insert_records(db, settings, 5, T0)
    reply = oai.get(verb="ListRecords", metadataPrefix="oai_dc")
    assert len(reply.identifiers) == 5 and reply.token is None


def test_a_token_replays_the_same_page_until_it_expires(oai: Oai, db, settings, clock):
    insert_records(db, settings, 12, T0)
    token = oai.get(verb="ListRecords", metadataPrefix="oai_dc").token.text
    first = oai.get(verb="ListRecords", resumptionToken=token)
    oai.get(
        verb="ListRecords", resumptionToken=first.token.text
    )  # the harvester went on; the token still works
    clock.advance(119)
    again = oai.get(verb="ListRecords", resumptionToken=token)
    assert again.identifiers == first.identifiers and len(again.identifiers) == 5
    assert [r.text for r in again.xpath("//dc:title")] == [r.text for r in first.xpath("//dc:title")]
    clock.advance(2)
    expired = oai.get(verb="ListRecords", resumptionToken=token)
    assert (expired.status, expired.error) == (422, "badResumptionToken")


def test_any_server_process_with_the_key_continues_a_list(oai: Oai, db, settings):
    insert_records(db, settings, 7, T0)
    token = oai.get(verb="ListIdentifiers", metadataPrefix="oai_dc").token.text
    other = Oai(https_client(create_app(settings)))  # a second worker: nothing is shared but the database
    assert other.get(verb="ListIdentifiers", resumptionToken=token).identifiers == [
        oai_id(r) for r in (12, 14)
    ]
    stranger = Oai(https_client(create_app(settings.build(**{**_values(settings), "SECRET_KEY": "other"}))))
    assert stranger.get(verb="ListIdentifiers", resumptionToken=token).status == 422


def _values(settings) -> dict:  # type: ignore[no-untyped-def]
    return {f.name: getattr(settings, f.name) for f in settings.declarations()}


def test_from_and_until_are_inclusive_to_the_second(oai: Oai, db, settings):
    recids = insert_records(db, settings, 9, T0, per_second=3)  # 3 at :00, 3 at :01, 3 at :02
    by_second = [recids[0:3], recids[3:6], recids[6:9]]

    def listed(**args: str) -> list[str]:
        return harvest(oai, **args)[0]

    assert listed(**{"from": "2024-03-01T12:00:01Z"}) == [oai_id(r) for r in by_second[1] + by_second[2]]
    assert listed(until="2024-03-01T12:00:01Z") == [oai_id(r) for r in by_second[0] + by_second[1]]
    assert listed(**{"from": "2024-03-01T12:00:01Z", "until": "2024-03-01T12:00:01Z"}) == [
        oai_id(r) for r in by_second[1]
    ]
    assert listed(**{"from": "2024-03-01T12:00:03Z"}) == []
    assert listed(until="2024-03-01T11:59:59Z") == []
    # Day granularity covers the whole day on both ends (the reference treated `until=<day>` as its midnight).
    assert (
        len(listed(until="2024-03-01")) == 9
        and len(listed(**{"from": "2024-03-01", "until": "2024-03-01"})) == 9
    )
    assert listed(until="2024-02-29") == [] and listed(**{"from": "2024-03-02"}) == []


def test_from_until_and_set_ride_along_in_the_token(oai: Oai, db, settings):
    insert_records(db, settings, 40, T0, per_second=2)  # 2 a second from 12:00:00 to 12:00:19
    seen, tokens = harvest(
        oai, set="type-dataset", **{"from": "2024-03-01T12:00:04Z", "until": "2024-03-01T12:00:15Z"}
    )
    # Datasets are every 4th record: numbers 8, 12, ..., 28 fall in seconds 4..15.
    assert len(seen) == 6 and tokens[0].get("completeListSize") == "6"


def test_sets_select_members_and_headers_list_them(oai: Oai, db, settings):
    recids = insert_records(db, settings, 12, T0, community="ecology", every=3)
    members = {oai_id(r) for n, r in enumerate(recids) if n % 3 == 0}
    assert set(harvest(oai, set="user-ecology")[0]) == members
    assert harvest(oai, set="type-publication")[0] == [oai_id(r) for n, r in enumerate(recids) if n % 4 == 1]
    assert harvest(oai, set="type-publication-article")[0] == harvest(oai, set="type-publication")[0]
    assert harvest(oai, set="type-image-figure")[0] == [oai_id(r) for n, r in enumerate(recids) if n % 4 == 3]
    assert harvest(oai, set="type-publication-book")[0] == []
    reply = oai.get(verb="ListIdentifiers", metadataPrefix="oai_dc")
    headers = {
        h.xpath("string(*[local-name()='identifier'])"): [
            str(s) for s in h.xpath("*[local-name()='setSpec']/text()")
        ]
        for h in reply.xpath("//o:header")
    }
    assert headers[oai_id(recids[0])] == ["type-dataset", "user-ecology"]
    assert headers[oai_id(recids[1])] == ["type-publication", "type-publication-article"]
    assert headers[oai_id(recids[3])] == ["type-image", "type-image-figure", "user-ecology"]


def test_deleted_records_stay_as_tombstones(oai: Oai, db, settings):
    recids = insert_records(db, settings, 6, T0, community="ecology", every=1)
    gone = datetime(2024, 5, 1, 9, 0, 0)
    take_down(db, recids[1], gone)
    seen, _ = harvest(oai)
    assert seen == [oai_id(r) for r in recids if r != recids[1]] + [oai_id(recids[1])]  # its datestamp moved
    records = oai.get(verb="ListRecords", metadataPrefix="oai_dc", **{"from": "2024-05-01"})
    tombstone = records.one("//o:record")
    assert tombstone.xpath("o:header/@status", namespaces={"o": tombstone.nsmap[None]}) == ["deleted"]
    assert records.identifiers == [oai_id(recids[1])] and not records.xpath("//o:metadata")
    assert records.one("//o:header/o:datestamp/text()") == "2024-05-01T09:00:00Z"
    # A harvester of the community learns of the removal too.
    assert oai_id(recids[1]) in harvest(oai, set="user-ecology", **{"from": "2024-05-01"})[0]
    assert harvest(oai, set="user-ecology")[0][-1] == oai_id(recids[1])


def test_a_changed_record_moves_to_its_new_datestamp(oai: Oai, db, settings):
    recids = insert_records(db, settings, 4, T0)
    set_updated(db, recids[0], T0 + timedelta(hours=1))
    assert harvest(oai)[0] == [oai_id(r) for r in recids[1:] + recids[:1]]
    assert harvest(oai, **{"from": "2024-03-01T13:00:00Z"})[0] == [oai_id(recids[0])]


@pytest.fixture(scope="module")
def twelve_and_a_tombstone(module_db, module_settings) -> None:  # type: ignore[no-untyped-def]
    """Twelve records in the module's shared app, one of them taken down, built once: the tests given them only
    read."""
    insert_records(module_db, module_settings, 12, T0, community="ecology")
    take_down(module_db, 4, T0)  # a tombstone among them: a header without metadata


@pytest.mark.parametrize("prefix", CANONICAL)
def test_list_records_in_every_format(module_oai: Oai, twelve_and_a_tombstone, prefix):
    oai = module_oai
    reply = oai.get(verb="ListRecords", metadataPrefix=prefix)
    assert (
        reply.error is None and len(reply.xpath("//o:record")) == 5 and len(reply.xpath("//o:metadata")) == 4
    )
    nxt = oai.get(verb="ListRecords", resumptionToken=reply.token.text)  # validated against the same format
    assert len(nxt.xpath("//o:metadata")) == 5


def test_a_page_costs_the_same_number_of_queries_whatever_its_size(make_settings):
    counts = {}
    for size in (5, 50):
        app = create_app(make_settings(BASE_URL=f"https://{HOST}", OAI_PAGE_SIZE=size, SECRET_KEY=f"k{size}"))
        db = app.extensions["repository"].db
        insert_records(
            db,
            app.extensions["repository"].settings,
            2 * size + 1,
            T0 + timedelta(days=size),
            community="ecology",
        )
        oai = Oai(https_client(app))
        token = oai.get(verb="ListRecords", metadataPrefix="oai_dc").token.text
        executed: list[tuple[str, object]] = []
        event.listen(
            db.engine, "before_cursor_execute", lambda *a, log=executed: log.append((a[2].lower(), a[3]))
        )
        reply = oai.get(verb="ListRecords", resumptionToken=token)
        assert len(reply.identifiers) == size
        counts[size] = len(executed)
        assert not any("count(" in sql for sql, _ in executed)  # the list size came from the token
        [(page_sql, params)] = [
            (sql, p) for sql, p in executed if "order by records.updated, records.id" in sql
        ]
        assert "records.updated >=" in page_sql  # a range from the cursor...
        assert "offset" not in page_sql or params[-1] == 0  # ...not a skip (SQLite always writes OFFSET ?)
    assert counts[5] == counts[50] <= 12
