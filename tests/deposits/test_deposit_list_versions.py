"""The default deposition list after `newversion`: the published version stays listed beside the new draft
until the new version is published."""

from __future__ import annotations

import pytest
from helpers.factories import publish, published, upload

API = "/api/deposit/depositions"


def _ids(client, auth, query: str = "") -> list[int]:  # type: ignore[no-untyped-def]
    response = client.get(f"{API}{query}", headers=auth)
    assert response.status_code == 200, response.json
    return sorted(d["id"] for d in response.json)


@pytest.mark.slow
def test_published_version_stays_listed_until_a_newer_one_is_published(client, auth):
    first = published(client, auth, title="Versioned data")
    response = client.post(f"{API}/{first['id']}/actions/newversion", headers=auth)
    assert response.status_code == 201
    draft = client.get(response.json["links"]["latest_draft"], headers=auth).json

    assert _ids(client, auth) == sorted([first["id"], draft["id"]])
    assert _ids(client, auth, "?status=published") == [first["id"]]
    assert _ids(client, auth, "?status=draft") == [draft["id"]]
    assert _ids(client, auth, "?all_versions=true") == sorted([first["id"], draft["id"]])

    upload(client, auth, draft, name="v2.csv", content=b"a,b\n3,4\n")
    publish(client, auth, draft)
    assert _ids(client, auth) == [draft["id"]]
    assert _ids(client, auth, "?status=published") == [draft["id"]]
    assert _ids(client, auth, "?all_versions=1") == sorted([first["id"], draft["id"]])


@pytest.mark.slow
def test_an_older_version_being_edited_is_not_listed_once_superseded(client, auth):
    first = published(client, auth, title="Edited data")
    response = client.post(f"{API}/{first['id']}/actions/newversion", headers=auth)
    draft = client.get(response.json["links"]["latest_draft"], headers=auth).json
    upload(client, auth, draft, name="v2.csv", content=b"a,b\n5,6\n")
    publish(client, auth, draft)
    assert client.post(f"{API}/{draft['id']}/actions/edit", headers=auth).status_code == 201
    assert _ids(client, auth, "?status=draft") == [draft["id"]]
    assert _ids(client, auth) == [draft["id"]]
