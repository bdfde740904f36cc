"""The embedded engine across instances and processes: commits seen promptly, one writer, swaps, failures."""

from __future__ import annotations

import fcntl
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import tantivy
from helpers.search import ids, run

from repository.errors import ServiceUnavailable
from repository.search.documents import to_index_document
from repository.search.embedded.engine import LOCK, EmbeddedBackend
from repository.search.embedded.tantivy_query import build_schema, register_analyzers, to_tantivy
from repository.search.mapping import fields, fields_of, load_template
from repository.search.open import open_search

from .factories import make_record

ROOT = Path(__file__).resolve().parents[2]


def doc(recid: int, **overrides):
    return to_index_document(make_record(recid, **overrides))


def test_open_search_picks_the_engine_from_the_url(tmp_path):
    assert isinstance(open_search(f"embedded://{tmp_path}/a"), EmbeddedBackend)
    assert isinstance(open_search(str(tmp_path / "b")), EmbeddedBackend)
    assert type(open_search("https://localhost:9200")).__name__ == "OpenSearchBackend"
    with pytest.raises(ValueError):
        open_search("ftp://example.org/x")


def test_a_second_instance_sees_commits_and_deletes(tmp_path):
    first, second = open_search(f"embedded://{tmp_path}"), open_search(f"embedded://{tmp_path}")
    assert run(second).total == 0
    first.index([doc(1), doc(2)])
    assert sorted(ids(run(second))) == [1, 2]
    second.delete([1])
    assert ids(run(first)) == [2]


def test_another_process_writes_and_this_one_sees_it_at_once(tmp_path):
    here = open_search(f"embedded://{tmp_path}")
    here.index([doc(1)])
    assert ids(run(here)) == [1]
    script = textwrap.dedent(f"""
        import sys; sys.path.insert(0, {str(ROOT)!r})
        from repository.search.open import open_search
        from repository.search.documents import to_index_document
        from tests.search.factories import make_record
        open_search("embedded://{tmp_path}").index([to_index_document(make_record(2))])
    """)
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
    assert sorted(ids(run(here))) == [1, 2]


@pytest.mark.slow  # two more interpreters
def test_processes_writing_at_once_lose_nothing(tmp_path):
    open_search(f"embedded://{tmp_path}")  # create the index before the race
    script = textwrap.dedent(f"""
        import sys; sys.path.insert(0, {str(ROOT)!r})
        from repository.search.open import open_search
        from repository.search.documents import to_index_document
        from tests.search.factories import make_record
        backend = open_search("embedded://{tmp_path}")
        start = int(sys.argv[1])
        for recid in range(start, start + 8):
            backend.index([to_index_document(make_record(recid))])
    """)
    workers = [subprocess.Popen([sys.executable, "-c", script, str(start)]) for start in (100, 200)]
    assert [w.wait(timeout=60) for w in workers] == [0, 0]
    found = set(ids(run(open_search(f"embedded://{tmp_path}"), size=100)))
    assert found == set(range(100, 108)) | set(range(200, 208))


def test_writers_wait_for_the_lock_and_give_up_with_a_503(tmp_path):
    backend = EmbeddedBackend(tmp_path, lock_timeout=0.2)
    with open(tmp_path / LOCK, "a+b") as held:  # another process holding the writer lock
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(ServiceUnavailable):
            backend.index([doc(1)])
        assert run(backend).total == 0  # reads never wait for the writer
    backend.index([doc(1)])
    assert ids(run(backend)) == [1]


def test_swap_is_seen_by_other_instances_and_old_directories_go(tmp_path):
    builder, reader = open_search(f"embedded://{tmp_path}"), open_search(f"embedded://{tmp_path}")
    builder.index([doc(1)])
    for round_ in range(3):
        builder.create_new_index()
        builder.bulk_load([doc(10 + round_)])
        assert ids(run(reader)) == ([1] if round_ == 0 else [10 + round_ - 1])
        builder.swap()
        assert ids(run(reader)) == [10 + round_]
    assert len(list(tmp_path.glob("records-*"))) == 2  # live + previous (readers may still be on it)


def test_bulk_load_and_swap_need_a_new_index(tmp_path):
    backend = open_search(f"embedded://{tmp_path}")
    with pytest.raises(RuntimeError):
        backend.bulk_load([doc(1)])
    with pytest.raises(RuntimeError):
        backend.swap()


