"""Renditions made ahead of harvests: the indexer renders the OAI_PRERENDER formats of every record it indexes
(a harvest then only reads them), and scripts/prerender.py renders whatever is missing or stale."""

from __future__ import annotations

import pytest
from helpers.factories import publish, published
from helpers.oai_client import HOST, Oai
from sqlalchemy import event, select

from repository.config import Settings, StartupError
from repository.records import stored
from repository.storage.tables.derived import renditions


def stored_renditions(db) -> dict[tuple[int, str], bytes]:  # type: ignore[no-untyped-def]
    with db.read() as conn:
        rows = conn.execute(select(renditions.c.record_id, renditions.c.format, renditions.c.body)).all()
    return {(row.record_id, row.format): row.body for row in rows}


@pytest.mark.slow
def test_publishing_renders_the_prerender_formats_and_harvests_only_read_them(oai: Oai, client, auth, db):
    dep = published(client, auth, title="Prerendered")
    kept = stored_renditions(db)
    assert set(kept) == {(dep["id"], "oai:oai_dc"), (dep["id"], "oai:oai_registry")}  # the default formats
    executed: list[str] = []
    event.listen(db.engine, "before_cursor_execute", lambda *a: executed.append(a[2].lower()))
    for prefix in ("oai_dc", "oai_datacite"):  # an alias reads its format's rendition
        reply = oai.get(verb="GetRecord", identifier=f"oai:{HOST}:{dep['id']}", metadataPrefix=prefix)
        assert reply.error is None
    assert not any(sql.startswith(("insert", "begin immediate")) for sql in executed)
    assert b"Prerendered" in kept[(dep["id"], "oai:oai_dc")]
    assert oai.get(verb="GetRecord", identifier=f"oai:{HOST}:{dep['id']}", metadataPrefix="marc21").error is None
    assert (dep["id"], "oai:marc21") in stored_renditions(db)  # a format left out is rendered at its first harvest


def test_an_edit_renders_again(oai: Oai, client, auth, db):
    dep = published(client, auth, title="Before")
    client.post(f"/api/deposit/depositions/{dep['id']}/actions/edit", headers=auth)
    response = client.put(f"/api/deposit/depositions/{dep['id']}", headers=auth,
                          json={"metadata": {**dep["metadata"], "title": "After"}})
    assert response.status_code == 200, response.json
    publish(client, auth, dep)
    body = stored_renditions(db)[(dep["id"], "oai:oai_dc")]
    assert b"After" in body and b"Before" not in body
    assert oai.get(verb="GetRecord", identifier=f"oai:{HOST}:{dep['id']}", metadataPrefix="oai_dc").one(
        "//dc:title/text()") == "After"


@pytest.mark.parametrize("value", ["foo", "oai_dc,nonsense"])
def test_an_unknown_prefix_stops_start_up(value):
    with pytest.raises(StartupError, match="OAI_PRERENDER"):
        Settings.build({"OAI_PRERENDER": value})


@pytest.mark.slow  # 0.4 s and more of work
def test_record_content_cannot_forge_a_metadata_slot(oai: Oai, client, auth):
    forged = "<!--rendition 0--> and <!--rendition 1-->"
    dep = published(client, auth, title=forged, description=f"<p>{forged}</p>")
    for prefix in ("oai_dc", "marc21"):  # stored ahead, and rendered at the harvest
        reply = oai.get(verb="ListRecords", metadataPrefix=prefix)  # validated against the schemas
        assert reply.error is None
        assert forged in "".join(reply.xpath("//text()"))
    assert oai.get(verb="GetRecord", identifier=f"oai:{HOST}:{dep['id']}", metadataPrefix="oai_dc").one(
        "//dc:title/text()") == forged


def test_a_renderer_failing_at_indexing_leaves_the_rendition_to_the_harvest(oai: Oai, client, auth, db, monkeypatch):
    def broken(record, ctx):  # type: ignore[no-untyped-def]
        raise RuntimeError("renderer bug")

    monkeypatch.setattr(stored.renditions, "oai_renderers", lambda prefixes: [("oai:oai_dc", broken)])
    dep = published(client, auth, title="Indexed anyway")  # the publish and its indexing succeed
    assert client.get("/api/records/", query_string={"q": "Indexed anyway"}).json["hits"]["total"] == 1
    assert stored_renditions(db) == {}
    reply = oai.get(verb="GetRecord", identifier=f"oai:{HOST}:{dep['id']}", metadataPrefix="oai_dc")
    assert reply.one("//dc:title/text()") == "Indexed anyway"  # rendered when asked for
