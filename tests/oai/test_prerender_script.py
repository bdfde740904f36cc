"""scripts/prerender.py: renders every published record's missing or stale renditions, once."""

from __future__ import annotations

import pytest
from helpers.factories import published
from helpers.oai_client import HOST
from sqlalchemy import select, update
from test_oai_prerender import stored_renditions

from repository.storage.tables.derived import built_records
from scripts import prerender


@pytest.fixture
def settings(make_settings):  # type: ignore[no-untyped-def]
    """Nothing rendered when records are indexed: the script has everything to do."""
    return make_settings(BASE_URL=f"https://{HOST}", ADMIN_EMAIL="admin@example.org", OAI_PRERENDER="")


@pytest.mark.slow  # a pool of worker processes, each importing the serializers
def test_the_script_renders_what_is_missing_once(client, auth, db, settings, capsys):
    deps = [published(client, auth, title=f"Record {n}") for n in range(3)]
    assert stored_renditions(db) == {}
    assert prerender.main(["--formats", "oai_dc,marc21", "--jobs", "1", "--batch", "2", "--quiet"], settings) == 0
    assert "rendered 6 renditions" in capsys.readouterr().out
    kept = stored_renditions(db)
    assert set(kept) == {(dep["id"], fmt) for dep in deps for fmt in ("oai:oai_dc", "oai:marc21")}
    assert b"Record 1" in kept[(deps[1]["id"], "oai:oai_dc")]
    assert prerender.main(["--formats", "oai_dc", "--jobs", "1", "--quiet"], settings) == 0
    assert "rendered 0 renditions" in capsys.readouterr().out  # all current
    assert stored_renditions(db) == kept


def test_an_unknown_format_is_refused(settings, capsys):
    assert prerender.main(["--formats", "oai_dc,nonsense"], settings) == 2
    assert "nonsense" in capsys.readouterr().err


@pytest.mark.slow  # a pool of worker processes, each importing the serializers
def test_the_script_fills_the_digests_of_older_built_records(client, auth, db, settings, capsys):
    deps = [published(client, auth, title=f"Record {n}") for n in range(2)]
    with db.write() as conn:  # as rows stored before migration 0010
        conn.execute(update(built_records).values(digest=None))
    assert prerender.main(["--formats", "oai_dc", "--jobs", "1", "--quiet"], settings) == 0
    with db.read() as conn:
        digests = dict(conn.execute(select(built_records.c.record_id, built_records.c.digest)).all())
    assert sorted(digests) == sorted(dep["id"] for dep in deps) and all(len(d) == 64 for d in digests.values())
    assert prerender.main(["--formats", "oai_dc", "--jobs", "1", "--quiet"], settings) == 0
    assert "rendered 0 renditions" in capsys.readouterr().out.splitlines()[-1]  # the same digests as computed
