#!/usr/bin/env python
"""Check release metadata files (.service.json, .zenodo.json, CITATION.cff) offline, with the service's own rules.

    python scripts/validate_metadata.py FILE... [--json]
    python scripts/validate_metadata.py --write-schemas [DIR]

Every problem of every file is listed, with its dotted path in the file, the deposit API's message and a hint.
Licenses are checked against the built-in list; grants and communities only by the service
(POST /api/metadata/validate). Exit code: 0 all valid, 1 any invalid, 2 a file cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    # Run as a file (`python scripts/validate_metadata.py`): make the project importable.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from repository.metadata.jsonschema import deposit_metadata_json_schema  # noqa: E402
from repository.releases.metafile_check import OfflineLookups, Report, builtin_license_index, check_file  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_DIR = ROOT / "schemas"
# File name -> whether it is the schema for publishing (else every field is optional, as in a .service.json).
SCHEMA_FILES = {"deposit-metadata.json": True, "release-metadata.json": False}


def schema_text(publish: bool) -> str:
    """The derived schema as written into the repository's `schemas/` folder."""
    return json.dumps(deposit_metadata_json_schema(publish=publish), indent=2, ensure_ascii=False) + "\n"


def write_schemas(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, publish in SCHEMA_FILES.items():
        path = directory / name
        path.write_text(schema_text(publish), encoding="utf-8")
        written.append(path)
    return written


def _location(error: dict[str, Any]) -> str:
    if "line" in error:
        return f"line {error['line']}, column {error['column']}"
    return error.get("field") or "(file)"


def format_report(path: Path, report: Report) -> str:
    """One heading line, then one line per problem (with its hint) and per note."""
    count = len(report.errors)
    state = "valid" if report.valid else f"INVALID, {count} problem{'s' if count != 1 else ''}"
    lines = [f"{path}: {state} ({report.kind})"]
    for error in report.errors:
        hint = f" Hint: {error['hint']}" if error.get("hint") else ""
        lines.append(f"  {_location(error)}: {error['message']}{hint}")
    lines += [f"  note: {note}" for note in report.notes]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="validate_metadata.py", description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, metavar="FILE")
    parser.add_argument("--json", action="store_true", help="print the reports as JSON")
    parser.add_argument("--write-schemas", nargs="?", const=SCHEMA_DIR, type=Path, metavar="DIR",
                        help=f"write the derived JSON Schemas (default into {SCHEMA_DIR})")  # fmt: skip
    args = parser.parse_args(argv)
    if args.write_schemas:
        for path in write_schemas(args.write_schemas):
            print(f"wrote {path}")
        if not args.files:
            return 0
    if not args.files:
        parser.error("give at least one FILE")
    index = builtin_license_index()
    reports: list[tuple[Path, Report]] = []
    for path in args.files:
        try:
            data = path.read_bytes()
        except OSError as exc:
            print(f"validate_metadata.py: error: {path}: cannot read: {exc.strerror or exc}", file=sys.stderr)
            return 2
        reports.append((path, check_file(path.name, data, OfflineLookups(index), index, offline=True)))
    if args.json:
        print(json.dumps([{**report.to_dict(), "file": str(path)} for path, report in reports], indent=2,
                         ensure_ascii=False))  # fmt: skip
    else:
        print("\n".join(format_report(path, report) for path, report in reports))
    return 0 if all(report.valid for _, report in reports) else 1


if __name__ == "__main__":
    sys.exit(main())
