"""The metadata files of a release: `.service.json` (or `.zenodo.json`) and `CITATION.cff`, read into deposit fields.

Reading never raises on bad content: it returns the deposit fields it could read and a list of problems, each
`{field?, message, line?, column?}`, so that a validator and a failed release can show them all at once.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from typing import Any

import yaml

from repository.errors import field_error
from repository.jsonlimits import MAX_YAML_VALUES, ShapeError, check_shape, loads_bounded

# In order of preference: the first one present at the tag is used, the others are ignored.
METADATA_FILES = (".service.json", ".zenodo.json", "CITATION.cff")
MAX_FILE_BYTES = 1_000_000

# CITATION.cff keys mapped to deposit fields. `version`, `date-released` and `doi` are left out on purpose: a
# CITATION.cff is often not updated for every tag, and the release's own tag and date are reliable; its `doi` is
# usually this very archive's concept DOI, which must not become an external DOI of a new version.
CFF_FIELDS = {"title": "title", "abstract": "description", "authors": "creators", "keywords": "keywords",
              "license": "license", "message": "notes"}  # fmt: skip
DEPOSIT_TO_CFF = {deposit: cff for cff, deposit in CFF_FIELDS.items()}
CFF_PERSON = {"name": "family-names", "affiliation": "affiliation", "orcid": "orcid"}


@dataclass
class MetadataFile:
    """One file read: its name, the deposit fields it gives, and the problems found while reading it."""

    name: str
    kind: str  # json | cff
    metadata: dict[str, Any] = field(default_factory=dict)
    problems: list[dict[str, Any]] = field(default_factory=list)

    def deposit_path_to_file(self, path: str) -> str:
        """The path in the file that a dotted deposit path such as `creators.0.orcid` came from."""
        if self.kind != "cff" or not path:
            return path
        parts = path.split(".")
        parts[0] = DEPOSIT_TO_CFF.get(parts[0], parts[0])
        if parts[0] == "authors" and len(parts) > 2:
            parts[2] = CFF_PERSON.get(parts[2], parts[2])
        return ".".join(parts)


def kind_of(name: str) -> str:
    """`cff` for a CITATION.cff (any `.cff` name), else `json`."""
    return "cff" if name.lower().endswith(".cff") else "json"


def pick(files: dict[str, bytes]) -> tuple[str, bytes] | None:
    """The metadata file to use among those present (name -> content), by preference; None if there is none."""
    for name in METADATA_FILES:
        if name in files:
            return name, files[name]
    return None


def read(name: str, data: bytes) -> MetadataFile:
    """Read `data` as the metadata file `name`."""
    kind = kind_of(name)
    result = MetadataFile(name=name, kind=kind)
    if len(data) > MAX_FILE_BYTES:
        result.problems.append(field_error(None, f"The file is larger than {MAX_FILE_BYTES} bytes."))
        return result
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        result.problems.append(field_error(None, f"The file is not UTF-8 text (byte {exc.start})."))
        return result
    if kind == "json":
        _read_json(text, result)
    else:
        _read_cff(text, result)
    return result


def _read_json(text: str, result: MetadataFile) -> None:
    try:
        value = loads_bounded(text)
    except ShapeError as exc:
        result.problems.append(field_error(None, f"The metadata file is {exc}."))
        return
    except json.JSONDecodeError as exc:
        problem = field_error(None, f"The metadata file is not valid JSON: {exc.msg} (line {exc.lineno}, "
                                    f"column {exc.colno}).")  # fmt: skip
        result.problems.append({**problem, "line": exc.lineno, "column": exc.colno})
        return
    if not isinstance(value, dict):
        result.problems.append(field_error(None, "The metadata file must hold one JSON object of deposit fields."))
        return
    # `.zenodo.json` files often wrap the fields as the deposit API's body does: accept that form too.
    if set(value) == {"metadata"} and isinstance(value["metadata"], dict):
        value = value["metadata"]
    result.metadata = value


def _read_cff(text: str, result: MetadataFile) -> None:
    try:
        # The pure-Python loader, not libyaml's (five times faster): libyaml crashes the process on deep nesting,
        # where this one raises RecursionError.
        value = yaml.safe_load(text)
        check_shape(value, max_values=MAX_YAML_VALUES)  # aliases can make a small file a huge value
    except (RecursionError, ShapeError) as exc:
        shown = exc if isinstance(exc, ShapeError) else ShapeError.too_deep()
        result.problems.append(field_error(None, f"CITATION.cff is {shown}."))
        return
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        if mark is None:
            result.problems.append(field_error(None, f"CITATION.cff is not valid YAML: {problem}."))
            return
        message = f"CITATION.cff is not valid YAML: {problem} (line {mark.line + 1}, column {mark.column + 1})."
        result.problems.append({**field_error(None, message), "line": mark.line + 1, "column": mark.column + 1})
        return
    if not isinstance(value, dict):
        result.problems.append(field_error(None, "CITATION.cff must be a YAML mapping of CFF keys."))
        return
    result.metadata = cff_to_deposit(value, result.problems)


def cff_to_deposit(cff: dict[str, Any], problems: list[dict[str, Any]]) -> dict[str, Any]:
    """The deposit fields a CITATION.cff gives; problems with its shape are appended to `problems`."""
    metadata: dict[str, Any] = {}
    for key in ("title", "keywords"):
        if key in cff:
            metadata[key] = cff[key]
    if isinstance(cff.get("abstract"), str):
        metadata["description"] = _paragraphs(cff["abstract"])
    elif "abstract" in cff:
        problems.append(field_error("abstract", "Not a valid string."))
    if isinstance(cff.get("message"), str):
        metadata["notes"] = _paragraphs(cff["message"])
    license_ = cff.get("license")
    if isinstance(license_, list):
        # CFF allows several licenses (an SPDX expression split up); a deposit has one: the first is used.
        license_ = license_[0] if license_ else None
    if license_ is not None:
        metadata["license"] = license_
    if "authors" in cff:
        authors = cff["authors"]
        if not isinstance(authors, list):
            problems.append(field_error("authors", "Not a valid list."))
        else:
            metadata["creators"] = [_cff_person(author, i, problems) for i, author in enumerate(authors)]
    return metadata


def _paragraphs(text: str) -> str:
    """Plain text as HTML paragraphs (a CFF abstract is not HTML)."""
    blocks = [block.strip() for block in text.split("\n\n") if block.strip()]
    return "".join(f"<p>{html.escape(block)}</p>" for block in blocks)


def _cff_person(author: Any, index: int, problems: list[dict[str, Any]]) -> dict[str, Any]:
    """A CFF person or entity as a creator: `Family, Given` for people, `name` for entities."""
    if not isinstance(author, dict):
        problems.append(field_error(f"authors.{index}", "Not a valid person or entity."))
        return {}
    creator: dict[str, Any] = {}
    family = " ".join(str(author[k]) for k in ("name-particle", "family-names") if author.get(k))
    if author.get("name-suffix") and family:
        family = f"{family} {author['name-suffix']}"
    given = author.get("given-names")
    if family:
        creator["name"] = f"{family}, {given}" if given else family
    elif author.get("name"):
        creator["name"] = author["name"]
    elif given:
        creator["name"] = given
    for key in ("affiliation", "orcid"):
        if author.get(key):
            creator[key] = author[key]
    return creator
