"""The benchmark corpus and its bulk load path, and `bench/bench.py --quick` (runs and writes its report; no
figure is asserted: timings belong to the benchmark, never to the test suite)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import func, select

from bench.generate_corpus import Corpus, concepts, prepare
from repository.files.store import FileStore
from repository.metadata import validate_for_publish
from repository.records.lookups import DatabaseLookups
from repository.search.open import open_search
from repository.storage import open_database
from repository.storage.tables.communities import community_requests
from repository.storage.tables.deposits import deposits
from repository.storage.tables.files import buckets, objects
from repository.storage.tables.records import records
from repository.vocabularies.resource_types import UPLOAD_TYPES
from repository.worker.bulk import BulkLoader, Concept

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return Corpus(seed=8)


@pytest.mark.slow  # 3,000 generated concepts
def test_corpus_is_deterministic_and_covers_the_vocabularies(corpus: Corpus) -> None:
    assert Corpus(seed=8).concept(123) == corpus.concept(123)
    assert Corpus(seed=9).concept(123) != corpus.concept(123)
    generated = [corpus.concept(i)[1] for i in range(3000)]
    firsts = [versions[0].metadata for versions in generated]
    assert {m["upload_type"] for m in firsts} == set(UPLOAD_TYPES)
    rights = Counter(m["access_right"] for m in firsts)
    assert set(rights) == {"open", "embargoed", "restricted", "closed"} and rights["open"] > len(firsts) / 2
    schemes = {r["scheme"] for m in firsts for r in m.get("related_identifiers", [])}
    assert {"doi", "url", "arxiv", "handle", "isbn", "issn", "pmid", "pmcid", "ads", "urn", "ark", "purl", "lsid",
            "ean13", "istc"} <= schemes
    creators = [len(m["creators"]) for m in firsts]
    assert min(creators) == 1 and max(creators) == 30
    assert any(c.get("orcid") for m in firsts for c in m["creators"])
    assert any(any(ord(ch) > 0x3000 for ch in m["title"]) for m in firsts)  # CJK titles
    assert any(any(0x0400 <= ord(ch) < 0x0500 for ch in m["title"]) for m in firsts)  # Cyrillic titles
    sizes = [len(m["description"].encode()) for m in firsts]
    assert min(sizes) >= 300 and max(sizes) <= 6000
    several = sum(len(versions) > 1 for versions in generated) / len(generated)
    assert 0.05 < several < 0.15
    assert all(m.get(k) for m in firsts[:50] for k in ("title", "creators", "description"))
    assert any(m.get("grants") for m in firsts) and any(m.get("locations") for m in firsts)
    assert any(m.get("communities") for m in firsts)
    assert all(0 < len(data) < 20_000 for versions in generated[:200] for v in versions for _k, data in v.files)


@pytest.mark.slow  # 400 generated concepts through publish's validation
def test_generated_metadata_is_what_publish_accepts_and_stores(database_url: str, corpus: Corpus) -> None:
    """A sample goes through the API's validation unchanged: the corpus is already in its stored form."""
    db = open_database(database_url)
    prepare(db, users=30, communities=24)
    with db.read() as conn:
        lookups = DatabaseLookups(conn)
        for index in range(0, 4000, 10):
            for version in corpus.concept(index)[1]:
                assert validate_for_publish(version.metadata, lookups) == version.metadata, index


