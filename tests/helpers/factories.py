"""Builders for test data, driven over HTTP the way clients do."""

from __future__ import annotations

import io
from typing import Any

MINIMAL = {
    "title": "Sensor readings from the north slope",
    "upload_type": "dataset",
    "description": "<p>Hourly readings.</p>",
    "creators": [{"name": "Doe, Jane", "affiliation": "Example University"}],
}


def metadata(**overrides: Any) -> dict:
    data = {**MINIMAL, **overrides}
    return {k: v for k, v in data.items() if v is not None}


def make_deposit(client, auth: dict, **overrides: Any) -> dict:  # type: ignore[no-untyped-def]
    """Create a deposition with complete metadata; returns its JSON."""
    response = client.post("/api/deposit/depositions", json={"metadata": metadata(**overrides)}, headers=auth)
    assert response.status_code == 201, response.json
    return response.json


def upload(client, auth: dict, dep: dict, name: str = "data.csv", content: bytes = b"a,b\n1,2\n") -> dict:  # type: ignore[no-untyped-def]
    """Upload through the old multipart interface; returns the file JSON."""
    response = client.post(
        f"/api/deposit/depositions/{dep['id']}/files",
        data={"name": name, "file": (io.BytesIO(content), name)},
        headers=auth,
        content_type="multipart/form-data",
    )
    assert response.status_code == 201, response.json
    return response.json


def publish(client, auth: dict, dep: dict) -> dict:  # type: ignore[no-untyped-def]
    response = client.post(f"/api/deposit/depositions/{dep['id']}/actions/publish", headers=auth)
    assert response.status_code == 202, response.json
    return response.json


def published(client, auth: dict, content: bytes = b"a,b\n1,2\n", **overrides: Any) -> dict:  # type: ignore[no-untyped-def]
    """A published deposition with one file."""
    dep = make_deposit(client, auth, **overrides)
    upload(client, auth, dep, content=content)
    return publish(client, auth, dep)


def published_restricted(client, auth: dict, **overrides: Any) -> dict:  # type: ignore[no-untyped-def]
    """A published restricted deposition (access on request) with one file."""
    return published(client, auth, access_right="restricted", access_conditions="<p>ask</p>", **overrides)


def edit(client, auth: dict, dep_id: int, **overrides: Any) -> dict:  # type: ignore[no-untyped-def]
    """Open the published deposition `dep_id` for edit and save new metadata (complete, with `overrides`) without
    publishing it: the deposit's metadata then differs from its record's. Returns the deposition JSON."""
    opened = client.post(f"/api/deposit/depositions/{dep_id}/actions/edit", headers=auth)
    assert opened.status_code == 201, opened.json
    response = client.put(f"/api/deposit/depositions/{dep_id}", headers=auth, json={"metadata": metadata(**overrides)})
    assert response.status_code == 200, response.json
    return response.json


def new_version(client, auth, dep: dict, content: bytes) -> int:  # type: ignore[no-untyped-def]
    """Publish a new version of `dep` whose only file holds `content`; returns the new record id."""
    API = "/api/deposit/depositions"
    draft = client.post(f"{API}/{dep['id']}/actions/newversion", headers=auth).json["links"]["latest_draft"]
    draft_id = int(draft.rsplit("/", 1)[1])
    files = client.get(f"{API}/{draft_id}/files", headers=auth).json
    client.delete(f"{API}/{draft_id}/files/{files[0]['id']}", headers=auth)
    upload(client, auth, {"id": draft_id}, content=content)
    publish(client, auth, {"id": draft_id})
    return draft_id
