"""A publish reads the deposit's files once: in its transaction the bucket is held, its objects listed, and that one
list is what the file rules check, the data-description rows are kept in step with and the record's snapshot copies
(repository.deposits.actions.publish). The validation that starts after the commit reads the files again, later."""

from __future__ import annotations

import json
import threading

import pytest
from helpers.factories import make_deposit, publish, upload

from repository.deposits import actions
from repository.files import buckets


def test_the_bucket_is_listed_once_and_the_record_holds_what_was_listed(client, auth,  # type: ignore[no-untyped-def]
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    dep = make_deposit(client, auth)
    upload(client, auth, dep, name="data.csv")
    descriptor = {"name": "readings", "resources": [{"name": "data", "path": "data.csv"}]}
    upload(client, auth, dep, name="datapackage.json", content=json.dumps(descriptor).encode())
    inside = threading.local()
    listed: list[str] = []
    real_list, real_publish = buckets.list_objects, actions.publish

    def counting(conn, bucket_id: str):  # type: ignore[no-untyped-def]
        if getattr(inside, "publish", False):
            listed.append(bucket_id)
        return real_list(conn, bucket_id)

    def publishing(*args, **kwargs):  # type: ignore[no-untyped-def]
        inside.publish = True
        try:
            return real_publish(*args, **kwargs)
        finally:
            inside.publish = False

    monkeypatch.setattr(buckets, "list_objects", counting)
    monkeypatch.setattr(actions, "publish", publishing)
    published = publish(client, auth, dep)
    monkeypatch.undo()
    assert len(listed) == 1  # the deposit's bucket, once
    record = client.get(f"/api/records/{published['id']}").json
    assert sorted(f["key"] for f in record["files"]) == ["data.csv", "datapackage.json"]
