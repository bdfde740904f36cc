"""scripts/validate_document.py, run in-process and as a subprocess."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.datadesc_docs import csv_bytes

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "validate_document.py"


def _load_script() -> Any:
    spec = importlib.util.spec_from_file_location("validate_document", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


script = _load_script()


@pytest.fixture
def corpus_file(tmp_path: Path, corpus: dict[str, Any]) -> Path:
    """A valid software corpus document on disk."""
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps(corpus))
    return path


def test_valid_files_exit_0(capsys: pytest.CaptureFixture[str], package_dir: Path, corpus_file: Path) -> None:
    assert script.main([str(package_dir / "datapackage.json"), str(corpus_file)]) == 0
    out = capsys.readouterr().out
    assert "datapackage.json: VALID (datapackage; resources 1, resources_checked 1, rows_checked 5" in out
    assert "corpus.json: VALID (software_corpus;" in out


def test_invalid_table_exits_1_and_names_row_and_column(
    capsys: pytest.CaptureFixture[str], package_dir: Path
) -> None:
    (package_dir / "data.csv").write_bytes(csv_bytes("DE,2001,1,,,,", "DE,1800,1,,,,"))
    assert script.main([str(package_dir / "datapackage.json")]) == 1
    out = capsys.readouterr().out
    assert "INVALID" in out
    assert "  data.csv, row 3, column year: " in out


def test_json_output(capsys: pytest.CaptureFixture[str], corpus_file: Path, corpus: dict[str, Any]) -> None:
    corpus["research_software"][0]["platform"] = "github"
    corpus_file.write_text(json.dumps(corpus))
    assert script.main([str(corpus_file), "--json"]) == 1
    [body] = json.loads(capsys.readouterr().out)
    assert body["file"] == str(corpus_file)
    assert body["status"] == "invalid"
    assert [(e["field"], e["code"]) for e in body["errors"]] == [("research_software.0.platform", "enum")]


def test_json_syntax_errors_show_line_and_column(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "datapackage.json").write_text('{\n  "name": "x",,\n}')
    assert script.main([str(tmp_path / "datapackage.json")]) == 1
    assert "  line 2, column 15: Invalid JSON" in capsys.readouterr().out


def test_kind_option(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "descriptor.json").write_text("{}")
    assert script.main([str(tmp_path / "descriptor.json")]) == 2
    assert "not a data-description document" in capsys.readouterr().err
    assert script.main([str(tmp_path / "descriptor.json"), "--kind", "software_corpus"]) == 0
    assert script.main([str(tmp_path / "descriptor.json"), "--kind", "datapackage"]) == 1


@pytest.mark.parametrize("argv", [[], ["--kind", "other", "x.json"], ["--nope", "x.json"]])
def test_usage_errors_exit_2(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        script.main(argv)
    assert caught.value.code == 2


def test_unreadable_file_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert script.main([str(tmp_path / "missing.json")]) == 2
    assert "cannot read" in capsys.readouterr().err


@pytest.mark.slow  # a subprocess: seconds of start-up
def test_as_a_subprocess(package_dir: Path, corpus_file: Path) -> None:
    ok = subprocess.run(
        [sys.executable, str(SCRIPT), str(package_dir / "datapackage.json"), str(corpus_file), "--json"],
        capture_output=True,
        text=True,
        check=False,
        cwd=package_dir,
    )
    assert ok.returncode == 0, ok.stderr
    assert [r["status"] for r in json.loads(ok.stdout)] == ["valid", "valid"]
    (package_dir / "codebook.md").unlink()
    bad = subprocess.run(
        [sys.executable, str(SCRIPT), str(package_dir / "datapackage.json")],
        capture_output=True,
        text=True,
        check=False,
        cwd=package_dir,
    )
    assert bad.returncode == 1
    assert "codebook: The codebook file 'codebook.md' is not among the files." in bad.stdout
