"""The service on a two-node OpenSearch cluster (one JVM, tests/helpers/opensearch_node.py), its index with one
replica: a reindex with alias swap while publishes go on and a node leaves mid-load loses nothing; with the node the
service talks to gone, publishes still commit, /readyz says the search engine is down, and the outbox brings the
index up to date once the node is back."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from helpers.factories import published
from helpers.http import https_client
from opensearchpy import OpenSearch

from app import create_app
from repository.accounts.tokens import create_token, create_user
from repository.ondemand import wait_all_idle
from repository.outbox import MAX_BACKOFF_SECONDS
from repository.timeutil import utcnow
from repository.worker import reindex


@pytest.fixture(scope="module")
def opensearch_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from helpers.opensearch_node import OpenSearchCluster, java_available

    if not java_available():
        pytest.skip("no java and mvn to start a cluster")
    with OpenSearchCluster.start(tmp_path_factory.mktemp("cluster"), nodes=2, heap="1g") as cluster:
        yield cluster


@pytest.fixture
def service(opensearch_cluster: Any, make_settings: Any) -> Iterator[tuple[Any, Any, dict[str, str]]]:
    prefix = f"cluster{uuid.uuid4().hex[:10]}"
    app = create_app(make_settings(SEARCH_URL=opensearch_cluster.urls[0], SEARCH_INDEX_PREFIX=prefix,
                                   SEARCH_REPLICAS="1"))
    with app.extensions["repository"].db.write() as conn:
        token = create_token(conn, create_user(conn, "owner@example.org"), ["deposit:write", "deposit:actions"])[1]
    yield app, https_client(app), {"Authorization": f"Bearer {token}"}
    wait_all_idle()
    app.extensions["repository"].db.dispose()
    admin = OpenSearch(opensearch_cluster.urls[0])
    admin.indices.delete(index=f"{prefix}*", params={"allow_no_indices": "true", "expand_wildcards": "all"})
    admin.indices.delete_index_template(name=prefix, ignore=[404])
    admin.close()


def ids(client: Any, **args: str) -> list[int]:
    return sorted(h["id"] for h in client.get("/api/records/", query_string={"size": "100", **args}).json["hits"]["hits"])


def wait_green(cluster: Any, tries: int = 4) -> None:
    """The cluster green again: the server waits for it (30 s a call, its default); a few calls, then a failure."""
    admin = OpenSearch(cluster.urls[0], timeout=60)
    try:
        for _ in range(tries):
            if admin.cluster.health(wait_for_status="green")["status"] == "green":
                return
        pytest.fail("the cluster did not turn green again")
    finally:
        admin.close()


def test_a_reindex_while_publishes_go_on_and_a_node_leaves_mid_load_loses_nothing(opensearch_cluster, service):
    app, client, auth = service
    services = app.extensions["repository"]
    before = [published(client, auth, title=f"Before {n}", content=b"%d" % n)["id"] for n in range(6)]
    wait_green(opensearch_cluster)  # SEARCH_REPLICAS=1: each shard on both nodes
    during: list[int] = []

    def meanwhile(count: int) -> None:
        # Once the load has started: a publish, and the second node (holding the replicas) goes away.
        if not during:
            opensearch_cluster.stop_node(1)
            during.append(published(client, auth, title="Published during the load", content=b"x")["id"])

    loaded = reindex.rebuild(services.db, services.settings, services.search, meanwhile)
    assert loaded >= len(before) and during
    after = published(client, auth, title="Published after the swap", content=b"y")["id"]
    assert reindex.check(services.db, services.search) == []
    assert ids(client) == sorted([*before, *during, after])
    opensearch_cluster.start_node(1)
    wait_green(opensearch_cluster)
    assert ids(client) == sorted([*before, *during, after])


@pytest.mark.slow
@pytest.mark.opensearch
def test_a_node_that_cannot_start_says_why(tmp_path):
    from helpers.opensearch_node import OpenSearchCluster, OpenSearchError, java_available

    if not java_available():
        pytest.skip("no java and mvn to start a node")
    with pytest.raises(OpenSearchError, match="exited"):  # the JVM refuses the heap: no node, and the reason
        OpenSearchCluster.start(tmp_path / "os", heap="1k")


def test_the_outbox_catches_up_once_the_node_is_back(opensearch_cluster, service):
    app, client, auth = service
    services = app.extensions["repository"]
    first = published(client, auth, title="Indexed at once", content=b"1")["id"]
    opensearch_cluster.stop_node(0)  # the node the service talks to
    try:
        # The publish commits in the database; its index row stays in the outbox for the worker's retries.
        dep = published(client, auth, title="Published while the node was away", content=b"2")
        assert dep["state"] == "done"
        ready = client.get("/readyz")
        assert ready.status_code == 503 and ready.json["checks"]["search"]["ok"] is False
        assert client.get(f"/api/records/{dep['id']}").status_code == 200  # read from the database
        assert services.indexer.process_pending() == 0  # still away: nothing applied, nothing lost
    finally:
        opensearch_cluster.start_node(0)
    wait_green(opensearch_cluster)
    # The failed row waits out its backoff first: the worker's pass once that has passed.
    assert services.indexer.process_pending(now=utcnow() + timedelta(seconds=MAX_BACKOFF_SECONDS + 1)) >= 1
    assert client.get("/readyz").status_code == 200
    assert ids(client) == sorted([first, dep["id"]])
    assert reindex.check(services.db, services.search) == []
