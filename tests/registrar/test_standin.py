"""The stand-in itself follows the DataCite protocol where the registrar never strays (so it cannot test them)."""

from __future__ import annotations

import base64
import json

import pytest
import requests
from helpers.registrar import DOI, URL, datacite_xml

from .datacite_standin import DataCiteStandin


def put(standin: DataCiteStandin, attributes: dict, content_type: str = "application/vnd.api+json") -> requests.Response:
    body = {"data": {"id": DOI, "type": "dois", "attributes": attributes}}
    return requests.put(
        f"{standin.url}/dois/{DOI}", data=json.dumps(body), headers={"Content-Type": content_type},
        auth=(standin.username, standin.password), timeout=5,
    )  # fmt: skip


def test_requires_the_jsonapi_content_type(standin: DataCiteStandin) -> None:
    response = put(standin, {"event": "publish"}, content_type="application/json")
    assert response.status_code == 415
    assert response.json()["errors"][0]["title"]


def test_xml_must_be_base64(standin: DataCiteStandin) -> None:
    response = put(standin, {"event": "publish", "url": URL, "xml": "<resource/>"})
    assert response.status_code == 422
    assert response.json() == {"errors": [{"source": "xml", "title": "Is not valid base64"}]}


def test_a_draft_needs_neither_url_nor_xml_but_publishing_does(standin: DataCiteStandin) -> None:
    assert put(standin, {}).status_code == 201
    assert standin.dois[DOI]["state"] == "draft"

    response = put(standin, {"event": "publish"})
    assert response.status_code == 422
    assert {e["source"] for e in response.json()["errors"]} == {"url", "xml"}

    xml = base64.b64encode(datacite_xml()).decode()
    response = put(standin, {"event": "publish", "url": URL, "xml": xml})
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/vnd.api+json"
    assert response.json()["data"]["attributes"]["state"] == "findable"


def test_events_that_do_not_apply_are_ignored(standin: DataCiteStandin) -> None:
    assert put(standin, {"event": "hide"}).status_code == 201
    assert standin.dois[DOI]["state"] == "draft"
    xml = base64.b64encode(datacite_xml()).decode()
    assert put(standin, {"event": "publish", "url": URL, "xml": xml}).status_code == 200

    response = put(standin, {"event": "register"})

    assert response.status_code == 200
    assert response.json()["data"]["attributes"]["state"] == "findable"
    assert put(standin, {"event": "destroy"}).status_code == 422


@pytest.mark.parametrize("path", ["/dois/10.5072/unknown", "/heartbeat"])
def test_unknown_resources(standin: DataCiteStandin, path: str) -> None:
    response = requests.get(standin.url + path, timeout=5)
    assert response.status_code == 404
    assert response.json()["errors"][0]["status"] == "404"
