"""Taking a record down: 410, gone from search, DOI hidden, reported deleted by OAI-PMH."""

from helpers.factories import published
from sqlalchemy import select

from repository.storage.tables.outbox import outbox
from repository.storage.tables.records import doi_registrations
from scripts import takedown


def test_take_down(app, client, auth, settings, capsys):
    dep = published(client, auth)
    assert client.get("/api/records/").json["hits"]["total"] == 1
    assert takedown.main(["--recid", str(dep["id"])], settings) == 0
    assert client.get(f"/api/records/{dep['id']}").status_code == 410
    assert client.get("/api/records/").json["hits"]["total"] == 0
    listing = client.get("/oai2d?verb=ListIdentifiers&metadataPrefix=oai_dc").data.decode()
    assert 'status="deleted"' in listing
    with app.extensions["repository"].db.read() as conn:
        assert conn.execute(select(doi_registrations.c.doi).where(doi_registrations.c.doi == dep["doi"])).first()
        # The command hid the DOI before it returned (its own background thread, waited for at exit).
        hides = conn.execute(select(outbox.c.done).where(outbox.c.kind == "hide_doi", outbox.c.recid == dep["id"]))
        assert [done is not None for done in hides.scalars()] == [True]
    assert takedown.main(["--recid", str(dep["id"])], settings) == 2
    assert takedown.main(["--recid", "99999"], settings) == 2


def test_taken_down_files_are_gone_for_the_owner_too(app, client, auth, settings, capsys):
    """A takedown removes the files from everyone: the owner (token or a link carrying it) and the public alike get
    404 for the download, the record's files listing and the archive; the deposit's own files listing names them
    no more downloadable."""
    dep = published(client, auth)
    url = dep["files"][0]["links"]["download"].removeprefix("https://localhost")
    token = auth["Authorization"].split()[1]
    assert client.get(url, headers=auth).status_code == 200
    assert takedown.main(["--recid", str(dep["id"])], settings) == 0
    for headers, query in (({}, ""), (auth, ""), ({}, f"?access_token={token}")):
        assert client.get(url + query, headers=headers).status_code == 404, (headers, query)
        assert client.get(f"/api/records/{dep['id']}/files{query}", headers=headers).status_code in (404, 410)
        assert client.get(f"/api/records/{dep['id']}/files-archive{query}", headers=headers).status_code in (404, 410)
