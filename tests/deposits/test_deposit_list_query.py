"""`q` on the deposition list: regular expressions and wildcards run in linear time on the caller's deposits."""

from __future__ import annotations

import threading

from helpers.factories import make_deposit

API = "/api/deposit/depositions"


def test_a_backtracking_regex_answers_at_once(app, client, auth):
    make_deposit(client, auth, title="a" * 31)
    answers: list = []
    # Python's `re` took 2**31 steps on this pattern and title (the worker was killed); a thread keeps a
    # regression from hanging the suite: the join gives up, and the assertion fails.
    worker = threading.Thread(target=lambda: answers.append(
        client.get(API, query_string={"q": "title:/(a+)+b/"}, headers=auth)), daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert answers, "the deposition list did not answer"
    assert answers[0].status_code == 200 and answers[0].json == []


def test_regex_and_wildcards_still_match(client, auth):
    lakes = make_deposit(client, auth, title="Alpha study of lakes", keywords=["Water-Quality"])
    make_deposit(client, auth, title="Beta study of rivers")

    def found(q: str) -> list[int]:
        response = client.get(API, query_string={"q": q}, headers=auth)
        assert response.status_code == 200, response.json
        return [d["id"] for d in response.json]

    assert found("title:/la.es/") == [lakes["id"]]
    assert found("title:/(a+)+lpha/") == [lakes["id"]]
    assert found("keywords:/water-.*/") == [lakes["id"]]
    assert found("title:l?kes") == [lakes["id"]]
    assert found("title:\\[ab\\]lph?") == []  # brackets are literal in a wildcard, not a character class
    assert found("keywords:water-q*") == [lakes["id"]]
    refused = client.get(API, query_string={"q": "title:/(?=a)b/"}, headers=auth)
    assert refused.status_code == 400 and refused.json["errors"][0]["field"] == "q"


def test_the_work_of_a_listing_is_bounded_before_it_starts(client, auth, monkeypatch):
    from repository.deposits import query

    for i in range(3):
        make_deposit(client, auth, title=f"Bounded {i}")
    # Three depositions stand in for thousands: the bound is rows x (clauses + the cost of a document).
    monkeypatch.setattr(query, "MAX_MATCH_WORK", 3 * (30 + query.DOCUMENT_COST))
    assert len(client.get(API, query_string={"q": "bounded"}, headers=auth).json) == 3  # 30 clauses: fits
    refused = client.get(API, query_string={"q": "bounded study"}, headers=auth)  # 60 clauses: does not
    assert refused.status_code == 400 and refused.json["errors"][0]["field"] == "q"
    assert "3 depositions" in refused.json["message"]
    assert len(client.get(API, query_string={"q": "title:bounded title:study"}, headers=auth).json) == 3