@pytest.mark.slow
def test_bulk_load_writes_what_publish_writes(app, client, make_token) -> None:  # type: ignore[no-untyped-def]
    services = app.extensions["repository"]
    db, settings, search = services.db, services.settings, services.search
    owner_ids = prepare(db, users=5, communities=4)
    loader = BulkLoader(db, settings, search, services.files, file_threads=2)
    generated = list(concepts((8, 5, 4), 60, owner_ids, jobs=0))
    assert sum(len(c.versions) for c in generated) == 60
    report = loader.load(generated, batch_records=25)
    assert report.records == 60 and report.concepts == len(generated)

    with db.read() as conn:
        assert conn.execute(select(func.count()).select_from(records)).scalar_one() == 60
        assert set(conn.execute(select(deposits.c.status)).scalars()) == {"published"}
        assert set(conn.execute(select(buckets.c.locked)).scalars()) == {True}
        per_bucket = Counter(conn.execute(select(objects.c.bucket_id)).scalars())
        assert len(per_bucket) == 120  # the deposit's bucket and the record's snapshot
        expected_requests = {c.versions[0].metadata.get("communities", [{}])[0].get("identifier")
                             for c in generated} - {None}
        asked = set(conn.execute(select(community_requests.c.community)).scalars())
        assert asked == expected_requests
    assert search.get_revisions() == {recid: 1 for recid in _recids(db)}

    first = generated[0]
    recid = min(_recids(db))
    answer = client.get(f"/api/records/{recid}").get_json()
    assert answer["metadata"]["title"] == first.versions[0].metadata["title"]
    with client.get(f"/api/records/?q=recid:{recid}") as found:
        assert found.status_code == 200
    if answer["metadata"]["access_right"] == "open":
        written = {key: "md5:" + hashlib.md5(data).hexdigest() for key, data in first.versions[0].files}
        assert {f["key"]: f["checksum"] for f in answer["files"]} == written

    # The owner sees the loaded deposits as published, with a DOI from the shared sequence.
    from repository.accounts import tokens

    with db.write() as conn:
        token = tokens.create_token(conn, first.owner_id, list(tokens.SCOPES))[1]
    listing = client.get("/api/deposit/depositions", headers={"Authorization": f"Bearer {token}"}).get_json()
    mine = [d for d in listing if d["id"] == recid]
    assert mine and mine[0]["state"] == "done" and mine[0]["submitted"] is True
    assert mine[0]["doi"] == f"{settings.doi_prefix}/{settings.DOI_NAMESPACE}.{recid}"

    # A later publish through the API takes the next id of the sequence, after the loaded ones.
    auth = {"Authorization": f"Bearer {make_token('later@example.org')}"}
    created = client.post("/api/deposit/depositions", json={}, headers=auth).get_json()
    assert created["id"] > max(_recids(db))


def _recids(db) -> set[int]:  # type: ignore[no-untyped-def]
    with db.read() as conn:
        return set(conn.execute(select(records.c.id)).scalars())


@pytest.mark.slow  # 0.4 s and more of work
def test_bulk_load_into_a_repository_that_has_records_upserts_into_the_live_index(app) -> None:  # type: ignore[no-untyped-def]
    services = app.extensions["repository"]
    db, settings = services.db, services.settings
    owner_ids = prepare(db, users=3, communities=2)
    search = open_search(settings.SEARCH_URL)
    store = FileStore(settings.FILES_ROOT)
    loader = BulkLoader(db, settings, search, store, file_threads=2)
    loader.load(list(concepts((8, 3, 2), 10, owner_ids, jobs=0)))
    second = [Concept(owner_id=c.owner_id, versions=c.versions) for c in concepts((9, 3, 2), 10, owner_ids, jobs=0)]
    report = loader.load(second)
    assert report.records == 10
    assert len(search.get_revisions()) == 20 == len(_recids(db))


