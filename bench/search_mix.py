"""Search mix under a publish stream (issue 19, target 1): what searches cost on a live instance, where every
publish, edit and take-down is an index commit.

The mix is generated from the corpus and replayable (seeded): a universe of distinct searches — keywords, title
words, two-word phrases from titles, filters (type, access right, community), sorts and page numbers — ranked by
popularity, and requests drawn from a Zipf distribution over that ranking whose exponent makes the 100 most
frequent searches MIX_TOP_SHARE of the requests (the rest a long tail). The load generator replays the drawn list in
order over 16 connections. Meanwhile a separate process publishes one record a second through the API, with an edit
now and then (every EDIT_EVERY-th action) and a take-down (every TAKEDOWN_EVERY-th, through `repository-admin
takedown`, as an operator does it). Reported: req/s as a ratio of the ceiling measured in the same run just before
and after, p50/p99, and the same mix on the quiet index, so the cost of the publish stream shows.

    python bench/bench.py --parts mix --records 30000 --instance bench-results/instance-30k
    python bench/search_mix.py --print-mix 20 --instance bench-results/instance-30k   # look at the mix
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import subprocess
import sys
import time
from collections import Counter
from typing import Any
from urllib.parse import urlencode

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MIX_TOP = 100
MIX_TOP_SHARE = 0.40
UNIVERSE = 20_000  # distinct searches
REQUESTS = 50_000  # drawn requests, replayed in order (wrk cycles through them)
EDIT_EVERY, TAKEDOWN_EVERY = 5, 20
WORD = re.compile(r"[^\W\d_]{4,}")
TYPES = ("dataset", "publication", "software", "image", "poster", "presentation", "video", "lesson")


def zipf_exponent(n: int, top: int = MIX_TOP, share: float = MIX_TOP_SHARE) -> float:
    """The exponent s for which ranks 1..top of a Zipf law over n ranks carry `share` of the mass (bisection)."""
    def top_share(s: float) -> float:
        weights = [r ** -s for r in range(1, n + 1)]
        return sum(weights[:top]) / sum(weights)

    low, high = 0.0, 3.0
    for _ in range(50):
        middle = (low + high) / 2
        low, high = (middle, high) if top_share(middle) < share else (low, middle)
    return (low + high) / 2


def corpus_terms(instance: str, sample: int = 5000) -> dict[str, list[str]]:
    """Keywords, title words, title phrases and communities of records spread over the corpus, most frequent
    first (their popularity in the mix follows their frequency in the corpus)."""
    from sqlalchemy import func, select

    from repository.config import Settings
    from repository.storage import open_database
    from repository.storage.engine import close_all
    from repository.storage.tables.records import records

    db = open_database(Settings.build(INSTANCE_PATH=instance).DATABASE_URL)
    with db.read() as conn:
        count = conn.execute(select(func.count()).select_from(records)).scalar_one()
        rows = conn.execute(select(records.c.metadata).where(
            records.c.deleted.is_(None), records.c.id % max(1, count // sample) == 0).limit(sample)).scalars()
        keywords, words, phrases, communities = Counter(), Counter(), Counter(), Counter()  # type: ignore[var-annotated]
        for metadata in rows:
            keywords.update(k for k in metadata.get("keywords") or [] if " " not in k and '"' not in k)
            title = [w.lower() for w in WORD.findall(metadata.get("title") or "")]
            words.update(title)
            phrases.update(f"{a} {b}" for a, b in zip(title, title[1:], strict=False))
            communities.update(c.get("identifier") or c.get("id") for c in metadata.get("communities") or [])
    close_all()
    return {"keywords": [k for k, _ in keywords.most_common()], "words": [w for w, _ in words.most_common()],
            "phrases": [p for p, n in phrases.most_common() if n > 1],
            "communities": [c for c, _ in communities.most_common()]}


def _pick(rng: random.Random, ranked: list[str]) -> str:
    """A term, frequent ones more often (rank r with weight 1/r)."""
    return ranked[min(len(ranked) - 1, int(math.exp(rng.random() * math.log(len(ranked) + 1))) - 1)]


def search_universe(terms: dict[str, list[str]], size: int, seed: int) -> list[str]:
    """Distinct search paths in order of popularity: the default listing first, then generated ones."""
    rng = random.Random(seed)
    seen: dict[str, None] = {"/api/records/": None}
    attempts = 0
    while len(seen) < size and attempts < size * 20:
        attempts += 1
        params: dict[str, str] = {}
        kind = rng.random()
        if kind < 0.30 and terms["keywords"]:
            params["q"] = f'keywords:"{_pick(rng, terms["keywords"])}"' if rng.random() < 0.3 else \
                _pick(rng, terms["keywords"])
        elif kind < 0.65 and terms["words"]:
            params["q"] = _pick(rng, terms["words"])
        elif kind < 0.80 and terms["phrases"]:
            params["q"] = f'"{_pick(rng, terms["phrases"])}"'
        elif kind < 0.85 and terms["words"]:
            params["q"] = f"{_pick(rng, terms['words'])} {_pick(rng, terms['words'])}"
        # else: browsing, no query
        if rng.random() < 0.20:
            params["type"] = rng.choice(TYPES)
        if rng.random() < 0.10:
            params["access_right"] = "open"
        if rng.random() < 0.05 and terms["communities"]:
            params["communities"] = _pick(rng, terms["communities"])
        roll = rng.random()
        if roll < 0.15:
            params["sort"] = "mostrecent"
        elif roll < 0.20:
            params["sort"] = "-publication_date"
        elif roll < 0.23:
            params["sort"] = "mostviewed"
        if rng.random() < 0.15:
            params["page"] = str(rng.choice((2, 2, 2, 3, 3, 4, 5, 10)))
        seen["/api/records/" + ("?" + urlencode(params) if params else "")] = None
    return list(seen)


def draw(universe: list[str], count: int, seed: int) -> list[str]:
    """`count` requests drawn from the Zipf law over the universe's ranks, in a replayable order."""
    s = zipf_exponent(len(universe))
    rng = random.Random(seed)
    return rng.choices(universe, weights=[r ** -s for r in range(1, len(universe) + 1)], k=count)


