"""Rules between given fields are checked when a draft is created or updated, not only at publish (CONTRACT.md:
"create and update validate every field that is given (... rules between given fields)")."""

from __future__ import annotations

import pytest
from helpers.factories import make_deposit, metadata, upload

API = "/api/deposit/depositions"


@pytest.mark.parametrize("key, value", [("conference_dates", "1-3 May 2024"), ("conference_place", "Bern, Switzerland")])
def test_conference_details_need_a_title_or_acronym_on_update(client, auth, key: str, value: str) -> None:  # type: ignore[no-untyped-def]
    dep = make_deposit(client, auth, conference_title="Open Science Days", **{key: value})
    url = f"{API}/{dep['id']}"
    before = client.get(url, headers=auth).json

    response = client.put(url, json={"metadata": metadata(**{key: value})}, headers=auth)
    assert response.status_code == 400
    assert response.json["errors"] == [
        {"field": f"metadata.{key}", "message": "Requires conference_title or conference_acronym."}
    ]
    after = client.get(url, headers=auth).json
    assert after["metadata"] == before["metadata"] and after["modified"] == before["modified"]

    response = client.post(API, json={"metadata": metadata(**{key: value})}, headers=auth)
    assert response.status_code == 400 and response.json["errors"][0]["field"] == f"metadata.{key}"
    assert [d["id"] for d in client.get(API, headers=auth).json] == [dep["id"]]

    for other in ({"conference_acronym": "OSD"}, {"conference_title": "Open Science Days"}):
        response = client.put(url, json={"metadata": metadata(**{key: value}, **other)}, headers=auth)
        assert response.status_code == 200, response.json
        assert response.json["metadata"][key] == value


def test_incomplete_drafts_stay_accepted(client, auth) -> None:  # type: ignore[no-untyped-def]
    # What publishing requires (access conditions, subtypes, creators) is still left for publish to ask.
    dep = make_deposit(client, auth, access_right="restricted", upload_type="publication", creators=None)
    upload(client, auth, dep)
    response = client.post(f"{API}/{dep['id']}/actions/publish", headers=auth)
    assert response.status_code == 400
    assert {e["field"] for e in response.json["errors"]} == {
        "metadata.access_conditions", "metadata.publication_type", "metadata.creators"
    }
