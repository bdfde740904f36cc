"""`read_record()`: the one read path of a record, usable without a request (the views only render its result)."""

import pytest
from helpers.factories import new_version, published

from repository.records import read
from repository.records.stats import Visit
from repository.timeutil import utcnow


def _read(services, recid: int, **options):  # type: ignore[no-untyped-def]
    return read.read_record(services.db, services.settings, services.search, services.record_cache, services.stats,
                            recid, None, **options)  # fmt: skip


def _visit() -> Visit:
    return Visit(None, "192.0.2.1", "Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0", utcnow())


def test_a_read_is_counted_and_shows_the_counts_of_this_moment(app, client, auth):
    recid = published(client, auth)["id"]
    services = app.extensions["repository"]
    first = _read(services, recid, visit=_visit())
    assert first.record is not None and first.record["id"] == recid
    assert first.record["stats"]["version_views"] == 0
    assert services.stats.on_pass() == 1  # the read was counted
    again = _read(services, recid)  # from the per-process cache now, with the row's counts; no visit: not counted
    assert again.record is not None and again.record["stats"]["version_views"] == 1


def test_a_current_copy_is_not_built_but_counted(app, client, auth):
    recid = published(client, auth)["id"]
    services = app.extensions["repository"]
    seen = []
    found = _read(services, recid, visit=_visit(), variant=lambda: ("v1", True),
                  unchanged=lambda tag: seen.append(tag) or True)  # fmt: skip
    assert found.record is None and seen == [found.etag.strip('"')]
    assert found.etag.startswith(f'"{found.row["revision"]}-v1-1-')  # open files; the counts follow
    assert services.stats.on_pass() == 1  # COUNTER counts a 304 as it does a 200
    assert _read(services, recid).record["stats"]["version_views"] == 1


def test_the_etag_is_the_one_the_api_answers(app, client, auth):
    recid = published(client, auth)["id"]
    answered = client.get(f"/api/records/{recid}?format=bibtex").headers["ETag"]
    assert _read(app.extensions["repository"], recid, variant=lambda: ("bibtex", False)).etag == answered


def test_a_concept_id_moves_to_its_latest_version(app, client, auth):
    first = published(client, auth)
    second = new_version(client, auth, first, b"v2")
    with pytest.raises(read.Moved) as moved:
        _read(app.extensions["repository"], int(first["conceptrecid"]))
    assert moved.value.recid == second
    assert read.newest_version(app.extensions["repository"].db, first["id"]) == second