def build_mix(instance: str, seed: int = 19, universe: int = UNIVERSE, requests: int = REQUESTS) -> dict[str, Any]:
    """The mix and what it is made of."""
    paths = draw(search_universe(corpus_terms(instance), universe, seed), requests, seed)
    counts = Counter(paths)
    top = sum(n for _, n in counts.most_common(MIX_TOP)) / len(paths)
    return {"paths": paths, "distinct": len(counts), "top100_share": round(top, 3), "requests": len(paths),
            "seed": seed}


# --- the publish stream (its own process) ----------------------------------------------------------------------------
def publish_stream(spec: dict[str, Any]) -> dict[str, Any]:
    """One action a second until `spec["seconds"]` pass: publish a new record (words from the corpus, so popular
    searches are touched), every EDIT_EVERY-th an edit of one published here, every TAKEDOWN_EVERY-th a take-down."""
    import requests

    session = requests.Session()
    session.verify = spec["cafile"]
    session.trust_env = False
    session.headers["Authorization"] = f"Bearer {spec['token']}"
    base, words = spec["base"], spec["words"] or ["data"]
    rng = random.Random(spec.get("seed", 7))
    published: list[dict[str, Any]] = []
    done: Counter[str] = Counter()
    latencies: list[float] = []
    errors: list[str] = []
    deadline = time.monotonic() + spec["seconds"]
    tick = 0

    def local(url: str) -> str:
        return base + url[len(spec["public"]):] if url.startswith(spec["public"]) else url

    def publish(deposit: dict[str, Any]) -> dict[str, Any]:
        response = session.post(local(deposit["links"]["publish"]), timeout=60)
        response.raise_for_status()
        return response.json()

    while time.monotonic() < deadline:
        started = time.monotonic()
        tick += 1
        title = " ".join(rng.choice(words[:200]) for _ in range(4))
        try:
            if tick % TAKEDOWN_EVERY == 0 and published:
                victim = published.pop(rng.randrange(len(published)))
                env = {**os.environ, "INSTANCE_PATH": spec["instance"], "BASE_URL": spec["public"],
                       "BACKGROUND_WORKER": "false", "LOG_LEVEL": "warning", "SECRET_KEY": "bench-secret"}
                env.pop("DATABASE_URL", None)
                env.pop("SEARCH_URL", None)
                subprocess.run([sys.executable, "-m", "repository", "takedown", "--recid", str(victim["record_id"])],
                               cwd=ROOT, env=env, check=True, capture_output=True, timeout=120)
                kind = "takedown"
            elif tick % EDIT_EVERY == 0 and published:
                record = published[rng.randrange(len(published))]
                url = local(record["links"]["self"])
                edited = session.post(url + "/actions/edit", timeout=60)
                edited.raise_for_status()
                metadata = {**edited.json()["metadata"], "title": f"{title} (revised)"}
                session.put(url, json={"metadata": metadata}, timeout=60).raise_for_status()
                publish(edited.json())
                kind = "edit"
            else:
                deposit = session.post(base + "/api/deposit/depositions", timeout=60, json={"metadata": {
                    "title": title, "upload_type": "dataset", "description": f"<p>{title}.</p>",
                    "keywords": rng.sample(words[:50], 2), "creators": [{"name": "Stream, Publish"}]}})
                deposit.raise_for_status()
                body = deposit.json()
                session.put(local(body["links"]["bucket"]) + "/data.csv", data=title.encode(),
                            timeout=60).raise_for_status()
                published.append(publish(body))
                kind = "publish"
            done[kind] += 1
            latencies.append((time.monotonic() - started) * 1000)
        except Exception as exc:  # noqa: BLE001 - counted and reported; the stream goes on
            errors.append(f"{type(exc).__name__}: {exc}"[:200])
        time.sleep(max(0.0, 1.0 - (time.monotonic() - started)))
    session.close()
    latencies.sort()
    return {"actions": dict(done), "errors": len(errors), "first_errors": errors[:3],
            "action_ms_median": latencies[len(latencies) // 2] if latencies else None,
            "action_ms_max": latencies[-1] if latencies else None}


class PublishStream:
    """`publish_stream` in a subprocess for the duration of a `with` block (started a second before it)."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec

    def __enter__(self) -> PublishStream:
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--publish", json.dumps(self.spec)],
                                     cwd=ROOT, stdout=subprocess.PIPE, text=True)
        time.sleep(1.0)
        return self

    def __exit__(self, *exc: object) -> None:
        out, _ = self.proc.communicate(timeout=self.spec["seconds"] + 180)
        self.report = json.loads(out) if out.strip() else {"error": f"exit status {self.proc.returncode}"}


def _rss_mb(pids: list[int], key: str = "VmRSS") -> list[float]:
    """Each worker's resident (or, with VmHWM, peak) memory: the result cache must keep a worker's memory bounded."""
    sizes = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as handle:
                kb = next((int(line.split()[1]) for line in handle if line.startswith(key + ":")), 0)
        except OSError:  # a worker that was restarted meanwhile
            continue
        sizes.append(round(kb / 1024, 1))
    return sizes


def measure(bench: Any, server: Any, token: str, public: str) -> dict[str, Any]:
    """Ceiling, the mix on a quiet index, ceiling, the mix under the publish stream, ceiling (bench.Bench drives
    the load; a warm-up pass of the mix first, not reported). `public` is the BASE_URL the corpus was loaded with."""
    mix = build_mix(bench.args.instance, requests=5_000 if bench.args.quick else REQUESTS)
    paths = mix.pop("paths")
    terms = corpus_terms(bench.args.instance, 1000)
    for _ in range(1 if bench.args.quick else 3):  # warm-up: the caches hold what a running instance's would, and
        bench.load(server, paths)  # each worker's start-up sweep of the file store is over
    workers = server.workers()
    memory: dict[str, Any] = {"after_warmup_rss_mb": _rss_mb(workers)}
    ceilings = [bench.load(server, ["/api/_ceiling"])]
    quiet = bench.load(server, paths)
    memory["after_quiet_rss_mb"] = _rss_mb(workers)
    ceilings.append(bench.load(server, ["/api/_ceiling"]))
    # The stream's words go on its command line: the most frequent only (it draws from the first 200).
    spec = {"base": server.base, "public": public, "cafile": server.cert, "token": token,
            "instance": bench.args.instance, "seconds": bench.args.seconds + 1, "words": terms["words"][:500]}
    with PublishStream(spec) as stream:
        busy = bench.load(server, paths)
    memory["after_publishing_rss_mb"] = _rss_mb(workers)
    memory["peak_rss_mb"] = _rss_mb(workers, "VmHWM")
    ceilings.append(bench.load(server, ["/api/_ceiling"]))

    def row(result: dict[str, Any], before: float, after: float) -> dict[str, Any]:
        ceiling = (before + after) / 2
        return {**result, "ceiling_rps": ceiling, "ratio": result["rps"] / ceiling if ceiling else None}

    rps = [c["rps"] for c in ceilings]
    out = {"mix": mix, "ceiling_runs": [round(r, 1) for r in rps], "quiet": row(quiet, rps[0], rps[1]),
           "publishing": row(busy, rps[1], rps[2]), "stream": stream.report, "worker_memory": memory}
    for name in ("quiet", "publishing"):
        r = out[name]
        print(f"  mix {name:<10} {r['rps']:>9.1f} req/s  ratio {r['ratio'] or 0:.2f}  p50 {r['p50_ms'] or 0:.2f} ms  "
              f"p99 {r['p99_ms'] or 0:.2f} ms", file=sys.stderr, flush=True)
    print(f"  publish stream: {stream.report}", file=sys.stderr, flush=True)
    print(f"  worker memory (MB, per worker): {memory}", file=sys.stderr, flush=True)
    return out


def summary(m: dict[str, Any]) -> str:
    """One line for the benchmark's table."""
    return (f"search mix ({m['mix']['distinct']} distinct searches, top 100 {m['mix']['top100_share']:.0%} of "
            f"{m['mix']['requests']}): quiet {m['quiet']['rps']:.0f} req/s (ratio {m['quiet']['ratio']:.2f}, p99 "
            f"{m['quiet']['p99_ms'] or 0:.1f} ms); under a publish stream {m['publishing']['rps']:.0f} req/s "
            f"(ratio {m['publishing']['ratio']:.2f}, p99 {m['publishing']['p99_ms'] or 0:.1f} ms); stream "
            f"{m['stream'].get('actions')} errors {m['stream'].get('errors')}")


def replay_in_process(instance: str, requests: int = 3000, every: int = 100, seed: int = 19,
                      rounds: int = 2) -> dict[str, Any]:
    """The mix replayed in one process against the instance's index, with a commit every `every` searches (a
    publish of a new record; every EDIT_EVERY-th an edit of one published here, every TAKEDOWN_EVERY-th a take-down),
    with the cache as it is (answers brought up to date by each commit, facet counts moved by delta: `kept`), with
    touched facet counts dropped rather than moved (`no-delta`) and with every answer dropped at each commit
    (`dropped`), the three alternated `rounds` times so drift hits each. Per mode:
    CPU ms of search per request, and per commit the cache's upkeep (ms) and what became of its entries. No server,
    no TLS, no other process: the difference between the modes is the cache's alone. The records written here are
    deleted from the index at the end (they are not in the database)."""
    from urllib.parse import parse_qsl, urlsplit

    from werkzeug.datastructures import MultiDict

    from repository.config import Settings
    from repository.search.documents import to_index_document
    from repository.search.embedded.engine import EmbeddedBackend
    from repository.search.open import open_from_settings
    from repository.search.params import parse_search_args

    settings = Settings.build(INSTANCE_PATH=instance)
    paths = build_mix(instance, seed=seed, requests=requests)["paths"]
    words = corpus_terms(instance, 1000)["words"][:200]
    parsed = [parse_search_args(MultiDict(parse_qsl(urlsplit(p).query))) for p in paths]
    out: dict[str, Any] = {"requests": requests, "commit_every": every, "rounds": []}
    for mode in ("kept", "no-delta", "dropped") * rounds:
        rng = random.Random(seed)
        backend = open_from_settings(settings)
        assert isinstance(backend, EmbeddedBackend)
        if mode == "dropped":
            backend.results._touched = None
        elif mode == "no-delta":  # touched facet counts dropped, as before facet_delta
            backend.results._values = None
        template = backend.search(parsed[0]).hits[0]
        written: list[int] = []
        searching = 0.0
        upkeep = []
        for position, req in enumerate(parsed):
            if position and position % every == 0:
                commit = position // every
                title = " ".join(rng.choice(words) for _ in range(4))
                if commit % TAKEDOWN_EVERY == 0 and written:
                    backend.delete([written.pop(rng.randrange(len(written)))])
                else:
                    if commit % EDIT_EVERY == 0 and written:
                        recid, revision = rng.choice(written), 2
                    else:
                        recid, revision = 90_000_000 + 2 * rng.randrange(5_000_000), 1
                        written.append(recid)
                    record = {**template, "id": recid, "revision": revision,
                              "metadata": {**template["metadata"], "title": title}}
                    backend.index([to_index_document(record)])
            before = backend.results.upkeep
            begun = time.process_time()
            backend.search(req)
            searching += time.process_time() - begun
            if backend.results.upkeep != before:
                upkeep.append(backend.results.upkeep - before)
        cache = backend.results
        states = cache.counts["states"] or 1
        out["rounds"].append({
            "mode": mode, "search_cpu_ms_per_request": round(searching / requests * 1000, 3),
            "commits": cache.counts["states"],
            "upkeep_ms_per_commit": round(cache.upkeep * 1000 / states, 2),
            "upkeep_cpu_ms_per_commit": round(cache.upkeep_cpu * 1000 / states, 2),
            "upkeep_ms_max": round(max(upkeep, default=0.0) * 1000, 2),
            "facets_computed": cache.aggregated, "facets_ms": round(cache.aggregating * 1000),
            "per_commit": {reason: round(n / states, 1) for reason, n in sorted(cache.counts.items())
                           if reason != "states"}})
        backend.delete(written)
        backend._lease.end()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--publish", help=argparse.SUPPRESS)
    parser.add_argument("--instance", help="print the mix generated from this instance's corpus")
    parser.add_argument("--print-mix", type=int, default=20, help="how many of the most frequent searches to print")
    parser.add_argument("--in-process", type=int, default=0, metavar="N",
                        help="replay N requests of the mix in this process with a commit every --every (writes to "
                             "the instance's index, then deletes what it wrote): search CPU ms per request, cache "
                             "upkeep and entries kept vs dropped at each commit")
    parser.add_argument("--every", type=int, default=100, help="searches between commits (--in-process)")
    args = parser.parse_args(argv)
    if args.publish:
        print(json.dumps(publish_stream(json.loads(args.publish))))
        return 0
    if not args.instance:
        parser.error("--instance is required")
    if args.in_process:
        print(json.dumps(replay_in_process(os.path.abspath(args.instance), args.in_process, args.every), indent=1))
        return 0
    mix = build_mix(os.path.abspath(args.instance))
    print(f"{mix['requests']} requests, {mix['distinct']} distinct, top {MIX_TOP}: {mix['top100_share']:.0%}")
    for path, count in Counter(mix["paths"]).most_common(args.print_mix):
        print(f"{count:>6}  {path}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, ROOT)
    sys.exit(main())
