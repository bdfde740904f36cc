#!/usr/bin/env python
"""Grow a generated SQLite instance to N records for the export benchmark by copying its records under new ids.

    python bench/grow_instance.py --source /work/inst-20k --target /work/inst-1m --records 1000000

bench/generate_corpus.py builds and indexes every record (tens of records a second on a shared two-core machine: a
million takes hours), while the export only reads records rows, their stored copies (`built_records`), their stored
renditions and the usage totals. This copies those rows of the source instance, copy after copy, each copy's ids
(record, concept, DOI) shifted past the ids of the copies before it, until the target holds `--records` records;
the stored copies and renditions are the source's bytes (their digests still match: every copy is current), so the
export does per record what it does on the source. The index folder is copied as it is (the export asks it only for
its engine's name); files, deposits, users and index documents are not copied. The JSON inside a copied record still
names its source record's id: the target is for measuring, not for serving.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import sys
import time

# Tables copied per copy, and the columns whose ids are shifted (every other column is copied as it is).
SHIFTED = {"recids": ("id",), "concepts": ("id",), "records": ("id", "conceptrecid"),
           "built_records": ("record_id",), "renditions": ("record_id",), "usage_totals": ("id",)}


def columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


def grow(source: str, target: str, records: int) -> dict:
    """Copy `source` (an instance folder) to `target` and add copies of its records until `records`; returns what
    was done."""
    if os.path.exists(target):
        raise SystemExit(f"{target} exists: give a new folder")
    os.makedirs(target)
    shutil.copytree(os.path.join(source, "index"), os.path.join(target, "index"))
    started = time.perf_counter()
    shutil.copyfile(os.path.join(source, "repository.db"), os.path.join(target, "repository.db"))
    conn = sqlite3.connect(os.path.join(target, "repository.db"), isolation_level=None)
    conn.execute("PRAGMA journal_mode=OFF")
    conn.execute("PRAGMA synchronous=OFF")
    base = conn.execute("SELECT count(*) FROM records").fetchone()[0]
    span = conn.execute("SELECT max(id) FROM recids").fetchone()[0]
    copies = 0
    while base * (copies + 1) < records:
        copies += 1
        shift = span * copies
        wanted = min(base, records - base * copies)
        last = conn.execute("SELECT id FROM records ORDER BY id LIMIT 1 OFFSET ?", (wanted - 1,)).fetchone()[0]
        conn.execute("BEGIN")
        for table, shifted in SHIFTED.items():
            names = columns(conn, table)
            values = []
            for name in names:
                if name in shifted:
                    values.append(f"{name} + {shift}")
                elif table == "records" and name == "doi":
                    values.append(f"doi || '.{copies}'")
                elif table == "concepts" and name == "conceptdoi":
                    values.append(f"conceptdoi || '.{copies}'")
                else:
                    values.append(name)
            key = shifted[0]
            # a copy stops at the `wanted`-th record; concepts and recids up to the same id
            conn.execute(f"INSERT INTO {table} ({', '.join(names)}) SELECT {', '.join(values)} FROM {table} "
                         f"WHERE {key} <= ? ", (last,))
        conn.execute("COMMIT")
        total = conn.execute("SELECT count(*) FROM records").fetchone()[0]
        print(f"copy {copies}: {total} records ({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)
    total = conn.execute("SELECT count(*) FROM records").fetchone()[0]
    conn.close()
    return {"source": source, "source_records": base, "copies": copies, "records": total,
            "seconds": round(time.perf_counter() - started, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", required=True, help="an instance of bench/generate_corpus.py (SQLite)")
    parser.add_argument("--target", required=True, help="a new folder")
    parser.add_argument("--records", type=int, required=True)
    args = parser.parse_args(argv)
    print(grow(args.source, args.target, args.records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
