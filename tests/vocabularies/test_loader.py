"""scripts/load_vocabularies.py: reports what changed; a malformed file changes nothing and names its line."""

from __future__ import annotations

import json

import pytest
from helpers.http import https_client
from sqlalchemy import delete, func, select

from app import create_app
from repository.storage import open_database
from repository.storage.tables.vocabularies import funders, grants, license_aliases, licenses
from repository.vocabularies.loader import DEFAULT_PATHS, load
from scripts import load_vocabularies

EC = "10.13039/501100000780"


@pytest.fixture
def restore(database_url):
    """Put the built-in vocabularies back afterwards (PostgreSQL keeps them between tests)."""
    yield
    db = open_database(database_url)
    load(db)
    db.dispose()


def _grant_lines() -> list[dict]:
    with open(DEFAULT_PATHS["grants"], encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def _write(path, lines: list) -> str:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return str(path)


def _counts(database_url: str) -> dict[str, int]:
    db = open_database(database_url)
    with db.read() as conn:
        counts = {t.name: conn.execute(select(func.count()).select_from(t)).scalar_one()
                  for t in (licenses, license_aliases, funders, grants)}  # fmt: skip
    db.dispose()
    return counts


def test_reloading_the_built_in_data_changes_nothing(settings, capsys):
    assert load_vocabularies.main(["--quiet"], settings) == 0
    assert capsys.readouterr().out.splitlines() == [
        "funders: 0 added, 0 updated, 0 removed",
        "grants: 0 added, 0 updated, 0 removed",
        "licenses: 0 added, 0 updated, 0 removed",
        "license aliases: 0 added, 0 updated, 0 removed",
    ]


def test_a_good_file_is_loaded_and_the_changes_reported(settings, client, tmp_path, capsys, restore):
    lines = _grant_lines()
    lines[1]["title"] = "A corrected title"  # EC 283595
    removed = lines.pop(0)  # EC 246686
    lines.append({"funder_doi": EC, "code": "101000001", "title": "A new project", "program": "HORIZON",
                  "startdate": "2023-01-01", "enddate": None})  # fmt: skip
    path = _write(tmp_path / "grants.jsonl", lines)
    assert load_vocabularies.main(["grants", "--grants-file", path, "--quiet"], settings) == 0
    assert capsys.readouterr().out == "grants: 1 added, 1 updated, 1 removed\n"
    assert client.get(f"/api/grants/{EC}::283595").json["metadata"]["title"] == "A corrected title"
    assert client.get(f"/api/grants/{EC}::{removed['code']}").status_code == 404
    added = client.get(f"/api/grants/{EC}::101000001").json["metadata"]
    assert added["acronym"] == "" and added["enddate"] is None


def test_the_progress_bar_goes_to_stderr(settings, capsys):
    assert load_vocabularies.main(["funders"], settings) == 0
    captured = capsys.readouterr()
    assert captured.out == "funders: 0 added, 0 updated, 0 removed\n"
    assert "funders:" in captured.err and "/17 " in captured.err  # the bar, cleared when done


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("{not json", "not valid JSON"),
        ('["a list"]', "expected a JSON object"),
        ({"funder_doi": EC, "code": "1", "title": ""}, "'title' must be a non-empty string"),
        ({"funder_doi": "nope", "code": "1", "title": "T"}, "'funder_doi' is not a DOI"),
        ({"funder_doi": EC, "code": "1", "title": "T", "startdate": "2020-13-01"}, "'startdate' must be a date"),
        ({"funder_doi": EC, "code": "1", "title": "T", "budget": 3}, "unknown field(s) budget"),
        ({"funder_doi": EC, "code": "283595", "title": "T"}, "listed twice"),
        ({"funder_doi": "10.13039/100000000", "code": "1", "title": "T"}, "unknown funder 10.13039/100000000"),
    ],
)  # fmt: skip
@pytest.mark.slow  # 0.4 s and more of work
def test_a_malformed_file_changes_nothing_and_names_the_line(settings, database_url, tmp_path, capsys, bad, message):
    lines = _grant_lines()
    lines[1]["title"] = "Would change if the load went ahead"
    lines.insert(3, bad)  # line 4
    path = _write(tmp_path / "grants.jsonl", lines)
    before = _counts(database_url)
    assert load_vocabularies.main(["grants", "--grants-file", path, "--quiet"], settings) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"{path}, line 4: " in captured.err and message in captured.err
    assert _counts(database_url) == before
    client = https_client(create_app(settings))
    assert client.get(f"/api/grants/{EC}::283595").json["metadata"]["title"].startswith("2nd-Generation")


def test_a_license_alias_clash_is_refused(settings, tmp_path, capsys):
    with open(DEFAULT_PATHS["licenses"], encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    lines.append(json.dumps({"id": "0BSD", "aliases": ["apache"]}))
    path = _write(tmp_path / "licenses.jsonl", lines)
    assert load_vocabularies.main(["licenses", "--licenses-file", path, "--quiet"], settings) == 2
    assert f"line {len(lines)}: alias 'apache' already names license 'Apache-2.0'" in capsys.readouterr().err


def test_funders_still_named_by_grants_are_not_removed(settings, tmp_path, capsys):
    with open(DEFAULT_PATHS["funders"], encoding="utf-8") as handle:
        lines = [line for line in handle.read().splitlines() if EC not in line]
    path = _write(tmp_path / "funders.jsonl", lines)
    assert load_vocabularies.main(["funders", "--funders-file", path, "--quiet"], settings) == 2
    assert "cannot remove funder(s) 10.13039/501100000780" in capsys.readouterr().err


def test_unknown_list_and_missing_file(settings, tmp_path, capsys):
    assert load_vocabularies.main(["journals"], settings) == 2
    assert "unknown list(s) journals" in capsys.readouterr().err
    assert load_vocabularies.main(["grants", "--grants-file", str(tmp_path / "none.jsonl")], settings) == 2
    assert "none.jsonl" in capsys.readouterr().err


def test_start_up_loads_empty_vocabularies(make_settings, database_url, restore):
    db = open_database(database_url)
    with db.write() as conn:
        for table in (grants, funders, license_aliases, licenses):
            conn.execute(delete(table))
    db.dispose()
    client = https_client(create_app(make_settings()))
    assert client.get("/api/licenses/cc-by").status_code == 200
    assert client.get(f"/api/grants/{EC}::283595").status_code == 200
    counts = _counts(database_url)
    assert counts["licenses"] > 700 and counts["funders"] >= 17 and counts["grants"] >= 40