@pytest.mark.e2e
def test_bench_quick_runs_and_writes_its_report(tmp_path) -> None:  # type: ignore[no-untyped-def]
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "SEARCH_URL", "INSTANCE_PATH")}
    parts = "reindex,ratelimit,http,oai,upload,multipart,publish,archive,pages,mix,compare"  # engines: below
    done = subprocess.run([sys.executable, "bench/bench.py", "--quick", "--parts", parts, "--out", str(tmp_path)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-8000:]  # the servers' errors are printed last
    reports = list(tmp_path.glob("bench-*.json"))
    assert len(reports) == 1
    report = json.loads(reports[0].read_text())
    rows = {row["name"]: row for row in report["setups"][report["server"]]}
    assert {"ceiling", "search_common", "search_deep_page", "search_deep_cursor",
            "search_deep_publication_date", "record_v1", "record_marcxml", "page20_bibtex"} <= set(rows)
    assert report["reindex"]["records"] == 800 and report["reindex"]["parity_problems"] == 0
    assert report["upload"]["megabytes"] == 64 and report["publish"]["runs"] == 3
    assert report["archive"]["files"] == 3 and report["archive"]["archive_bytes"] > 3 * 16 * 1024 * 1024
    assert len(report["archive"]["behind_proxy_runs"]) == 5  # the same archive from a server behind a proxy
    mix = report["search_mix"]
    assert mix["mix"]["requests"] == 5000
    assert mix["quiet"]["requests"] > 0 and mix["publishing"]["requests"] > 0, (mix["quiet"], mix["publishing"])
    assert mix["stream"]["actions"].get("publish", 0) >= 1 and mix["stream"]["errors"] == 0, mix["stream"]
    assert {v["name"] for v in report["verdicts"]} >= {"search_common", "record_v1", "reindex", "upload", "search_mix"}
    assert "| measurement | req/s |" in done.stdout
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("instance-")]  # the temporary instance is gone


