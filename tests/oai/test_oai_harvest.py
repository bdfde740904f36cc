"""A real harvester, sickle, takes the whole repository and one set through resumption tokens, in-process and
against the TLS server; every record arrives exactly once."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import pytest
import requests
from helpers.bulk_records import insert_records, take_down
from helpers.oai_client import HOST
from helpers.sickle_transport import InProcessSickle
from sickle import Sickle

from repository.config import Settings
from repository.storage import open_database
from repository.storage.engine import close_all

T0 = datetime(2024, 3, 1, 12, 0, 0)
COUNT = 3000


@pytest.fixture
def settings(make_settings: Callable[..., Settings]) -> Settings:
    return make_settings(BASE_URL=f"https://{HOST}", ADMIN_EMAIL="admin@example.org", OAI_PAGE_SIZE=100)


@pytest.fixture
def repository(db, settings) -> list[int]:  # type: ignore[no-untyped-def]
    """A few thousand published records, a third of them in the community `ecology`, one taken down."""
    recids = insert_records(db, settings, COUNT, T0, per_second=7, community="ecology", every=3)
    take_down(db, recids[10], datetime(2024, 6, 1))
    return recids


@pytest.mark.slow
def test_sickle_harvests_everything_and_one_set_exactly_once(client, clock, repository):
    sickle = InProcessSickle(client)
    headers = [record.header for record in sickle.ListRecords(metadataPrefix="oai_dc")]
    identifiers = [h.identifier for h in headers]
    assert len(identifiers) == len(set(identifiers)) == COUNT
    assert set(identifiers) == {f"oai:{HOST}:{r}" for r in repository}
    assert [h.identifier for h in headers if h.deleted] == [f"oai:{HOST}:{repository[10]}"]
    assert len(sickle.adapter.requests) == COUNT // 100

    members = [
        h.identifier
        for h in InProcessSickle(client, http_method="POST").ListIdentifiers(
            metadataPrefix="oai_registry", set="user-ecology"
        )
    ]
    assert len(members) == len(set(members)) == COUNT // 3
    assert set(members) == {f"oai:{HOST}:{r}" for n, r in enumerate(repository) if n % 3 == 0}


def test_sickle_sees_a_replayed_page_again_and_an_expired_token_refused(client, clock, repository):
    sickle = InProcessSickle(client)
    first = sickle.harvest(verb="ListIdentifiers", metadataPrefix="marc21", set="type-software")
    token = first.xml.find(".//{http://www.openarchives.org/OAI/2.0/}resumptionToken").text
    pages = [sickle.harvest(verb="ListIdentifiers", resumptionToken=token).raw for _ in range(2)]
    assert _identifiers(pages[0]) == _identifiers(pages[1]) and len(_identifiers(pages[0])) == 100
    clock.advance(121)
    with pytest.raises(requests.HTTPError) as refused:
        sickle.harvest(verb="ListIdentifiers", resumptionToken=token)
    assert refused.value.response.status_code == 422
    assert "badResumptionToken" in refused.value.response.text


def _identifiers(raw: str) -> list[str]:
    return [part.split("<", 1)[0] for part in raw.split("<identifier>")[1:]]


@pytest.mark.e2e
def test_sickle_against_the_tls_server(live_server, database_url):
    """The real server: gunicorn workers over TLS; tokens issued by one worker are continued by another.

    `database_url` is there for PostgreSQL, where the server shares the (migrated, emptied) test database."""
    db = open_database(live_server["env"]["DATABASE_URL"])
    live = Settings.from_env(live_server["env"])
    recids = insert_records(db, live, 250, T0, community="physics", every=2)
    close_all()
    sickle = Sickle(live_server["url"] + "/oai2d", verify=live_server["cert"], timeout=10)
    host = live.oai_host
    assert sickle.Identify().baseURL == live_server["url"] + "/oai2d"
    seen = [r.header.identifier for r in sickle.ListRecords(metadataPrefix="oai_datacite")]
    assert sorted(seen) == sorted(f"oai:{host}:{r}" for r in recids) and len(seen) == 250
    members = [h.identifier for h in sickle.ListIdentifiers(metadataPrefix="oai_dc", set="user-physics")]
    assert sorted(members) == sorted(f"oai:{host}:{r}" for r in recids[::2])
