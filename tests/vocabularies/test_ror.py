"""`repository-admin load-ror DUMP`: a ROR data dump (JSON or the release's zip, schema v2 or v1) becomes the
organisations the affiliation field suggests; loading it again changes nothing; a malformed dump changes nothing.
ROR ids and ORCID iDs are checked with their check digits."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from sqlalchemy import func, select

from repository.cli import COMMANDS, invoke
from repository.storage import open_database
from repository.storage.tables.vocabularies import organizations
from repository.vocabularies import ror
from repository.vocabularies.identifiers import normalize_ror, orcid_problem

SAMPLE = Path(__file__).parent.parent / "data" / "ror" / "ror-sample-v2.json"
MONASH = "https://ror.org/02bfwt286"


def load_ror(settings, *argv: str) -> int:  # type: ignore[no-untyped-def]
    return invoke(COMMANDS["load-ror"], [*argv, "--quiet"], settings)


def _rows(database_url: str) -> dict[str, dict]:
    db = open_database(database_url)
    with db.read() as conn:
        rows = {row.id: dict(row._mapping) for row in conn.execute(select(organizations))}
    db.dispose()
    return rows


def _sample() -> list[dict]:
    return json.loads(SAMPLE.read_text(encoding="utf-8"))


def test_a_dump_is_loaded_and_loading_it_again_changes_nothing(settings, database_url, capsys):
    assert load_ror(settings, str(SAMPLE)) == 0
    assert capsys.readouterr().out.strip() == "organisations: 20 added, 0 updated, 0 removed"
    rows = _rows(database_url)
    assert len(rows) == 20
    uq = rows["https://ror.org/00rqy9422"]
    assert (uq["name"], json.loads(uq["acronyms"]), uq["country"], uq["status"]) == (
        "University of Queensland", ["UQ"], "AU", "active")
    before = {k: {c: v for c, v in row.items() if c not in ("created", "updated")} for k, row in rows.items()}
    assert load_ror(settings, str(SAMPLE)) == 0
    assert capsys.readouterr().out.strip() == "organisations: 0 added, 0 updated, 0 removed"
    assert {k: {c: v for c, v in row.items() if c not in ("created", "updated")}
            for k, row in _rows(database_url).items()} == before


def test_the_release_zip_is_read_by_its_schema_v2_file(settings, database_url, tmp_path, capsys):
    v1 = [{"id": MONASH, "name": "Not the v2 file", "status": "active", "acronyms": [], "aliases": [], "labels": [],
           "country": {"country_code": "AU"}}]
    dump = tmp_path / "v1.58-2024-12-11-ror-data.zip"
    with zipfile.ZipFile(dump, "w") as archive:
        archive.writestr("v1.58-2024-12-11-ror-data.json", json.dumps(v1))
        archive.writestr("v1.58-2024-12-11-ror-data_schema_v2.json", SAMPLE.read_text(encoding="utf-8"))
        archive.writestr("v1.58-2024-12-11-ror-data.csv", "id,name\n")
    assert load_ror(settings, str(dump)) == 0
    assert capsys.readouterr().out.strip() == "organisations: 20 added, 0 updated, 0 removed"
    assert _rows(database_url)[MONASH]["name"] == "Monash University"


def test_a_schema_v1_dump_is_read_too(settings, database_url, tmp_path):
    v1 = [{"id": "https://ror.org/01ggx4157", "name": "European Organization for Nuclear Research",
           "status": "active", "acronyms": ["CERN"], "aliases": [], "labels": [{"label": "Organisation européenne "
           "pour la recherche nucléaire", "iso639": "fr"}], "country": {"country_code": "CH"}}]
    dump = tmp_path / "v1.json"
    dump.write_text(json.dumps(v1))
    assert load_ror(settings, str(dump)) == 0
    row = _rows(database_url)["https://ror.org/01ggx4157"]
    assert (json.loads(row["acronyms"]), row["country"]) == (["CERN"], "CH")
    assert "nucléaire" in json.loads(row["aliases"])[0]


def test_a_newer_dump_updates_and_removes(settings, database_url, tmp_path, capsys):
    assert load_ror(settings, str(SAMPLE)) == 0
    newer = _sample()
    newer[0]["names"][0]["value"] = "Monash University (renamed)"
    removed = newer.pop()["id"]
    dump = tmp_path / "newer.json"
    dump.write_text(json.dumps(newer))
    capsys.readouterr()
    assert load_ror(settings, str(dump)) == 0
    assert capsys.readouterr().out.strip() == "organisations: 0 added, 1 updated, 1 removed"
    rows = _rows(database_url)
    assert rows[MONASH]["name"] == "Monash University (renamed)" and removed not in rows


@pytest.mark.parametrize(("change", "message"), [
    (lambda orgs: orgs[3].update(id="https://ror.org/02bfwt287"), "organisation 4: 'id' 'https://ror.org/02bfwt287' "
                                                                  "is not a ROR id"),
    (lambda orgs: orgs[1].update(names=[]), "organisation 2: https://ror.org/00rqy9422 has no name"),
    (lambda orgs: orgs[0].update(status="closed"), "organisation 1: https://ror.org/02bfwt286: 'status' 'closed' "
                                                   "is not one of active, inactive, withdrawn"),
    (lambda orgs: orgs.append("Monash"), "organisation 21: expected a JSON object"),
])
def test_a_malformed_dump_changes_nothing_and_says_where(settings, database_url, tmp_path, capsys, change, message):
    orgs = _sample()
    change(orgs)
    dump = tmp_path / "bad.json"
    dump.write_text(json.dumps(orgs))
    assert load_ror(settings, str(dump)) == 2
    assert capsys.readouterr().err.strip() == f"error: {dump}, {message}"
    assert _rows(database_url) == {}


@pytest.mark.parametrize(("content", "message"), [
    ("{not json", "not a ROR dump: not valid JSON"),
    ('{"id": "https://ror.org/02bfwt286"}', "not a ROR dump: expected a JSON array of organisations"),
])
def test_what_is_not_a_dump_is_refused(settings, tmp_path, capsys, content, message):
    dump = tmp_path / "dump.json"
    dump.write_text(content)
    assert load_ror(settings, str(dump)) == 2
    assert message in capsys.readouterr().err


def test_a_missing_file_is_one_line(settings, tmp_path, capsys):
    assert load_ror(settings, str(tmp_path / "absent.zip")) == 2
    assert capsys.readouterr().err.startswith("error: [Errno 2]")


def test_search_finds_by_name_acronym_other_name_and_id(settings, database_url):
    assert load_ror(settings, str(SAMPLE)) == 0
    db = open_database(database_url)
    from repository.paging import Page
    with db.read() as conn:
        def names(q: str) -> list[str]:
            return [row.name for row in ror.search(conn, q, Page(1, 5))[0]]
        assert names("monash") == ["Monash University"]
        assert names("UQ")[0] == "University of Queensland"
        assert names("royal melbourne") == ["RMIT University"]
        assert names("02bfwt286") == ["Monash University"]
        assert names("queensland")[:2] == ["Central Queensland University", "University of Queensland"]
        assert names("University of Queensland")[0] == "University of Queensland"
        assert ror.by_name(conn, "monash university").id == MONASH
        assert ror.by_name(conn, "Royal Melbourne Institute of Technology University").name == "RMIT University"
        assert ror.by_name(conn, "University") is None
        assert conn.execute(select(func.count()).select_from(organizations)).scalar_one() == 20
    db.dispose()


def test_ror_ids_are_checked_with_their_check_digits():
    assert normalize_ror("02bfwt286") == MONASH
    assert normalize_ror("https://ror.org/02BFWT286") == MONASH
    assert normalize_ror("ror.org/02bfwt286") == MONASH
    assert normalize_ror("02bfwt287") is None  # one digit off
    assert normalize_ror("12bfwt286") is None
    assert normalize_ror("02bfwl286") is None  # l is not in Crockford's base 32


def test_orcid_problems_say_what_is_wrong():
    assert orcid_problem("0000-0002-1825-0097") is None
    assert orcid_problem("https://orcid.org/0000-0002-1825-0097") is None
    assert orcid_problem("0000-0002-1694-233X") is None
    assert orcid_problem("0000000218250097") is None
    assert "does not exist" in orcid_problem("0000-0002-1825-0098")
    assert "does not exist" in orcid_problem("0000-0002-1852-0097")  # two digits swapped
    assert "16 digits" in orcid_problem("0000-0002-1825-009")
    assert "16 digits" in orcid_problem("Jane Doe")
