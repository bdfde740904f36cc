"""Validate data-description documents: software corpus documents and datapackage.json descriptors.

Usage: validate_document.py FILE... [--json] [--kind auto|software_corpus|datapackage]

A datapackage.json is validated together with the CSV files and codebook it names, looked up next to it.
Exit code: 0 when every file is valid, 1 when any is invalid, 2 on a usage error (bad arguments, a file
that cannot be read, or a file that is not a data-description document).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    # Run as a file (`python scripts/validate_document.py`): make the project importable.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from repository.datadesc import Report, detect_kind, directory_files, validate_document  # noqa: E402

USAGE_ERROR = 2


class UsageError(Exception):
    """A problem with the command line rather than with a document."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="validate_document.py",
        description="Validate software corpus documents and tabular data packages.",
    )
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE")
    parser.add_argument("--json", action="store_true", help="print the reports as JSON")
    parser.add_argument(
        "--kind",
        choices=["auto", "software_corpus", "datapackage"],
        default="auto",
        help="the kind of every FILE (default: detected from the name and contents)",
    )
    return parser


def validate_path(path: Path, kind: str = "auto") -> Report:
    """Validate one file; a data package's tables are read from the file's folder. UsageError if impossible."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    found = detect_kind(path.name, data) if kind == "auto" else kind
    if found is None:
        raise UsageError(f"{path}: not a data-description document (use --kind to say which it is)")
    return validate_document(found, data, directory_files(path.parent))  # type: ignore[arg-type]


def _location(error: dict[str, Any]) -> str:
    if "resource" in error:
        parts = [error["path"]]
        if error.get("row") is not None:
            parts.append(f"row {error['row']}")
        if error.get("column") is not None:
            parts.append(f"column {error['column']}")
        return ", ".join(parts)
    if "position" in error and "line" in error["position"]:
        return f"line {error['position']['line']}, column {error['position']['column']}"
    return error.get("field") or "(document)"


def format_report(path: Path, report: Report) -> str:
    """A readable report: one heading line, then one line per error."""
    summary = ", ".join(f"{k} {v}" for k, v in report.to_dict()["summary"].items() if v is not False)
    lines = [f"{path}: {report.status.upper()} ({report.kind}; {summary})"]
    lines += [f"  {_location(error)}: {error['message']}" for error in report.errors]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Validate the files named in argv and print the reports; returns the exit code."""
    args = _parser().parse_args(argv)
    reports: list[tuple[Path, Report]] = []
    try:
        for path in args.files:
            reports.append((path, validate_path(path, args.kind)))
    except UsageError as exc:
        print(f"validate_document.py: error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    if args.json:
        body = [{"file": str(path), **report.to_dict()} for path, report in reports]
        print(json.dumps(body, indent=2, ensure_ascii=False))
    else:
        print("\n".join(format_report(path, report) for path, report in reports))
    return 0 if all(report.valid for _, report in reports) else 1


if __name__ == "__main__":
    sys.exit(main())
