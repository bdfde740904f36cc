"""The usage aggregation decides a batch in memory from the neighbours it reads once (repository.records.stats):
the same decisions, event for event, as asking the database about each event in turn (the per-event queries it
replaced, kept here as the reference), on streams that reach the table out of order and cross batch boundaries."""

from __future__ import annotations

import random
from collections import defaultdict
from datetime import datetime, timedelta

import pytest
from sqlalchemy import Connection, delete, exists, insert, select, update

from repository.records import stats
from repository.storage.tables.usage import usage_events, usage_totals

T0 = datetime(2026, 5, 4, 9, 0, 0)


def _reference_event(conn: Connection, event: dict, deltas: dict[int, list[int]]) -> None:
    """The per-event rules as queries, in the order the aggregation applies them."""
    e = usage_events.c
    total = stats._TOTAL[event["kind"]]
    clicks = (e.visitor == event["visitor"], e.recid == event["recid"], e.kind == event["kind"],
              e.file_key == event["file_key"], e.counted.is_not(None), e.id != event["id"])  # fmt: skip
    previous = conn.execute(select(e.created).where(*clicks, e.created <= event["created"])
                            .order_by(e.created.desc()).limit(1)).scalar()  # fmt: skip
    counted = previous is None or event["created"] - previous > stats.DOUBLE_CLICK
    following = conn.execute(select(e.id, e.created, e.counted, e.size).where(*clicks, e.created > event["created"])
                             .order_by(e.created, e.id).limit(1)).first()  # fmt: skip
    if following is not None and following.counted and following.created - event["created"] <= stats.DOUBLE_CLICK:
        conn.execute(update(usage_events).where(e.id == following.id).values(counted=False))
        for item in (event["recid"], event["conceptrecid"]):
            deltas[item][total] -= 1
            deltas[item][4] -= following.size if event["kind"] == stats.DOWNLOAD else 0
    for item, column in ((event["recid"], e.recid), (event["conceptrecid"], e.conceptrecid)):
        seen = exists().where(e.session == event["session"], column == item, e.kind == event["kind"],
                              e.counted.is_not(None))  # fmt: skip
        if not conn.execute(select(seen)).scalar():
            deltas[item][total + 1] += 1
        if counted:
            deltas[item][total] += 1
            deltas[item][4] += event["size"] if event["kind"] == stats.DOWNLOAD else 0
    conn.execute(update(usage_events).where(e.id == event["id"]).values(counted=counted))


def _reference_pass(db, batch: int) -> None:  # type: ignore[no-untyped-def]
    while True:
        with db.write() as conn:
            pending = conn.execute(select(usage_events).where(usage_events.c.counted.is_(None))
                                   .order_by(usage_events.c.created, usage_events.c.id).limit(batch)).mappings().all()
            deltas: dict[int, list[int]] = defaultdict(lambda: [0] * len(stats.COUNTS))
            for event in pending:
                _reference_event(conn, dict(event), deltas)
            t = usage_totals.c
            for item, delta in sorted(deltas.items()):
                if any(delta) and not conn.execute(update(usage_totals).where(t.id == item).values(
                        {name: t[name] + n for name, n in zip(stats.COUNTS, delta, strict=True)})).rowcount:
                    conn.execute(insert(usage_totals).values(id=item, **dict(zip(stats.COUNTS, delta, strict=True))))
        if len(pending) < batch:
            return


def _stream(seed: int) -> list[list[dict]]:
    """Events in the flushes that carry them to the table: each process's flush holds its own events in order, and
    flushes land late and interleaved. Few visitors, items and files, so that clicks meet within 30 s, sessions
    repeat and hours turn; distinct instants (the reference's order among equal instants is the database's)."""
    rng = random.Random(seed)
    instants = sorted(rng.sample(range(0, 3 * 3600 * 1000), 400))
    events = []
    for ms in instants:
        visitor = f"visitor-{rng.randrange(4)}"
        recid = rng.choice((101, 102, 103, 201))
        kind = rng.choice((stats.VIEW, stats.VIEW, stats.DOWNLOAD))
        created = T0 + timedelta(milliseconds=ms // 20 if rng.random() < 0.7 else ms)  # bursts of clicks
        events.append({"kind": kind, "recid": recid, "conceptrecid": 100 if recid < 200 else 200,
                       "file_key": rng.choice(("a.csv", "b.txt")) if kind == stats.DOWNLOAD else "",
                       "visitor": visitor, "session": f"{visitor}|{created:%H}", "created": created,
                       "size": rng.randrange(1, 10_000) if kind == stats.DOWNLOAD else 0, "counted": None})
    seen: set[datetime] = set()  # bursts may repeat an instant: a microsecond apart
    for event in events:
        while event["created"] in seen:
            event["created"] += timedelta(microseconds=1)
        seen.add(event["created"])
    processes: dict[int, list[dict]] = defaultdict(list)
    for event in sorted(events, key=lambda e: e["created"]):
        processes[rng.randrange(3)].append(event)
    flushes = []
    for own in processes.values():  # each event in exactly one flush (a flush swaps the buffer out whole)
        start = 0
        while start < len(own):
            size = rng.randrange(1, 40)
            flushes.append(own[start:start + size])
            start += size
    rng.shuffle(flushes)
    return flushes


def _run(db, flushes: list[list[dict]], aggregate) -> tuple[list[bool], dict[int, tuple]]:  # type: ignore[no-untyped-def]
    """Write the flushes, aggregating after every few; the decisions in the order written, and the totals."""
    with db.write() as conn:
        conn.execute(delete(usage_events))
        conn.execute(delete(usage_totals))
    for n, flush in enumerate(flushes):
        with db.write() as conn:
            conn.execute(insert(usage_events), [dict(event) for event in flush])
        if n % 3 == 2:
            aggregate()
    aggregate()
    with db.read() as conn:
        decided = [row.counted for row in conn.execute(select(usage_events.c.counted).order_by(usage_events.c.id))]
        totals = {row[0]: tuple(row[1:]) for row in conn.execute(
            select(usage_totals.c.id, *(usage_totals.c[name] for name in stats.COUNTS)))}
    return decided, totals


def test_streams_write_each_event_once_at_distinct_instants() -> None:
    """The comparison is only exact when no two events share an instant (the order among equal instants would be
    the database's) and none is written twice."""
    for seed in (1, 2, 3):
        events = [event for flush in _stream(seed) for event in flush]
        assert len(events) == 400
        assert len({event["created"] for event in events}) == 400


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_batched_decisions_are_the_per_event_ones(app, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    services = app.extensions["repository"]
    monkeypatch.setattr(stats, "BATCH", 13)  # many batches, each ending mid-burst
    flushes = _stream(seed)
    batched = _run(services.db, flushes, services.stats.on_pass)
    reference = _run(services.db, flushes, lambda: _reference_pass(services.db, 13))
    assert None not in batched[0]
    assert batched[0] == reference[0]  # every event's decision: counted, or another's double click
    assert batched[1] == reference[1]  # views, uniques, downloads, volume per version and concept
    assert sum(batched[0]) < len(batched[0])  # the stream had double clicks to filter
    assert any(total[1] < total[0] for total in batched[1].values())  # and sessions that repeat
