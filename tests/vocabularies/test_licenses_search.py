"""`GET /api/licenses/`: the array with `Accept: application/json`, the envelope otherwise, and `q` in the
query-string syntax of record search (a syntax error is a 400 naming `q`)."""

from __future__ import annotations

import pytest

URL = "/api/licenses/"


def test_accept_application_json_answers_the_array(client):
    response = client.get(URL, query_string={"q": "cc-by", "size": 3}, headers={"Accept": "application/json"})
    assert response.status_code == 200 and response.mimetype == "application/json"
    assert isinstance(response.json, list) and response.json[0]["id"] == "cc-by"
    assert {"id", "created", "updated", "metadata", "links"} <= set(response.json[0])
    assert 'rel="self"' in response.headers["Link"] and "Accept" in response.headers["Vary"]


@pytest.mark.parametrize("accept", [None, "*/*", "application/vnd.service.v1+json", "application/vnd.zenodo.v1+json",
                                    "text/html,application/xhtml+xml,*/*;q=0.8"])
def test_other_clients_get_the_envelope(client, accept):
    headers = {"Accept": accept} if accept else {}
    response = client.get(URL, query_string={"q": "cc-by"}, headers=headers)
    body = response.json
    assert body["hits"]["hits"][0]["id"] == "cc-by" and "links" in body
    # Labelled as asked: a v1 media type named, or plain JSON for no preference
    assert response.mimetype == (accept if accept and accept.endswith("v1+json") else "application/json")


@pytest.mark.parametrize("q", ["(", ")", '"unclosed', "cc-by AND", "[a TO", "a:b:(", "(" * 200 + "mit" + ")" * 200,
                               "x" * 4001, "title:[1 TO 2]"])
def test_bad_syntax_is_a_400_naming_q(client, q):
    response = client.get(URL, query_string={"q": q})
    assert response.status_code == 400, response.json
    assert response.json["status"] == 400 and response.json["errors"][0]["field"] == "q"


def test_operators_and_phrases(client):
    def ids(q: str) -> set[str]:
        response = client.get(URL, query_string={"q": q, "size": 1000})
        assert response.status_code == 200, response.json
        return {hit["id"] for hit in response.json["hits"]["hits"]}

    assert {"MIT", "Apache-2.0"} <= ids("mit OR apache")
    assert "MIT" not in ids("apache")
    with_gpl = ids('"general public"')
    assert "GPL-3.0-only" in with_gpl and "GPL-3.0-only" not in ids('"general public" -gpl-3.0')
    assert ids("(cc-by)") == ids("cc-by")
    assert ids("cc-by*") == ids("cc-by")


@pytest.mark.slow
@pytest.mark.parametrize("path", ["/api/licenses/", "/api/funders/", "/api/grants/", "/api/communities/"])
@pytest.mark.parametrize("words", [33, 1000])
def test_too_many_words_is_a_400_on_every_vocabulary(client, path, words):
    # A thousand words made SQLite refuse the expression: a 503 before the bound.
    response = client.get(path, query_string={"q": " ".join(["a"] * words)})
    assert response.status_code == 400, response.json
    assert response.json["errors"][0]["field"] == "q"
    assert client.get(path, query_string={"q": " ".join(["a"] * 32)}).status_code == 200