def test_a_dead_index_is_a_503_and_ping_says_so(tmp_path):
    backend = open_search(f"embedded://{tmp_path}")
    backend.index([doc(1)])
    (tmp_path / "CURRENT").write_text("records-gone")
    assert backend.ping() is False
    with pytest.raises(ServiceUnavailable):
        run(backend)


def test_schema_is_derived_from_the_template():
    template = load_template()
    template["template"]["mappings"]["properties"]["extra"] = {"type": "keyword", "normalizer": "lowercase"}
    field_map = fields_of(template)
    schema = build_schema(field_map)
    index = register_analyzers(tantivy.Index(schema))
    writer = index.writer(heap_size=15_000_000, num_threads=1)
    writer.add_document(to_tantivy({"recid": 1, "extra": "MiXeD", "title": "Hello"}, field_map))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    searcher = index.searcher()
    assert searcher.search(tantivy.Query.term_query(schema, "extra", "mixed"), 1).count == 1
    # every leaf of the shipped template is a field of the embedded schema
    shipped = build_schema(fields())
    for name, f in fields().items():
        target = f"{name}.lat" if f.kind == "geo" else name
        value = {"text": "x", "keyword": "x", "number": 1, "boolean": True}.get(f.kind)
        if value is not None:
            tantivy.Query.term_query(shipped, target, value)


def test_wildcards_treat_punctuation_literally(tmp_path):
    backend = open_search(f"embedded://{tmp_path}")
    record = make_record(1)
    record["files"][0]["key"] = 'a<b>"c#(1)[x]{y}|z+^.pdf'
    backend.index([to_index_document(record)])
    for q, found in [("filename:a\\<b\\>*", 1), ("filename:*\\(1\\)*", 1), ("filename:*\\[x\\]*", 1),
                     ("filename:*z+\\^.pdf", 1), ("filename:*.pd?", 1), ("filename:*.pdx", 0), ("filename:a.b*", 0)]:
        assert run(backend, q=q).total == found, q


def test_writes_while_a_bulk_load_owns_the_new_index_reach_it_at_the_swap(tmp_path):
    builder, elsewhere = EmbeddedBackend(tmp_path), EmbeddedBackend(tmp_path)  # a reindex, a server process
    builder.index([doc(1), doc(2), doc(3)])
    builder.create_new_index()

    def stored_documents():  # what the reindex read, at revisions of the moment it read them
        for d in (doc(1), doc(2, revision=3), doc(3)):
            yield d["recid"], d["revision"], builder.engine_document(d)
        # Written while the bulk writer holds the new index: to the live one, and to the new one's journal.
        elsewhere.index([doc(1, revision=2), doc(2, revision=2), doc(4)])
        elsewhere.delete([3])

    assert builder.load_documents(stored_documents()) == 3
    assert elsewhere.get_revisions() == {1: 2, 2: 2, 4: 1}
    builder.swap()
    # The newer revision wins whichever way it came; a delete is final.
    assert elsewhere.get_revisions() == {1: 2, 2: 3, 4: 1}
    assert sorted(ids(run(elsewhere))) == [1, 2, 4]


def test_load_documents_needs_a_new_empty_index(tmp_path):
    backend = EmbeddedBackend(tmp_path)
    with pytest.raises(RuntimeError):
        backend.load_documents([])
    backend.create_new_index()
    backend.bulk_load([doc(1)])
    with pytest.raises(RuntimeError):
        backend.load_documents([(2, 1, backend.engine_document(doc(2)))])


@pytest.mark.slow  # 22 commits, then the wait for the merge they start
def test_merges_started_by_commits_end_in_the_background_not_abandoned(tmp_path):
    backend = EmbeddedBackend(tmp_path, linger=0)
    for recid in range(1, 23):
        backend.index([doc(recid)])  # one commit, one new segment each; the 22nd starts a merge of eight
    with open(tmp_path / LOCK, "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # given up once the writer is idle and its merges have ended
        meta = json.loads((tmp_path / (tmp_path / "CURRENT").read_text() / "meta.json").read_text())
    assert sum(s["max_doc"] for s in meta["segments"]) == 22
    assert len(meta["segments"]) <= 2  # a writer dropped during the last merge would leave eight
