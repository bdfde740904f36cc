"""Every format of the registry answers on a record and on a search page, by Accept and by ?format=,
and every XML answer validates against its official schema."""


import bibtexparser
import pytest
from helpers.factories import published
from helpers.http import https_client
from helpers.xsd import validate
from lxml import etree

import serializers  # noqa: E402

XML_SCHEMAS = {"marcxml": ("marc21",), "datacite": ("datacite4",), "datacite3": ("datacite3",), "dc": ("oai_dc",)}


@pytest.fixture
def client(module_client):  # type: ignore[no-untyped-def]
    """Every test here only reads: all of them ask the module's shared app."""
    return module_client


@pytest.fixture(scope="module")
def record(module_app, module_auth):
    """Built once: every test here only reads it."""
    return published(
        https_client(module_app), module_auth,
        title="Ünïcode & <angle> — 数据 · بيانات 🌍", keywords=["a-b", "c&d"],
        creators=[{"name": "Müller, Jürgen", "orcid": "0000-0002-1825-0097"}, {"name": "Doe, Jane"}],
    )


@pytest.mark.parametrize("name", list(serializers.REGISTRY))
def test_each_format_on_a_record(client, record, name):
    serializer = serializers.REGISTRY[name]
    # A dataset: CodeMeta (software only) refuses it with a 406 (tests/records/test_packaging_formats.py).
    status = 200 if serializer.applies(client.get(f"/api/records/{record['id']}").json) else 406
    for how in ({"headers": {"Accept": serializer.mimetype}}, {"query_string": {"format": name}}):
        response = client.get(f"/api/records/{record['id']}", **how)
        assert response.status_code == status, (how, response.data[:300])
        if name in XML_SCHEMAS:
            validate(response.data, *XML_SCHEMAS[name])
    for alias in serializer.aliases:
        assert client.get(f"/api/records/{record['id']}", headers={"Accept": alias}).status_code == status, alias


@pytest.mark.parametrize(("how", "label"), [
    ({"headers": {"Accept": "application/vnd.service.v1+json"}}, "application/vnd.service.v1+json"),
    ({"headers": {"Accept": "application/vnd.zenodo.v1+json"}}, "application/vnd.zenodo.v1+json"),
    ({"headers": {"Accept": "text/html, application/vnd.service.v1+json;q=0.5"}}, "application/vnd.service.v1+json"),
    ({"query_string": {"format": "application/vnd.service.v1+json"}}, "application/vnd.service.v1+json"),
    ({"query_string": {"format": "v1"}}, "application/vnd.service.v1+json"),
    ({}, "application/json"),
    ({"headers": {"Accept": "*/*"}}, "application/json"),
    ({"headers": {"Accept": "*/*, application/vnd.service.v1+json;q=0.5"}}, "application/json"),
])
def test_v1_is_labelled_as_asked(client, record, how, label):
    """A client that names the v1 media type gets the answer labelled with it; one that asks for nothing in
    particular gets the default v1 body as application/json, as the reference system answers."""
    for path in (f"/api/records/{record['id']}", "/api/records/", f"/api/records/{record['id']}/versions"):
        response = client.get(path, **how)
        assert response.status_code == 200, path
        assert response.headers["Content-Type"] == label, (path, how)
        assert "hits" in response.json or response.json["id"] == record["id"]
        assert "Accept" in {v.strip() for v in response.headers.get("Vary", "").split(",")}, path


@pytest.mark.parametrize("name", [n for n, s in serializers.REGISTRY.items() if n != "v1"])
def test_each_format_on_a_search_page(client, record, name):
    response = client.get("/api/records/", query_string={"format": name})
    assert response.status_code == 200, response.data[:300]
    assert response.data
    if name == "marcxml":
        validate(response.data, "marc21")


def test_bibtex_parses_back(client, record):
    text = client.get(f"/api/records/{record['id']}", headers={"Accept": "application/x-bibtex"}).data.decode()
    entry = bibtexparser.parse_string(text).entries[0]
    assert entry.fields_dict["doi"].value == record["doi"]


def test_unicode_survives_xml(client, record):
    data = client.get(f"/api/records/{record['id']}", headers={"Accept": "application/x-registry+xml"}).data
    titles = etree.fromstring(data).findall(".//{http://datacite.org/schema/kernel-4}title")
    assert titles[0].text == "Ünïcode & <angle> — 数据 · بيانات 🌍"


def test_accept_with_quality_values_and_406(client, record):
    url = f"/api/records/{record['id']}"
    chosen = client.get(url, headers={"Accept": "application/x-bibtex;q=0.5, application/marcxml+xml;q=0.9"})
    assert chosen.data.lstrip().startswith(b"<?xml") or b"<record" in chosen.data
    assert client.get(url, headers={"Accept": "*/*"}).json["id"] == record["id"]
    refused = client.get(url, headers={"Accept": "image/png"})
    assert refused.status_code == 406 and "application/x-bibtex" in refused.json["message"]


def test_citation_style_and_locale(client, record):
    url = f"/api/records/{record['id']}"
    apa = client.get(url, query_string={"format": "citation", "style": "apa"})
    assert apa.status_code == 200 and "Müller" in apa.data.decode()
    assert client.get(url, query_string={"format": "citation", "style": "no-such-style"}).status_code == 400
