"""`repository-admin import api`: records published on a second instance of the service (a live server on its own
database) are copied with their versions in order, their files (checksums checked), DOIs kept and never registered
again, communities created, the original linked; a second run changes nothing; a source that fails for some
records, answers garbage, cuts a page short or asks to slow down is reported record by record, and a rerun takes
exactly what is missing."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any
from urllib.parse import unquote_plus, urlsplit

import pytest
import requests
from helpers.factories import make_deposit, new_version, publish, published_restricted, upload
from helpers.faulty_proxy import Fault, faulty_proxy
from helpers.http import download, token_session
from sqlalchemy import func, select

from repository.accounts.tokens import create_user
from repository.cli import COMMANDS, invoke
from repository.imports.api import ApiImport
from repository.imports.api_write import Concept, Version, write_batch
from repository.imports.source import Source
from repository.storage.tables.communities import communities
from repository.storage.tables.imports import imported_records
from repository.storage.tables.outbox import outbox
from repository.storage.tables.records import doi_registrations, records

pytestmark = pytest.mark.slow


class LiveClient:
    """The factories' client interface (Flask's test client) over HTTP to a live server."""

    def __init__(self, http: requests.Session, base: str) -> None:
        self.http, self.base = http, base

    def _answer(self, response: requests.Response) -> SimpleNamespace:
        body = response.json() if response.content else None
        return SimpleNamespace(status_code=response.status_code, json=body)

    def get(self, path: str, headers: dict | None = None) -> SimpleNamespace:
        return self._answer(self.http.get(self.base + path))

    def delete(self, path: str, headers: dict | None = None) -> SimpleNamespace:
        return self._answer(self.http.delete(self.base + path))

    def post(self, path: str, json: Any = None, data: dict | None = None, headers: dict | None = None,
             content_type: str | None = None) -> SimpleNamespace:
        if data is not None:  # the multipart upload of factories.upload
            stream, name = data["file"]
            return self._answer(self.http.post(self.base + path, data={"name": data["name"]},
                                               files={"file": (name, stream.read())}))
        return self._answer(self.http.post(self.base + path, json=json))


@pytest.fixture(scope="module")
def source(second_live_server: dict) -> dict[str, Any]:
    """What the second instance holds: a two-version record in a community, a record with two files, a
    restricted one (its files are not the public's); their ids and the bytes of each file."""
    http = token_session(second_live_server, "source-owner@example.org")
    client = LiveClient(http, second_live_server["url"])
    created = http.post(second_live_server["url"] + "/api/communities/",
                        json={"identifier": "glaciers", "title": "Glacier studies"})
    assert created.status_code == 201, created.text
    first = make_deposit(client, {}, title="Ice cores, first version", communities=[{"identifier": "glaciers"}])
    upload(client, {}, first, content=b"depth,age\n1,10\n")
    first = publish(client, {}, first)
    second = new_version(client, {}, first, b"depth,age\n1,10\n2,25\n")
    pair = make_deposit(client, {}, title="Two files")
    upload(client, {}, pair, name="readings.csv", content=b"t,v\n0,1\n")
    upload(client, {}, pair, name="notes.txt", content=b"calibrated on site\n")
    pair = publish(client, {}, pair)
    restricted = published_restricted(client, {}, title="Ask for it")
    http.close()
    return {"server": second_live_server, "first": first["id"], "second": second, "pair": pair["id"],
            "restricted": restricted["id"], "count": 4}


def run_import(settings, url: str, cert: str, *extra: str) -> int:  # type: ignore[no-untyped-def]
    return invoke(COMMANDS["import"], ["api", url, "--ca-cert", cert, "--quiet", *extra], settings)


def source_record(source: dict, recid: int) -> dict:
    answer = requests.get(f"{source['server']['url']}/api/records/{recid}", verify=source["server"]["cert"],
                          timeout=30)
    assert answer.status_code == 200
    return answer.json()


def local_by_doi(app, doi: str) -> int:  # type: ignore[no-untyped-def]
    with app.extensions["repository"].db.read() as conn:
        return int(conn.execute(select(records.c.id).where(records.c.doi == doi.lower())).scalar_one())


def count(app, table) -> int:  # type: ignore[no-untyped-def]
    with app.extensions["repository"].db.read() as conn:
        return conn.execute(select(func.count()).select_from(table)).scalar_one()


def test_records_come_with_versions_files_and_dois_and_a_second_run_changes_nothing(
        source, settings, app, client, capsys) -> None:  # type: ignore[no-untyped-def]
    server = source["server"]
    assert run_import(settings, server["url"], server["cert"]) == 0
    assert "imported 4 records (4 files, " in capsys.readouterr().out
    for key in ("first", "second", "pair", "restricted"):
        original = source_record(source, source[key])
        recid = local_by_doi(app, original["doi"])
        copy = client.get(f"/api/records/{recid}").json
        assert copy["doi"] == original["doi"]
        assert copy.get("conceptdoi") == original.get("conceptdoi")
        for field in ("title", "creators", "description", "access_right", "resource_type", "publication_date"):
            assert copy["metadata"][field] == original["metadata"][field], field
        links = {(r["relation"], r["identifier"]) for r in copy["metadata"]["related_identifiers"]}
        assert ("isIdenticalTo", original["links"]["html"]) in links
        assert {"identifier": original["links"]["self"], "scheme": "url"} in copy["metadata"]["alternate_identifiers"]
        theirs = {f["key"]: f["checksum"] for f in original.get("files", [])}
        assert {f["key"]: f["checksum"] for f in copy.get("files", [])} == theirs
        for entry in copy.get("files", []):
            body = download(client, entry["links"]["self"]).data
            assert "md5:" + hashlib.md5(body).hexdigest() == theirs[entry["key"]]
    # The versions are one concept, in their order, and the community came along with its title.
    first, second = (local_by_doi(app, source_record(source, source[k])["doi"]) for k in ("first", "second"))
    versions = client.get(f"/api/records/{second}/versions?sort=version").json["hits"]["hits"]
    assert [hit["id"] for hit in versions] == [first, second]
    assert [hit["metadata"]["relations"]["version"][0]["index"] for hit in versions] == [0, 1]
    assert client.get("/api/communities/glaciers").json["title"] == "Glacier studies"
    assert {"id": "glaciers"} in client.get(f"/api/records/{second}").json["metadata"]["communities"]
    # The DOIs stay the source's: nothing is registered under this service's prefix.
    assert count(app, doi_registrations) == 0
    with app.extensions["repository"].db.read() as conn:
        assert conn.execute(select(func.count()).select_from(outbox).where(outbox.c.kind != "index")).scalar_one() == 0
    assert count(app, imported_records) == 4
    before = (count(app, records), count(app, imported_records))
    assert run_import(settings, server["url"], server["cert"]) == 0
    assert "imported 0 records (0 files, 0 bytes), 4 already there, 0 failed" in capsys.readouterr().out
    assert (count(app, records), count(app, imported_records)) == before


def test_a_batch_is_checked_before_anything_of_it_is_written(source, app) -> None:  # type: ignore[no-untyped-def]
    # One batch: a record, the same record listed again under another id (its DOI is taken by the first), and a
    # record without creators that lists a community missing here. The first is written; the others are reported
    # with their source ids, and the community made for the failing one is not left behind.
    pair, restricted = source_record(source, source["pair"]), source_record(source, source["restricted"])
    twin = {**pair, "id": pair["id"] + 1000}
    bad = {**restricted, "metadata": {**restricted["metadata"], "communities": [{"id": "moraines"}]}}
    bad["metadata"].pop("creators")
    batch = [Concept(str(r["id"]), [Version(str(r["id"]), r)], {"moraines": "Moraines"}) for r in (pair, twin, bad)]
    services = app.extensions["repository"]
    with services.db.write() as conn:
        owner = create_user(conn, "importer@example.org")
        written = write_batch(conn, owner, "api:https://source.example.org", batch, {})
    assert [version.source_id for version, _recid, _concept in written.versions] == [str(pair["id"])]
    assert [source_id for source_id, _reason in written.failed] == [str(twin["id"]), str(bad["id"])]
    assert f"its DOI {pair['doi']} belongs to another record here" == written.failed[0][1]
    assert written.failed[1][1].startswith("invalid metadata: metadata.creators: ")
    assert count(app, communities) == 0 and count(app, records) == 1 and count(app, imported_records) == 1


@pytest.fixture
def proxy(source) -> Iterator[Any]:  # type: ignore[no-untyped-def]
    with faulty_proxy(source["server"]["url"], source["server"]["cert"]) as running:
        yield running


def test_a_failing_source_is_reported_record_by_record_and_a_rerun_takes_what_is_missing(
        source, proxy, settings, app, capsys) -> None:  # type: ignore[no-untyped-def]
    # The search page answers garbage once (asked again, it is fine); the second version's file arrives altered
    # (its checksum fails); the two-file record's second file is gone for good; the restricted record comes
    # without creators (its metadata fails validation).
    second_file = urlsplit(source_record(source, source["second"])["files"][0]["links"]["self"]).path
    pair_file = urlsplit(source_record(source, source["pair"])["files"][1]["links"]["self"]).path
    proxy.faults = [Fault("/api/records/?", "garbage", times=1), Fault(second_file, "altered"),
                    Fault(pair_file, "status", status=404),
                    Fault("/api/records/?", "no-creators", record=source["restricted"])]
    assert run_import(settings, proxy.url, source["server"]["cert"]) == 1
    out = capsys.readouterr().out
    assert "imported 1 records" in out
    assert f"failed: record {source['second']}: file 'data.csv': checksum md5:" in out
    assert f"failed: record {source['pair']}: " in out and "HTTP 404" in out
    assert f"failed: record {source['restricted']}: invalid metadata: metadata.creators: " in out
    assert count(app, records) == 1  # the first version only: nothing half-written
    with app.extensions["repository"].db.read() as conn:  # and the ledger names it alone
        assert conn.execute(select(imported_records.c.source_id)).scalars().all() == [str(source["first"])]
    # Now the versions of the two-version record cannot be listed: the others come, it is reported.
    proxy.faults = [Fault(f"/api/records/{source['second']}/versions", "status", status=404)]
    assert run_import(settings, proxy.url, source["server"]["cert"]) == 1
    out = capsys.readouterr().out
    assert "imported 2 records (2 files, " in out and "1 failed" in out
    assert f"failed: record {source['second']}: the versions of its concept " in out and "HTTP 404" in out
    proxy.faults = []
    assert run_import(settings, proxy.url, source["server"]["cert"]) == 0
    out = capsys.readouterr().out
    assert "imported 1 records (1 files, " in out and "3 already there, 0 failed" in out
    assert count(app, records) == 4
    assert run_import(settings, proxy.url, source["server"]["cert"]) == 0
    assert "imported 0 records (0 files, 0 bytes), 4 already there, 0 failed" in capsys.readouterr().out


def test_an_interrupted_listing_resumes_and_the_source_is_waited_for(source, proxy, settings, app) -> None:  # type: ignore[no-untyped-def]
    # The first page of the listing is cut short for good: nothing is listed, the run says so.
    proxy.faults = [Fault("/api/records/?", "cut")]
    services = app.extensions["repository"]
    waits: list[float] = []
    with app.extensions["repository"].db.write() as conn:
        owner = create_user(conn, "importer@example.org")
    http = Source(proxy.url, verify=source["server"]["cert"], sleep=waits.append)
    report = ApiImport(services.db, services.files, http, owner, concurrency=2).run()
    assert report.imported == 0 and "/api/records" in str(report.listing_error)
    # Asked to slow down (a 429 with Retry-After: 7), then told the window is spent: both are waited out. The
    # page that comes then lists a record twice: it is taken once and reported.
    proxy.faults = [Fault("/api/records/?", "retry-after", times=1, seconds=7),
                    Fault("/api/records/?", "duplicate", times=1), Fault("/versions", "window", times=1, seconds=30)]
    report = ApiImport(services.db, services.files, http, owner, concurrency=2).run()
    assert report.imported == source["count"] and not report.failed and report.listing_error is None
    assert len(report.duplicates) == 1
    assert 7 in waits and any(25 <= w <= 31 for w in waits)
    assert ApiImport(services.db, services.files, http, owner).run().skipped == source["count"]
    http.close()


def test_a_listing_that_ends_before_its_total_goes_on_before_its_last_second(source, proxy, settings, app) -> None:  # type: ignore[no-untyped-def]
    # Every search answer lists one result and no next page, as the reference service's listing ends at its
    # 10,000th result: each following listing asks for what was created before the last one's second, less the
    # records of that second already listed, until the total is reached. The records of the source were made
    # within a few seconds, several in the same second.
    proxy.faults = [Fault("/api/records/?", "result-window", limit=1)]
    services = app.extensions["repository"]
    with services.db.write() as conn:
        owner = create_user(conn, "windows@example.org")
    http = Source(proxy.url, verify=source["server"]["cert"], sleep=lambda _s: None)
    report = ApiImport(services.db, services.files, http, owner, concurrency=2).run()
    assert report.listing_error is None and not report.failed and not report.duplicates
    assert report.imported == source["count"]
    listings = [unquote_plus(p) for p in proxy.seen if p.startswith("/api/records/?")]
    assert len(listings) == 3 and "sort=mostrecent" in listings[0] and "size=25" in listings[0]
    assert 'created:[* TO "' in listings[1] and "NOT recid:(" in listings[1]
    # A source that refuses the following listing: the run stops there and says why.
    proxy.faults = [Fault("&q=", "status", status=400), Fault("/api/records/?", "result-window", limit=1)]
    report = ApiImport(services.db, services.files, Source(proxy.url, verify=source["server"]["cert"],
                                                           sleep=lambda _s: None), owner).run()
    assert report.imported == 0 and report.skipped == 1 and "400" in str(report.listing_error)
    http.close()


def test_a_following_listing_that_gives_nothing_new_ends_the_run_with_a_reason(source, proxy, settings, app) -> None:  # type: ignore[no-untyped-def]
    # A source whose listing ends after one result and which ignores the bounded query of the next listing: that
    # listing gives the same newest record again, nothing earlier, and the run stops instead of asking forever.
    proxy.faults = [Fault("/api/records/?", "result-window", limit=1, drop_query=True)]
    services = app.extensions["repository"]
    with services.db.write() as conn:
        owner = create_user(conn, "nothing-new@example.org")
    http = Source(proxy.url, verify=source["server"]["cert"], sleep=lambda _s: None)
    report = ApiImport(services.db, services.files, http, owner).run()
    assert report.imported == 1 and not report.failed
    # Three search results (the two versions of a record are one), the newest of them imported.
    assert "stops at 1 of 3 results and gives no earlier ones" in str(report.listing_error)
    listings = [unquote_plus(p) for p in proxy.seen if p.startswith("/api/records/?")]
    assert len(listings) == 2 and 'created:[* TO "' in listings[1]
    http.close()


def test_a_query_and_a_community_choose_the_records(source, settings, app, capsys) -> None:  # type: ignore[no-untyped-def]
    server = source["server"]
    assert run_import(settings, server["url"], server["cert"], "--community", "glaciers") == 0
    assert "imported 2 records (2 files, " in capsys.readouterr().out
    assert run_import(settings, server["url"], server["cert"], "--query", 'title:"Two files"') == 0
    assert "imported 1 records (2 files, " in capsys.readouterr().out


def test_bad_arguments_are_refused_before_anything_is_asked(settings, capsys) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as exited:
        invoke(COMMANDS["import"], ["api", "ftp://example.org"], settings)
    assert exited.value.code == 2
    assert "not a base URL" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        invoke(COMMANDS["import"], ["api", "https://example.org", "--concurrency", "0"], settings)

