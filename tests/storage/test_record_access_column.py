"""Migration 0018 (a record's access right as a column of `records`): who may see a record's files is read from the
row's columns. The upgrade fills the column from each record's metadata, rows left without it (written by the
previous release during a rolling upgrade, or upgraded offline) are read from their metadata, and every answer,
to a guest and to the owner, stays what it was."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable

import pytest
from alembic import command
from helpers.answers import answers
from helpers.factories import published, published_restricted
from helpers.http import https_client
from sqlalchemy import select, update

from app import create_app
from repository.config import Settings
from repository.ondemand import wait_all_idle
from repository.storage.migrate import alembic_config
from repository.storage.tables.records import records

UNLIMITED = {"RATELIMIT_GUEST": "1000000/minute", "RATELIMIT_USER": "1000000/minute", "RATELIMIT_OAI": "1000000/minute"}  # the same reads, thrice
RIGHTS = {"open": {}, "embargoed": {"embargo_date": "2099-01-01"}, "closed": {}}


@pytest.fixture
def settings(make_settings: Callable[..., Settings]) -> Settings:
    return make_settings(**UNLIMITED)


def _publish_each_right(client, auth) -> dict[str, int]:  # type: ignore[no-untyped-def]
    recids = {right: published(client, auth, title=f"Access column {right}", access_right=right, **extra)["id"]
              for right, extra in RIGHTS.items()}  # fmt: skip
    recids["restricted"] = published_restricted(client, auth, title="Access column restricted")["id"]
    return recids


def _file_answers(client, auth, recids: list[int]) -> dict[str, tuple[int, object]]:  # type: ignore[no-untyped-def]
    """What a guest and the owner get of each record and its files, the counts left out (each read here is a
    view)."""
    found: dict[str, tuple[int, object]] = {}
    for recid in recids:
        for who, headers in (("guest", {}), ("owner", auth)):
            for path in (f"/api/records/{recid}", f"/api/records/{recid}/files", f"/api/records/{recid}/files-archive"):
                response = client.get(path, headers=headers)
                body: object = response.json if response.is_json else response.data
                if isinstance(body, dict):
                    body.pop("stats", None)
                elif response.mimetype == "application/zip":  # its entries' times are when it was made
                    with zipfile.ZipFile(io.BytesIO(response.data)) as archive:
                        body = {name: archive.read(name) for name in archive.namelist()}
                found[f"{who} {path}"] = (response.status_code, body)
    return found


def _fresh(settings, auth, recids):  # type: ignore[no-untyped-def]
    app = create_app(settings)  # nothing kept in a per-process cache
    try:
        client = https_client(app)
        return answers(client, auth, recids), _file_answers(client, auth, recids)
    finally:
        wait_all_idle()  # every background thread's connection back in the pool before the pool goes
        app.extensions["repository"].db.dispose()


@pytest.mark.slow
def test_the_column_is_filled_from_the_metadata_and_every_answer_stays(app, client, auth, settings):
    recids = _publish_each_right(client, auth)
    ids = list(recids.values())
    before = _fresh(settings, auth, ids)
    guest = before[1]
    assert "files" in guest[f"guest /api/records/{recids['open']}"][1]
    for right in ("embargoed", "closed", "restricted"):  # the test tells files shown from files hidden
        assert "files" not in guest[f"guest /api/records/{recids[right]}"][1]
        assert guest[f"guest /api/records/{recids[right]}/files"][0] == 404
        assert "files" in guest[f"owner /api/records/{recids[right]}"][1]

    db = app.extensions["repository"].db
    with db.engine.connect() as conn:
        written = dict(conn.execute(select(records.c.id, records.c.access_right)).all())
    assert written == {recid: right for right, recid in recids.items()}

    command.downgrade(alembic_config(db), "0017")
    command.upgrade(alembic_config(db), "head")
    with db.engine.connect() as conn:
        assert dict(conn.execute(select(records.c.id, records.c.access_right)).all()) == written
    assert _fresh(settings, auth, ids) == before

    with db.engine.begin() as conn:  # rows as the previous release writes them
        conn.execute(update(records).values(access_right=None))
    assert _fresh(settings, auth, ids) == before
