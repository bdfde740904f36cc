"""A draft saved from the deposit form keeps what is valid and the rest as typed (docs/researchers/depositing.md
#nothing-typed-is-lost): the metadata is validated as the API's PUT validates it; when fields are refused, they
are left out of the stored metadata and the form as typed is stored beside the draft with the errors, to be shown
again until the next save. The API's answers do not change: it neither reads nor writes this state.

A stored state belongs to one version of the draft: it carries a digest of the metadata its save stored, and any
later change of it (an API PUT, publish, discard) makes it stale, so the form then shows the stored metadata."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

from sqlalchemy import Connection, delete, insert, select

from repository.deposits import actions
from repository.errors import ValidationError
from repository.storage.tables.deposits import deposit_form_states, deposits

# Rounds of validation at most: each leaves out what the previous one refused (the refused subfield, or when that
# changes nothing its row, then its field). A refusal that remains after the last round, or one that names no field
# of the metadata, saves nothing.
ROUNDS = 8
DEPTHS = (3, 2, 1)


def _paths(errors: list[dict]) -> list[list[str]] | None:
    """The metadata paths the errors name (`metadata.creators.1.orcid` -> creators, 1, orcid); None when one names
    no field (the metadata as a whole, the files), which leaving fields out cannot cure."""
    paths = []
    for error in errors:
        path = str(error.get("field") or "")
        if not path.startswith("metadata."):
            return None
        paths.append(path.removeprefix("metadata.").split("."))
    return paths


def without(metadata: dict[str, Any], paths: list[list[str]], depth: int) -> dict[str, Any]:
    """`metadata` without what `paths` name, each cut to `depth` parts (a row's subfield, the row, the field).
    Rows are removed after every path is resolved, so the indexes of the paths keep naming the rows sent."""
    result = copy.deepcopy(metadata)
    doomed: dict[str, set[int]] = {}
    for path in paths:
        parts = path[:depth]
        value = result.get(parts[0])
        if len(parts) == 1 or not isinstance(value, list) or not parts[1].isdigit():
            result.pop(parts[0], None)
        elif len(parts) == 2 or not isinstance(item := value[int(parts[1])] if int(parts[1]) < len(value) else None,
                                                      dict):
            doomed.setdefault(parts[0], set()).add(int(parts[1]))
        else:
            item.pop(parts[2], None)
    for key, rows in doomed.items():
        if isinstance(result.get(key), list):
            result[key] = [row for i, row in enumerate(result[key]) if i not in rows]
            if not result[key]:
                del result[key]
    return result


def save(conn: Connection, ctx: actions.Context, dep_id: int, owner_id: int, metadata: dict[str, Any],
         typed: dict[str, Any]) -> list[dict]:
    """Save the form's metadata; returns the errors of the fields left out ([] when all were valid: the stored
    state is dropped). `typed` (the form as typed, JSON) is stored with the errors. Raises the API's
    ValidationError, having saved nothing, when leaving fields out does not make the rest valid."""
    try:
        actions.update_metadata(conn, ctx, dep_id, owner_id, {"metadata": metadata})
    except ValidationError as exc:
        refused = exc
    else:
        clear(conn, dep_id)
        return []
    current, errors = metadata, refused.errors
    for _ in range(ROUNDS):
        paths = _paths(errors)
        cut = next((c for c in (without(current, paths, d) for d in DEPTHS) if c != current), None) if paths else None
        if cut is None:
            raise refused
        current = cut
        try:
            actions.update_metadata(conn, ctx, dep_id, owner_id, {"metadata": current})
        except ValidationError as exc:
            errors = exc.errors  # they name the rows of `current`, which the next round cuts
            continue
        _store(conn, dep_id, {**typed, "errors": refused.errors})
        return refused.errors
    raise refused


def _digest(conn: Connection, dep_id: int) -> str:
    """The digest of the deposit's metadata as stored (None once published and not being edited)."""
    stored = conn.execute(select(deposits.c.metadata).where(deposits.c.id == dep_id)).scalar()
    return hashlib.sha256(json.dumps(stored, sort_keys=True, default=str).encode()).hexdigest()


def _store(conn: Connection, dep_id: int, state: dict[str, Any]) -> None:
    clear(conn, dep_id)
    conn.execute(insert(deposit_form_states).values(deposit_id=dep_id, state=state, digest=_digest(conn, dep_id)))


def clear(conn: Connection, dep_id: int) -> None:
    conn.execute(delete(deposit_form_states).where(deposit_form_states.c.deposit_id == dep_id))


def typed(conn: Connection, dep_id: int) -> dict[str, Any] | None:
    """The form as typed at the last save that left fields out (its `errors` too), unless the deposit changed
    since."""
    row = conn.execute(
        select(deposit_form_states.c.state, deposit_form_states.c.digest).where(
            deposit_form_states.c.deposit_id == dep_id)
    ).first()
    if row is None or row.digest != _digest(conn, dep_id) or not isinstance(row.state, dict):
        return None
    return dict(row.state)
