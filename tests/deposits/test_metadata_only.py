"""Metadata-only records (docs/researchers/depositing.md#metadata-only-records): `metadata.files: {enabled: false}`
publishes without files where METADATA_ONLY_DEPOSITS allows it, is refused with a field error where it does not
or where files were uploaded, and the record is read, searched and harvested like any other."""

from __future__ import annotations

import pytest
from helpers.exports import export, jsonl, latest
from helpers.factories import make_deposit, upload
from lxml import etree

from repository.config import Settings

LINK = {"identifier": "https://example.org/theses/17", "relation": "isIdenticalTo"}


def publish(client, auth, dep):  # type: ignore[no-untyped-def]
    return client.post(f"/api/deposit/depositions/{dep['id']}/actions/publish", headers=auth)


def test_refused_unless_the_setting_allows_it(client, auth) -> None:
    dep = make_deposit(client, auth, files={"enabled": False}, related_identifiers=[LINK])
    answer = publish(client, auth, dep)
    assert answer.status_code == 400
    assert {"field": "metadata.files", "message": "Metadata-only records are not enabled on this service."} in \
        answer.json["errors"]


class TestWhereAllowed:
    """METADATA_ONLY_DEPOSITS=true."""

    @pytest.fixture
    def settings(self, make_settings) -> Settings:  # type: ignore[no-untyped-def]
        return make_settings(METADATA_ONLY_DEPOSITS="true")

    def test_published_without_files_and_read_searched_harvested_exported_like_others(self, client, auth, settings,
                                                                                      tmp_path) -> None:
        dep = make_deposit(client, auth, title="A thesis held elsewhere", files={"enabled": False},
                           related_identifiers=[LINK])
        answer = publish(client, auth, dep)
        assert answer.status_code == 202, answer.json
        record = client.get(f"/api/records/{dep['id']}").json
        assert record["files"] == [] and record["metadata"]["files"] == {"enabled": False}
        assert record["metadata"]["related_identifiers"][0]["identifier"] == LINK["identifier"]
        hits = client.get("/api/records/", query_string={"q": "thesis held elsewhere"}).json["hits"]["hits"]
        assert [hit["id"] for hit in hits] == [dep["id"]]
        page = client.get("/oai2d", query_string={"verb": "GetRecord", "metadataPrefix": "oai_dc",
                                                  "identifier": f"oai:localhost:{dep['id']}"})
        assert page.status_code == 200
        titles = etree.fromstring(page.data).findall(".//{http://purl.org/dc/elements/1.1/}title")
        assert [t.text for t in titles] == ["A thesis held elsewhere"]
        assert export(settings, str(tmp_path / "out")) == 0
        [line] = jsonl(latest(str(tmp_path / "out")))
        assert line["id"] == dep["id"] and line["metadata"]["files"] == {"enabled": False} and line["files"] == []


    def test_a_metadata_only_draft_with_files_is_refused(self, client, auth) -> None:
        dep = make_deposit(client, auth, files={"enabled": False})
        upload(client, auth, dep)
        answer = publish(client, auth, dep)
        assert answer.status_code == 400
        assert answer.json["errors"][0]["field"] == "files"


@pytest.mark.parametrize("value", [{"enabled": "maybe"}, {"on": False}, {}, "no"])
def test_a_bad_files_object_is_a_field_error(client, auth, value) -> None:
    answer = client.post("/api/deposit/depositions", json={"metadata": {"files": value}}, headers=auth)
    assert answer.status_code == 400
    assert all(e["field"].startswith("metadata.files") for e in answer.json["errors"])
