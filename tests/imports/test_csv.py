"""`repository-admin import csv`: the template, the check of every row before anything is written (the dry run's
report), then deposits published or left as drafts for their owners, with files read from paths and URLs (served
on loopback); a rerun skips the rows already imported."""

from __future__ import annotations

import csv
import hashlib
import io
from pathlib import Path

import pytest
from helpers.recorded_source import RecordedSource
from sqlalchemy import func, select

from repository.cli import COMMANDS, invoke
from repository.config import Settings
from repository.imports.csv_rows import NAMES
from repository.storage.tables.accounts import users
from repository.storage.tables.deposits import deposits
from repository.storage.tables.records import records

DATA = b"year,yield\n2007,41\n"


def sheet(folder: Path, *rows: dict[str, str]) -> Path:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=NAMES)
    writer.writeheader()
    for row in rows:
        writer.writerow(row)
    path = folder / "theses.csv"
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def row(ident: str, **cells: str) -> dict[str, str]:
    base = {"id": ident, "upload_type": "publication", "publication_type": "thesis", "title": f"Thesis {ident}",
            "creators": "Doe, Jane [0000-0002-1825-0097]; Roe, Richard", "description": "What it finds.",
            "publication_date": "2024-06-30", "keywords": "soil; nitrogen", "license": "cc-by-4.0"}
    return {**base, **cells}


def run(settings: Settings, path: Path, *extra: str) -> int:
    return invoke(COMMANDS["import"], ["csv", str(path), "--owner", "library@example.org", "--quiet", *extra],
                  settings)


def count(app, table, *where) -> int:  # type: ignore[no-untyped-def]
    with app.extensions["repository"].db.read() as conn:
        return conn.execute(select(func.count()).select_from(table).where(*where)).scalar_one()


def test_the_template_has_every_column_and_is_never_written_over(settings, tmp_path, capsys) -> None:
    out = tmp_path / "template.csv"
    assert invoke(COMMANDS["import"], ["csv", str(out), "--template"], settings) == 0
    header, example = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert tuple(header) == NAMES and example[0] == "thesis-0001"
    assert invoke(COMMANDS["import"], ["csv", str(out), "--template"], settings) == 2
    assert "exists" in capsys.readouterr().err


def test_the_check_reports_every_bad_row_and_writes_nothing(app, settings, tmp_path, capsys) -> None:
    (tmp_path / "ok.csv").write_bytes(DATA)
    path = sheet(tmp_path, row("a", files="ok.csv"), row("b", title="", files="missing.pdf"),
                 row("a", files="ok.csv"), row("c", owner="not-an-address", files="../ok.csv"),
                 row("d", access_right="sometimes", files="ok.csv"))
    assert run(settings, path, "--publish") == 2
    out = capsys.readouterr().out
    assert "checked 5 rows: 1 to import, 0 already imported, 4 with problems" in out
    assert "row 3 (b): metadata.title: Missing data for required field.; files: missing.pdf: no readable file" in out
    assert "row 4 (a): id: the same id as an earlier row" in out
    assert "row 5 (c): owner: not an e-mail address ('not-an-address')" in out
    assert "files: ../ok.csv: give a path inside the sheet's folder" in out
    assert "row 6 (d): metadata.access_right:" in out
    assert "nothing written" in out
    assert count(app, deposits) == 0 and count(app, users, users.c.email == "library@example.org") == 0


def test_a_dry_run_of_a_good_sheet_writes_nothing(app, settings, tmp_path, capsys) -> None:
    (tmp_path / "ok.csv").write_bytes(DATA)
    assert run(settings, sheet(tmp_path, row("a", files="ok.csv")), "--dry-run", "--publish") == 0
    assert "dry run: nothing written" in capsys.readouterr().out
    assert count(app, deposits) == 0


@pytest.mark.slow  # 0.4 s and more of work
def test_rows_are_published_with_files_from_paths_and_urls(app, client, settings, source: RecordedSource,
                                                          tmp_path, capsys) -> None:
    (tmp_path / "local.csv").write_bytes(DATA)
    source.answers["/files/remote.csv"] = [(200, DATA + b"2008,44\n")]
    url = source.url.replace("/oai", "/files/remote.csv")
    path = sheet(tmp_path, row("t1", files="local.csv"), row("t2", files=url),
                 row("t3", original_url="https://example.org/theses/3"))
    assert run(settings, path, "--publish") == 0
    out = capsys.readouterr().out
    assert "imported 3, skipped 0, failed 0" in out
    found = {hit["metadata"]["title"]: hit for hit in client.get("/api/records/", query_string={"q": "Thesis"}).json["hits"]["hits"]}
    assert set(found) == {"Thesis t1", "Thesis t2", "Thesis t3"}
    one = found["Thesis t1"]
    assert one["files"][0]["key"] == "local.csv"
    assert one["files"][0]["checksum"] == "md5:" + hashlib.md5(DATA).hexdigest()
    assert one["metadata"]["creators"][0] == {"name": "Doe, Jane", "orcid": "0000-0002-1825-0097"}
    assert found["Thesis t2"]["files"][0]["size"] == len(DATA) + 8
    assert found["Thesis t3"]["files"] == [] and found["Thesis t3"]["metadata"]["files"] == {"enabled": False}
    assert run(settings, path, "--publish") == 0
    assert "checked 3 rows: 0 to import, 3 already imported, 0 with problems" in capsys.readouterr().out
    assert count(app, records) == 3


def test_without_publish_the_rows_are_drafts_of_their_owners(app, settings, tmp_path, capsys) -> None:
    (tmp_path / "a.csv").write_bytes(DATA)
    path = sheet(tmp_path, row("d1", owner="Student@Example.org", files="a.csv", description=""), row("d2"))
    assert run(settings, path) == 0  # drafts may be incomplete: no description, no files
    assert "imported 2" in capsys.readouterr().out
    with app.extensions["repository"].db.read() as conn:
        owners = dict(conn.execute(select(users.c.email, func.count()).select_from(
            deposits.join(users, users.c.id == deposits.c.owner_id)).where(deposits.c.status == "draft")
            .group_by(users.c.email)).all())
    assert owners == {"student@example.org": 1, "library@example.org": 1}
    assert count(app, records) == 0


@pytest.mark.slow  # 0.4 s and more of work
def test_a_file_that_cannot_be_fetched_fails_its_row_only(app, settings, source: RecordedSource, tmp_path,
                                                         capsys) -> None:
    (tmp_path / "ok.csv").write_bytes(DATA)
    gone = source.url.replace("/oai", "/files/gone.csv")  # the server answers 404
    path = sheet(tmp_path, row("x1", files=gone), row("x2", files="ok.csv"))
    assert run(settings, path, "--publish") == 1
    out = capsys.readouterr().out
    assert "imported 1, skipped 0, failed 1" in out and "failed: row 2 (x1): HTTP 404" in out
    assert count(app, deposits) == 1
    source.answers["/files/gone.csv"] = [(200, DATA)]
    assert run(settings, path, "--publish") == 0  # the rerun brings in what is missing
    assert count(app, records) == 2
