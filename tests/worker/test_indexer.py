"""The outbox applier: the worker leaves new rows to the request that wrote them, and retries the rest."""

import datetime as dt

from helpers.factories import published
from sqlalchemy import insert, select

from repository.storage.tables.outbox import outbox
from repository.timeutil import utcnow


def test_the_worker_leaves_new_rows_to_their_request_then_applies_them(app, client, auth):
    dep = published(client, auth)
    services = app.extensions["repository"]
    indexer = services.indexer
    with services.db.write() as conn:
        conn.execute(insert(outbox).values(kind="index", recid=dep["id"], created=utcnow(), attempts=0))
        conn.execute(insert(outbox).values(kind="index", recid=dep["id"], attempts=0,
                                           created=utcnow() - dt.timedelta(seconds=120)))
    assert indexer.process_pending(grace=60) == 1  # only the one its request did not apply in time
    assert indexer.process_pending() == 1  # a request applies whatever is due
    with services.db.read() as conn:
        assert conn.execute(select(outbox).where(outbox.c.done.is_(None))).first() is None
