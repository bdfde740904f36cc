"""A DOI registration that keeps failing: the depositor is mailed once per streak of failures, the operator logged."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterator

import pytest
from helpers.factories import MINIMAL, publish, published
from helpers.http import https_client
from helpers.mailbox import body, links, sent_mail

from app import create_app
from repository.accounts.tokens import create_token, create_user
from repository.ondemand import wait_all_idle
from repository.timeutil import utcnow

from .datacite_standin import DataCiteStandin

AUTHOR = "author@example.org"
API = "/api/deposit/depositions"


@pytest.fixture
def app(make_settings, standin: DataCiteStandin) -> Iterator:  # type: ignore[no-untyped-def]
    """The service registering DOIs at the DataCite stand-in, mailing after the third failure in a row."""
    settings = make_settings(REGISTRAR="datacite", DATACITE_URL=standin.url, DATACITE_USERNAME=standin.username,
                             DATACITE_PASSWORD=standin.password, DOI_PREFIX="10.5072", DOI_FAILURE_NOTIFY_ATTEMPTS=3)
    application = create_app(settings)
    yield application
    services = application.extensions["repository"]
    wait_all_idle()  # every background thread's connection back in the pool before the pool goes
    services.db.dispose()


@pytest.fixture
def author(app, make_token) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {"Authorization": f"Bearer {make_token(AUTHOR)}"}


def retry(app, times: int = 1) -> None:  # type: ignore[no-untyped-def]
    """Let the worker retry `times` times, as if the backoff of each failure had passed."""
    for _ in range(times):
        app.extensions["repository"].indexer.process_pending(now=utcnow() + dt.timedelta(days=1))


@pytest.mark.slow
def test_the_depositor_is_mailed_once_per_streak(app, author, standin: DataCiteStandin, caplog):
    client = https_client(app)
    standin.fail(503, times=5)  # the publish's own attempt, then four retries
    caplog.set_level(logging.ERROR, logger="repository.worker.failing")
    dep = published(client, author)
    retry(app)
    assert sent_mail(app, AUTHOR) == []  # two failures: not yet
    retry(app)
    [message] = sent_mail(app, AUTHOR)
    text = body(message)
    assert str(message["Subject"]).strip() == f"DOI registration delayed: {MINIMAL['title']}"
    assert dep["doi"] in text and "failed 3 times in a row" in text and "keeps trying" in text
    record, deposit = links(message)[:2]
    assert client.get(record.removeprefix("https://localhost")).status_code == 200
    # The deposition's page, for people: a guest is asked to sign in first.
    assert deposit == f"https://localhost/deposit/{dep['id']}"
    assert client.get(deposit.removeprefix("https://localhost")).headers["Location"].startswith("/login/?next=")
    [logged] = [r for r in caplog.records if r.name == "repository.worker.failing"]
    assert str(dep["id"]) in logged.getMessage() and "503" in logged.getMessage()
    retry(app, 2)  # the fourth and fifth failures tell no one again
    assert len(sent_mail(app, AUTHOR)) == 1
    assert standin.dois == {}
    retry(app)  # the agency is back: registered
    assert dep["doi"] in standin.dois
    # An edit whose registration fails as long again is a new streak: mailed again.
    url = f"{API}/{dep['id']}"
    edited = client.post(f"{url}/actions/edit", headers=author)
    assert edited.status_code == 201, edited.json
    client.put(url, json={"metadata": {**edited.json["metadata"], "title": "Edited title"}}, headers=author)
    standin.fail(503, times=3)
    publish(client, author, dep)
    retry(app, 2)
    assert [str(m["Subject"]).strip() for m in sent_mail(app, AUTHOR)][1:] == ["DOI registration delayed: Edited title"]


def test_a_passing_failure_tells_no_one(app, author, standin: DataCiteStandin):
    standin.fail(503, times=2)
    dep = published(https_client(app), author)
    retry(app, 2)
    assert dep["doi"] in standin.dois and sent_mail(app) == []


@pytest.mark.slow
def test_zero_mails_no_one(make_settings, standin: DataCiteStandin):  # type: ignore[no-untyped-def]
    settings = make_settings(REGISTRAR="datacite", DATACITE_URL=standin.url, DATACITE_USERNAME=standin.username,
                             DATACITE_PASSWORD=standin.password, DOI_PREFIX="10.5072", DOI_FAILURE_NOTIFY_ATTEMPTS=0)
    app = create_app(settings)
    try:
        with app.extensions["repository"].db.write() as conn:
            token = create_token(conn, create_user(conn, AUTHOR), ["deposit:write", "deposit:actions"])[1]
        standin.fail(503, times=20)
        published(https_client(app), {"Authorization": f"Bearer {token}"})
        retry(app, 12)
        assert sent_mail(app) == []
    finally:
        app.extensions["repository"].db.dispose()
