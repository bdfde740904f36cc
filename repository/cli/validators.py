"""The offline validators: deposit metadata, release metadata files, data descriptions (no settings, no database)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from repository.datadesc import DocumentReport
    from repository.releases.metafile_check import MetafileReport

from repository.cli.preamble import CommandError, Context, arg, command


@command("validate-document", needs="nothing", named_errors=True,
         summary="Validate software corpus documents and tabular data packages.", arguments=[
    arg("files", nargs="+", type=Path, metavar="FILE"),
    arg("--json", action="store_true", help="print the reports as JSON"),
    arg("--kind", choices=["auto", "software_corpus", "datapackage"], default="auto",
        help="the kind of every FILE (default: detected from the name and contents)"),
])
def validate_document(args: argparse.Namespace, ctx: Context) -> int:
    """Validate data-description documents: software corpus documents and datapackage.json descriptors.

    A datapackage.json is validated together with the CSV files and codebook it names, looked up next to it.
    Exit code: 0 when every file is valid, 1 when any is invalid, 2 on a usage error (bad arguments, a file that
    cannot be read, or a file that is not a data-description document)."""
    reports = [(path, validate_document_file(path, args.kind)) for path in args.files]
    if args.json:
        body = [{"file": str(path), **report.to_dict()} for path, report in reports]
        print(json.dumps(body, indent=2, ensure_ascii=False))
    else:
        print("\n".join(_document_report_text(path, report) for path, report in reports))
    return 0 if all(report.valid for _, report in reports) else 1


def validate_document_file(path: Path, kind: str = "auto") -> DocumentReport:
    """Validate one file; a data package's tables are read from the file's folder. CommandError if impossible."""
    from repository.datadesc import detect_kind, directory_files, kind_named
    from repository.datadesc import validate_document as validate

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CommandError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    found = detect_kind(path.name, data) if kind == "auto" else kind_named(kind)  # argparse: one of KINDS
    if found is None:
        raise CommandError(f"{path}: not a data-description document (use --kind to say which it is)")
    return validate(found, data, directory_files(path.parent))


def _document_error_location(error: dict[str, Any]) -> str:
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


def _document_report_text(path: Path, report: DocumentReport) -> str:
    """A readable report: one heading line, then one line per error."""
    summary = ", ".join(f"{k} {v}" for k, v in report.to_dict()["summary"].items() if v is not False)
    lines = [f"{path}: {report.status.upper()} ({report.kind}; {summary})"]
    lines += [f"  {_document_error_location(error)}: {error['message']}" for error in report.errors]
    return "\n".join(lines)


SCHEMA_DIR = Path(__file__).resolve().parents[2] / "schemas"
# File name -> whether it is the schema for publishing (else every field is optional, as in a .service.json).
SCHEMA_FILES = {"deposit-metadata.json": True, "release-metadata.json": False}


def schema_text(publish: bool) -> str:
    """The derived schema as written into the repository's `schemas/` folder."""
    from repository.metadata.jsonschema import deposit_metadata_json_schema

    return json.dumps(deposit_metadata_json_schema(publish=publish), indent=2, ensure_ascii=False) + "\n"


def write_schemas(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, publish in SCHEMA_FILES.items():
        path = directory / name
        path.write_text(schema_text(publish), encoding="utf-8")
        written.append(path)
    return written


@command("validate-metadata", needs="nothing", named_errors=True, arguments=[
    arg("files", nargs="*", type=Path, metavar="FILE"),
    arg("--json", action="store_true", help="print the reports as JSON"),
    arg("--write-schemas", nargs="?", const=SCHEMA_DIR, type=Path, metavar="DIR",
        help=f"write the derived JSON Schemas (default into {SCHEMA_DIR})"),
])
def validate_metadata(args: argparse.Namespace, ctx: Context) -> int:
    """Check release metadata files (.service.json, .zenodo.json, CITATION.cff) offline, with the service's own rules.

    Every problem of every file is listed, with its dotted path in the file, the deposit API's message and a hint.
    Licenses are checked against the built-in list; grants and communities only by the service
    (POST /api/metadata/validate). Exit code: 0 all valid, 1 any invalid, 2 a file cannot be read."""
    from repository.releases.metafile_check import OfflineLookups, builtin_license_index, check_file

    if args.write_schemas:
        for path in write_schemas(args.write_schemas):
            print(f"wrote {path}")
        if not args.files:
            return 0
    if not args.files:
        ctx.parser.error("give at least one FILE")
    index = builtin_license_index()
    reports: list[tuple[Path, MetafileReport]] = []
    for path in args.files:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise CommandError(f"{path}: cannot read: {exc.strerror or exc}") from exc
        reports.append((path, check_file(path.name, data, OfflineLookups(index), index, offline=True)))
    if args.json:
        print(json.dumps([{**report.to_dict(), "file": str(path)} for path, report in reports], indent=2,
                         ensure_ascii=False))
    else:
        print("\n".join(_metafile_report_text(path, report) for path, report in reports))
    return 0 if all(report.valid for _, report in reports) else 1


def _metafile_report_text(path: Path, report: MetafileReport) -> str:
    """One heading line, then one line per problem (with its hint) and per note."""
    count = len(report.errors)
    state = "valid" if report.valid else f"INVALID, {count} problem{'s' if count != 1 else ''}"
    lines = [f"{path}: {state} ({report.kind})"]
    for error in report.errors:
        hint = f" Hint: {error['hint']}" if error.get("hint") else ""
        where = error.get("field") or "(file)"
        if "line" in error:
            where = f"line {error['line']}, column {error['column']}"
        lines.append(f"  {where}: {error['message']}{hint}")
    lines += [f"  note: {note}" for note in report.notes]
    return "\n".join(lines)