@pytest.mark.e2e
def test_bench_engines_runs_the_searches_on_both_engines(tmp_path, opensearch_url: str) -> None:
    """`--parts engines` against the session's node: both reindexes with a clean parity check, the same requests
    answered without errors by a server on each engine, the page's table rendered, the node left as found."""
    from opensearchpy import OpenSearch

    client = OpenSearch(opensearch_url)
    before = set(client.indices.get_alias(index="*"))
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "SEARCH_URL", "INSTANCE_PATH")}
    done = subprocess.run([sys.executable, "bench/bench.py", "--quick", "--records", "120", "--parts", "engines",
                           "--targets", "search_(common|aggregations|deep_cursor)", "--opensearch-url", opensearch_url,
                           "--out", str(tmp_path)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-8000:]
    report = json.loads(next(tmp_path.glob("bench-*.json")).read_text())
    engines = report["engines"]
    assert "error" not in engines, engines
    for name in ("embedded", "opensearch"):
        assert engines["reindex"][name]["records"] == 120 and engines["reindex"][name]["parity_problems"] == 0
    for label in ("embedded", "embedded_computed", "opensearch"):
        rows = {row["name"]: row for row in engines[label]}
        assert set(rows) == {"ceiling", "search_common", "search_aggregations", "search_deep_cursor"}, label
        assert all(row["rps"] > 0 and row["errors"] == 0 for row in rows.values()), (label, rows)
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    try:
        from results_table import engines_table
    finally:
        sys.path.remove(os.path.join(ROOT, "bench"))
    shown = engines_table(report, "report.json")
    assert shown.count("| `search_") == 3 and "| opensearch |" in shown
    assert set(client.indices.get_alias(index="*")) == before  # the run's index went with it
    client.close()


@pytest.mark.slow  # three loads of the generated corpus into new instances
def test_an_interrupted_load_resumes_where_it_stopped(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A load stopped after some batches (before its index swap) goes on with the next concept; the result is the
    corpus a single run loads, and the index built beside the live one is swapped in at the end."""
    from bench import generate_corpus
    from repository.config import Settings
    from repository.storage.engine import close_all

    def titles(instance: str) -> tuple[list[str], dict[int, int]]:
        settings = Settings.build(INSTANCE_PATH=instance)
        db = open_database(settings.DATABASE_URL)
        with db.read() as conn:
            found = sorted(m["title"] for m in conn.execute(select(records.c.metadata)).scalars())
        close_all()
        return found, open_search(settings.SEARCH_URL).get_revisions()

    once = str(tmp_path / "once")
    monkeypatch.setenv("INSTANCE_PATH", once)
    assert generate_corpus.main(["--records", "40", "--jobs", "0", "--batch", "10", "--quiet"]) == 0

    resumed = str(tmp_path / "resumed")
    monkeypatch.setenv("INSTANCE_PATH", resumed)
    original = BulkLoader._load_batch
    calls = []

    def crash_on_third(self, *args):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt  # as a killed load: two batches committed, the new index not swapped in
        return original(self, *args)

    monkeypatch.setattr(BulkLoader, "_load_batch", crash_on_third)
    with pytest.raises(KeyboardInterrupt):
        generate_corpus.main(["--records", "40", "--jobs", "0", "--batch", "10", "--quiet"])
    monkeypatch.setattr(BulkLoader, "_load_batch", original)
    assert generate_corpus.main(["--records", "40", "--jobs", "1", "--batch", "10", "--quiet"]) == 0

    expected, _ = titles(once)
    got, indexed = titles(resumed)
    assert got == expected and len(got) == 40
    assert len(indexed) == 40  # every record in the live index after the swap


def test_the_multipart_verdict_is_for_four_parts_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench"))
    from report import verdicts  # bench/'s modules import their neighbours as bench.py runs them

    def multipart(parallel: int | None) -> dict:
        result = {"ratio": 0.57, **({"parallel": parallel} if parallel is not None else {})}
        return next(v for v in verdicts({"multipart": result}) if v["name"] == "multipart")

    assert multipart(4)["met"] is False and multipart(4)["value"] == 0.57
    assert multipart(None)["met"] is False  # reports from before `parallel` was recorded
    assert multipart(1)["value"] is None and multipart(1)["met"] is None  # reported in its line, not judged


def test_a_failed_run_prints_what_the_servers_logged_as_errors(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from bench.bench import server_errors

    log = tmp_path / "server-gthread-3x4.log"
    log.write_text(
        '127.0.0.1 - - [25/Nov/2026:10:32:45 +0000] "GET /records/4 HTTP/1.1" 200 900 "-" "-" 3ms\n'
        "2026-11-25 10:41:06,197 ERROR repository.web.request unhandled error (request ab12)\n"
        "Traceback (most recent call last):\n"
        '  File "serializers/csl.py", line 130, in _for_citeproc\n'
        '    n if "literal" in n\n'
        "KeyError: 'given'\n"
        '127.0.0.1 - - [25/Nov/2026:10:32:46 +0000] "GET /records/4 HTTP/1.1" 500 0 "-" "-" 3ms\n'
        "2026-11-25 10:41:07,000 WARNING repository.web.request not an error\n"
        "[2026-11-25 10:42:41 +0000] [7057] [CRITICAL] WORKER TIMEOUT (pid:7058)\n")
    blocks = server_errors(str(log))
    assert len(blocks) == 2
    assert blocks[0].splitlines()[0].endswith("unhandled error (request ab12)")
    assert blocks[0].splitlines()[-1] == "KeyError: 'given'"  # the traceback to its last line, no access line
    assert blocks[1].endswith("WORKER TIMEOUT (pid:7058)")


def test_a_run_that_got_error_responses_fails_the_benchmark_and_says_which(
        monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.syspath_prepend(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench"))
    from report import failures  # bench/'s modules import their neighbours as bench.py runs them

    from bench.bench import error_statuses

    results = {"setups": {"gthread-3x4": [{"name": "ceiling", "errors": 0}, {"name": "record_v1", "errors": 3}]},
               "pages": {"record": {"measured": True, "errors": 0}, "search": {"measured": True, "errors": 7}},
               "search_mix": {"quiet": {"errors": 0}, "stream": {"errors": 0}}}
    assert failures(results) == ["setups/gthread-3x4[record_v1]: 3 error responses (4xx/5xx)",
                                 "pages/search: 7 error responses (4xx/5xx)"]
    results["setups"]["gthread-3x4"][1]["errors"] = results["pages"]["search"]["errors"] = 0
    assert failures(results) == []

    log = tmp_path / "server.log"
    line = '127.0.0.1 - - [25/Nov/2026:10:32:45 +0000] "GET {} HTTP/1.1" {} {} "-" "-" 3ms request_id=ab user_id=- route={}\n'
    log.write_text(line.format("/records/4", 200, 900, "/records/<int:recid>")
                   + line.format("/records/4", 500, 0, "/records/<int:recid>") * 2
                   + line.format("/api/records/?q=x", 503, 95, "/api/records/"))
    assert error_statuses(str(log)) == {"500 0 /records/<int:recid>": 2, "503 95 /api/records/": 1}


def _written_table(bench, report, tmp_path) -> str:  # type: ignore[no-untyped-def]
    """A page after `bench.main(["--write", report])`: the report's table between its markers, nothing else
    changed."""
    page = tmp_path / "page.md"
    page.write_text(f"before\n{bench.START}\nold\n{bench.END}\nafter\n", encoding="utf-8")
    assert bench.main(["--write", str(report), "--page", str(page)]) == 0
    written = page.read_text(encoding="utf-8")
    assert "old" not in written and written.startswith("before\n") and written.endswith("after\n")
    return written


def test_search_bench_reports_its_ratios_and_writes_its_table(tmp_path) -> None:
    """`bench/search_bench.py` over a small index: one row per comparison, and `--write` puts the report's table
    between the page's markers (no figure asserted)."""
    from bench import search_bench
    from repository.search.documents import to_index_document
    from repository.search.embedded.engine import EmbeddedBackend
    from tests.search.factories import make_record

    EmbeddedBackend(tmp_path / "index").index([to_index_document(make_record(recid, metadata={
        "title": f"Climate change data {recid}", "keywords": ["climate", f"k{recid % 3}"]})) for recid in range(1, 13)])
    report = tmp_path / "search.json"
    assert search_bench.main(["--instance", str(tmp_path), "--rounds", "1", "--out", str(report)]) == 0
    rows = json.loads(report.read_text(encoding="utf-8"))["rows"]
    sorts = ["mostrecent", "mostviewed", "publication_date", "conference_session", "journal", "version"]
    assert [r["search"] for r in rows] == ["phrase", "phrase, sort=mostrecent", "listing"] + \
        [f"listing, sort={s}" for s in sorts] + [f"sort={s}" for s in sorts] + \
        ["relevance", "listing, first after a commit", "sort=mostrecent, query again", "sort=mostrecent, top_hits",
         "facet access_right",
         "facet type", "facet file_type", "facet keywords"]
    assert rows[0]["total"] == 12 and rows[1]["total"] == 12
    written = _written_table(search_bench, report, tmp_path)
    assert "| `sort=journal` | with facets / without | 12 |" in written and "12 records in the index" in written
    million = tmp_path / "search-1m.json"  # a second report: its table follows the first
    million.write_text(json.dumps({**json.loads(report.read_text(encoding="utf-8")), "records": 1_000_000}),
                       encoding="utf-8")
    page = tmp_path / "page.md"
    assert search_bench.main(["--write", str(report), str(million), "--page", str(page)]) == 0
    both = page.read_text(encoding="utf-8")
    assert both.index("| 12 records in the index |") < both.index("| 1,000,000 records in the index |")
    assert both.count("| `sort=journal` | with facets / without | 12 |") == 2


def test_s3_bench_writes_the_tables_of_a_report(tmp_path) -> None:
    """`bench/s3_bench.py --write` puts a report's tables between the page's markers: a row per transfer with its
    verdict (through the service over HTTPS and over plain HTTP behind a proxy), the workers' memory after each round
    and what the soak rounds' second half added (no figure asserted)."""
    from bench import s3_bench

    report = sorted(Path(ROOT, "bench", "results").glob("s3-*.json"))[-1]
    page = tmp_path / "page.md"
    page.write_text(f"before\n{s3_bench.START}\nold\n{s3_bench.END}\nafter\n", encoding="utf-8")
    assert s3_bench.main(["--write", str(report), "--page", str(page)]) == 0
    written = page.read_text(encoding="utf-8")
    assert "old" not in written and written.startswith("before\n") and written.endswith("after\n")
    rounds = json.loads(report.read_text(encoding="utf-8"))["rounds"]
    for way in ("upload", "download"):
        assert f"| {way} through the service, HTTPS |" in written
        assert f"| {way} through the service, HTTP behind a TLS proxy |" in written
    assert f"| after round {rounds} |" in written and "| peak (VmHWM) |" in written
    assert "| added by soak rounds " in written


def test_the_object_storage_page_shows_the_newest_s3_report() -> None:
    from bench import s3_bench

    report = sorted(Path(ROOT, "bench", "results").glob("s3-*.json"))[-1]
    page = Path(s3_bench.PAGE).read_text(encoding="utf-8")
    shown = page.split(s3_bench.START, 1)[1].split(s3_bench.END, 1)[0].strip()
    rendered = s3_bench.table(json.loads(report.read_text(encoding="utf-8")), report.relative_to(ROOT).as_posix())
    assert shown == rendered.strip(), \
        f"docs/operators/object-storage.md is stale: run python bench/s3_bench.py --write {report.name}"


@pytest.mark.slow  # a generated corpus loaded, grown, and exported in child processes
def test_export_bench_measures_each_size_and_writes_its_table(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`bench/grow_instance.py` copies a generated instance's records under new ids; `bench/export_bench.py`
    exports each size as many records as its plain loop reads, and `--write` puts the report's table between the
    page's markers (no rate asserted: a verdict at a size under the target's says so)."""
    from bench import export_bench, generate_corpus, grow_instance
    from repository.storage.engine import close_all

    small = str(tmp_path / "small")
    monkeypatch.setenv("INSTANCE_PATH", small)
    assert generate_corpus.main(["--records", "30", "--jobs", "0", "--batch", "10", "--quiet"]) == 0
    close_all()
    grown = grow_instance.grow(small, str(tmp_path / "grown"), 75)
    assert grown["records"] == 75 and grown["copies"] == 2
    report = tmp_path / "export.json"
    monkeypatch.delenv("INSTANCE_PATH")
    assert export_bench.main(["--instance", str(tmp_path / "grown"), "--instance", small, "--rounds", "1",
                              "--out", str(report)]) == 0
    found = json.loads(report.read_text(encoding="utf-8"))
    assert [one["records"] for one in found["sizes"]] == [30, 75]  # smallest first
    for one in found["sizes"]:
        assert one["rounds"][0]["plain_records"] == one["records"] and one["anon_peak_kb"] > 0
    assert found["verdict"]["at_target_size"] is False and found["verdict"]["met_wall"] is False
    written = _written_table(export_bench, report, tmp_path)
    assert "| 75 | " in written and "not measured at that size" in written


@pytest.mark.slow  # a full load and an index-only one of the generated corpus
def test_an_index_only_corpus_indexes_what_a_full_load_indexes(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`generate_corpus.py --index-only` (bench/corpus_index.py): the same records in the index as a full load of
    the same corpus, field for field (only the fresh UUIDs of files and buckets differ), and no records rows."""
    import re

    import tantivy

    from bench import generate_corpus
    from repository.config import Settings
    from repository.search.embedded.engine import EmbeddedBackend
    from repository.search.embedded.tantivy_query import stored_source
    from repository.storage.engine import close_all

    uuids = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")

    def indexed(instance: str) -> dict[int, str]:
        searcher = EmbeddedBackend(os.path.join(instance, "index"), cache_entries=0)._live()
        hits = searcher.search(tantivy.Query.all_query(), max(1, searcher.num_docs)).hits
        found = [stored_source(searcher, address) for _, address in hits]
        return {record["id"]: uuids.sub("U", json.dumps(record, sort_keys=True)) for record in found}

    def rows(instance: str) -> int:
        db = open_database(Settings.build(INSTANCE_PATH=instance).DATABASE_URL)
        with db.read() as conn:
            count = conn.execute(select(func.count()).select_from(records)).scalar_one()
        close_all()
        return count

    full, only = str(tmp_path / "full"), str(tmp_path / "only")
    monkeypatch.setenv("INSTANCE_PATH", full)
    assert generate_corpus.main(["--records", "60", "--jobs", "0", "--batch", "20", "--quiet"]) == 0
    monkeypatch.setenv("INSTANCE_PATH", only)
    assert generate_corpus.main(["--records", "60", "--jobs", "0", "--quiet", "--index-only"]) == 0
    expected, got = indexed(full), indexed(only)
    assert len(got) == 60 and got == expected
    assert rows(only) == 0 and rows(full) == 60
