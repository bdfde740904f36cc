"""The documentation in `docs/` agrees with the code: the paths the architecture pages name exist, every
`docs/<page>.md#<anchor>` a comment cites is a section of that page, and the performance page shows what
`bench/results_table.py` renders for the newest committed report. (Links between pages are checked by
`mkdocs build --strict`.)"""

from __future__ import annotations

import importlib
import json
import re
import sys
import unicodedata
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
CODE = ("repository", "serializers", "scripts", "bench", "tests", "app.py")
# A path in backticks, as the pages name code: `repository/outbox.py`, `repository/worker/`, `tests/test_docs.py`.
PATH = re.compile(r"`((?:repository|serializers|scripts|bench|tests|docs|index_templates|schemas)/[\w./-]*|app\.py)`")
CITED = re.compile(r"docs/([\w/-]+\.md)#([\w-]+)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*$", re.MULTILINE)
EXPLICIT = re.compile(r"\{#([\w-]+)\}")


def anchors(page: Path) -> set[str]:
    """The section anchors MkDocs gives `page`: explicit `{#id}`s, else the heading's slug (toc's default)."""
    found = set(EXPLICIT.findall(page.read_text(encoding="utf-8")))
    for heading in HEADING.findall(page.read_text(encoding="utf-8")):
        if EXPLICIT.search(heading):
            continue
        text = unicodedata.normalize("NFKD", re.sub(r"`", "", heading)).lower()
        found.add(re.sub(r"[\s]+", "-", re.sub(r"[^\w\s-]", "", text).strip()))
    return found


def code_files() -> list[Path]:
    files: list[Path] = []
    for name in CODE:
        path = ROOT / name
        files += [path] if path.is_file() else [p for p in path.rglob("*.py") if "opensearch_node" not in p.parts]
    return files


def test_the_architecture_pages_name_only_paths_that_exist():
    missing = []
    for page in sorted((DOCS / "architecture").glob("*.md")):
        for path in PATH.findall(page.read_text(encoding="utf-8")):
            if not (ROOT / path.rstrip("/")).exists():
                missing.append(f"{page.relative_to(ROOT)}: {path}")
    assert not missing, "paths named in the architecture pages that do not exist:\n" + "\n".join(missing)


@pytest.mark.slow  # 0.4 s and more of work
def test_every_section_a_comment_cites_exists():
    broken = []
    for source in code_files():
        for page, anchor in CITED.findall(source.read_text(encoding="utf-8")):
            target = DOCS / page
            if not target.exists() or anchor not in anchors(target):
                broken.append(f"{source.relative_to(ROOT)}: docs/{page}#{anchor}")
    assert not broken, "comments citing a docs section that does not exist:\n" + "\n".join(broken)


def _bench_module(name: str) -> Any:
    """A module of bench/ (they import their neighbours by name)."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(ROOT / "bench"))


def test_the_performance_page_shows_the_newest_report():
    results_table = _bench_module("results_table")
    page = (DOCS / "performance.md").read_text(encoding="utf-8")
    for start, end, rendered in (
            (results_table.START, results_table.END, results_table.render(results_table.newest_report())),
            (results_table.ENGINES_START, results_table.ENGINES_END,
             results_table.render_engines(results_table.newest_report(part="engines")))):
        if start not in page:
            pytest.fail(f"docs/performance.md lacks the generated block {start}")
        shown = page.split(start, 1)[1].split(end, 1)[0].strip()
        assert shown == rendered.strip(), "docs/performance.md is stale: run python bench/results_table.py --write"


def test_the_performance_page_shows_the_newest_import_reports():
    import_report = _bench_module("import_report")
    page = (DOCS / "performance.md").read_text(encoding="utf-8")
    for kind in import_report.TARGETS:
        start, end = import_report.markers(kind)
        assert start in page and end in page, f"docs/performance.md lacks the generated block {start}"
        newest = import_report.newest(kind)
        assert newest is not None, f"no bench/results/{kind}-*.json: run its benchmark"
        shown = page.split(start, 1)[1].split(end, 1)[0].strip()
        assert shown == import_report.render(newest)[1].strip(), (
            f"docs/performance.md is stale: run the benchmark's --write {newest.relative_to(ROOT)}")


def test_the_performance_page_shows_the_newest_export_report():
    from bench import export_bench

    newest = sorted((ROOT / "bench" / "results").glob("export-*.json"))[-1]
    page = (DOCS / "performance.md").read_text(encoding="utf-8")
    shown = page.split(export_bench.START, 1)[1].split(export_bench.END, 1)[0].strip()
    rendered = export_bench.table(json.loads(newest.read_text(encoding="utf-8")),
                                  newest.relative_to(ROOT).as_posix())
    assert shown == rendered.strip(), "docs/performance.md is stale: run python bench/export_bench.py --write REPORT"
