"""Fixtures for the export tests: a small instance holding every kind of record an export must treat apart."""

from __future__ import annotations

import pytest
from helpers.factories import make_deposit, new_version, publish, published, published_restricted, upload

from repository.cli import COMMANDS, invoke
from repository.config import Settings


@pytest.fixture
def corpus(client, auth: dict, settings: Settings) -> dict[str, int]:  # type: ignore[no-untyped-def]
    """Record ids by kind: open (two versions), restricted, closed, embargoed, open with an image, taken down, with
    an affiliation id."""
    first = published(client, auth, title="First version")
    second = new_version(client, auth, first, b"x,y\n3,4\n")
    ids = {"open": first["id"], "second": second,
           "restricted": published_restricted(client, auth, title="Ask for it")["id"],
           "closed": published(client, auth, title="Closed", access_right="closed")["id"],
           "embargoed": published(client, auth, title="Later", access_right="embargoed",
                                  embargo_date="2100-01-01")["id"],
           "gone": published(client, auth, title="Taken down")["id"],
           # a person with a ROR id (kept in the record, never in the JSON clients read): its line is built whole
           "affiliated": published(client, auth, title="Affiliated", creators=[
               {"name": "Doe, Jane", "affiliation": "Monash University", "affiliation_id": "02bfwt286"}])["id"]}
    dep = make_deposit(client, auth, title="With an image")
    upload(client, auth, dep, name="figure.png", content=b"\x89PNG\r\n\x1a\n")
    ids["image"] = publish(client, auth, dep)["id"]
    assert invoke(COMMANDS["takedown"], ["--recid", str(ids["gone"])], settings) == 0
    return ids
