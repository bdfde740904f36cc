"""Table previews of CSV files of records and deposits: types from the descriptor, paging, filters, sort, access."""

from __future__ import annotations

import os
import threading

import pytest
from helpers.datadesc_docs import API, VALID_ROWS, csv_bytes, descriptor_bytes
from helpers.factories import make_deposit, publish
from helpers.http import https_client


def _preview(client, recid: int, file_id: str, query: str = "", headers: dict | None = None):  # type: ignore[no-untyped-def]
    return client.get(f"/api/records/{recid}/files/{file_id}/preview{query}", headers=headers or {})


def test_record_preview_with_descriptor_types(package_deposit, client, auth, settings):
    dep, uploaded = package_deposit()
    record = publish(client, auth, dep)
    csv_id = uploaded["data.csv"]["id"]
    page = _preview(client, record["id"], csv_id, "?limit=2")
    assert page.status_code == 200
    body = page.json
    assert body["columns"][:3] == [
        {"name": "country", "type": "string"}, {"name": "year", "type": "integer"}, {"name": "value", "type": "number"},
    ]  # fmt: skip
    assert body["total"] == len(VALID_ROWS) and body["limit"] == 2 and body["offset"] == 0
    assert body["truncated"] is False
    assert body["rows"][0] == {
        "country": "Germany", "year": 1990, "value": 1.5, "indicator": "gdp", "source": "World Bank", "unit": "USD",
        "notes": "first",
    }  # fmt: skip
    assert len(body["rows"]) == 2 and os.path.isfile(os.path.join(settings.INSTANCE_PATH, "previews", f"{csv_id}.db"))
    second = _preview(client, record["id"], csv_id, "?limit=2&offset=2").json["rows"]
    assert [r["country"] for r in second] == ["NLD", None]  # "NA" is a missing value, never Namibia
    by_year = _preview(client, record["id"], csv_id, "?sort=-year&limit=1").json["rows"]
    assert by_year[0]["year"] == 2030
    filtered = _preview(client, record["id"], csv_id, "?year=2005").json
    assert filtered["total"] == 1 and filtered["rows"][0]["value"] is None
    assert _preview(client, record["id"], csv_id, "?country=NLD&year=2001").json["total"] == 1


def test_bad_preview_requests(package_deposit, client, auth):
    dep, uploaded = package_deposit()
    record = publish(client, auth, dep)
    csv_id = uploaded["data.csv"]["id"]
    unknown = _preview(client, record["id"], csv_id, "?colour=red")
    assert unknown.status_code == 400 and unknown.json["errors"] == [{"field": "colour", "message": "Unknown column 'colour'."}]
    assert _preview(client, record["id"], csv_id, "?sort=colour").status_code == 400
    assert _preview(client, record["id"], csv_id, "?limit=many").status_code == 400
    assert _preview(client, record["id"], csv_id, "?year=recent").status_code == 400
    not_a_table = _preview(client, record["id"], uploaded["codebook.md"]["id"])
    assert not_a_table.status_code == 404 and "CSV" in not_a_table.json["message"]


@pytest.mark.slow  # 0.4 s and more of work
def test_numbers_past_64_bits_are_400s(package_deposit, client, auth):
    """A guest's preview with an offset, a limit or an integer filter past 64 bits: a 400 naming it, not a 500
    (the answer echoes the offset, and SQLite takes no such integer)."""
    dep, uploaded = package_deposit()
    record = publish(client, auth, dep)
    csv_id = uploaded["data.csv"]["id"]
    huge = str(2**64)
    for name in ("offset", "limit", "year"):
        answer = _preview(client, record["id"], csv_id, f"?{name}={huge}")
        assert answer.status_code == 400, (name, answer.status_code)
        assert answer.json["errors"][0]["field"] == name
    assert _preview(client, record["id"], csv_id, f"?offset={2**63 - 1}").json["rows"] == []  # the largest: past the end


def test_preview_access_is_as_for_downloads(package_deposit, client, auth, make_token):
    dep, uploaded = package_deposit(access_right="closed")
    record = publish(client, auth, dep)
    csv_id = uploaded["data.csv"]["id"]
    stranger = {"Authorization": "Bearer " + make_token("stranger@example.org")}
    assert _preview(client, record["id"], csv_id).status_code == 404
    assert _preview(client, record["id"], csv_id, headers=stranger).status_code == 404
    assert _preview(client, record["id"], csv_id, headers=auth).status_code == 200
    # Under the deposit: its owner only.
    url = f"{API}/{dep['id']}/files/{csv_id}/preview"
    assert client.get(url, headers=auth).json["total"] == len(VALID_ROWS)
    assert client.get(url, headers=stranger).status_code == 404


def test_deposit_preview_follows_the_descriptor(client, auth, bucket_put, runner):
    dep = make_deposit(client, auth)
    bucket_put(dep, "data.csv", csv_bytes(*VALID_ROWS))
    url = f"{API}/{dep['id']}/files/data.csv/preview?limit=1"  # a file by its name, as the files interface allows
    assert client.get(url, headers=auth).json["columns"][1] == {"name": "year", "type": "string"}
    bucket_put(dep, "datapackage.json", descriptor_bytes())
    runner.wait_idle()
    body = client.get(url, headers=auth).json
    assert body["columns"][1] == {"name": "year", "type": "integer"} and body["rows"][0]["year"] == 1990


@pytest.mark.slow
def test_concurrent_first_requests_build_one_database(package_deposit, app, client, auth):
    dep, uploaded = package_deposit()
    record = publish(client, auth, dep)
    csv_id = uploaded["data.csv"]["id"]
    answers: list[int] = []

    def ask() -> None:
        answers.append(_preview(https_client(app), record["id"], csv_id, "?limit=1000").json["total"])

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == [len(VALID_ROWS)] * 4


@pytest.mark.slow
def test_unusual_csv_files_get_an_answer_never_a_500(client, auth, multipart, runner, monkeypatch):
    from repository.datadesc import preview

    monkeypatch.setattr(preview, "MAX_LINE_CHARS", 10_000)
    cases = {
        "wide.csv": (",".join(f"c{i}" for i in range(1_500)) + "\n" + ",".join("1" * 1_500) + "\n").encode(),
        "long.csv": b"a,b\n" + b"x" * 20_000 + b",1\n",
        "empty.csv": b"",
        "nul.csv": b"a\x00,b\n1,\x002\n",
    }
    dep = make_deposit(client, auth)
    ids = {name: multipart(dep, name, content)["id"] for name, content in cases.items()}
    record = publish(client, auth, dep)
    answers = {name: _preview(client, record["id"], file_id) for name, file_id in ids.items()}
    assert answers["wide.csv"].status_code == 422 and "1,500 columns" in answers["wide.csv"].json["message"]
    assert answers["long.csv"].status_code == 422 and "line is longer" in answers["long.csv"].json["message"]
    assert answers["empty.csv"].status_code == 200 and answers["empty.csv"].json["columns"] == []
    assert answers["nul.csv"].status_code == 200 and answers["nul.csv"].json["rows"] == [{"a": "1", "b": "\x002"}]


def test_a_preview_holds_the_first_rows_and_says_so(package_deposit, client, auth, monkeypatch):
    from repository.datadesc import preview

    monkeypatch.setattr(preview, "MAX_ROWS", 3)
    dep, uploaded = package_deposit()
    record = publish(client, auth, dep)
    page = _preview(client, record["id"], uploaded["data.csv"]["id"]).json
    assert page["total"] == 3 and len(page["rows"]) == 3 and page["truncated"] is True
