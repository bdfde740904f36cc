"""Generated records for the community validators: the benchmark corpus's metadata generator (bench/generate_corpus.py:
realistic names, scripts, identifiers, licenses, access rights) made into v1 records of a given type, with files
whose bytes are kept so that a packaged RO-Crate can hold them."""

from __future__ import annotations

import hashlib
import random
from typing import Any
from urllib.parse import quote

from reference_records import BASE, make_record

from bench.generate_corpus import Corpus
from repository.metadata import to_record_metadata

COLUMNS = ("country", "year", "value", "indicator", "source", "unit", "notes")


class _Lookups:
    """Vocabularies as the generator's ids are: every license id known as given, no grant found."""

    def license_id(self, value: str) -> str | None:
        return value

    def grant(self, funder_doi: str, code: str) -> dict[str, Any] | None:
        return None

    def community_exists(self, identifier: str) -> bool:
        return True


def generated(kind: str, count: int, seed: int = 44) -> list[tuple[dict[str, Any], dict[str, bytes]]]:
    """`count` (record, file key -> bytes) pairs of upload type `kind`, the same for the same seed. A CSV file of a
    dataset is given the columns of a tabular descriptor, as the view does for a described one."""
    corpus = Corpus(seed=seed)
    found: list[tuple[dict[str, Any], dict[str, bytes]]] = []
    attempt = 0
    while len(found) < count:
        attempt += 1
        rng = random.Random(f"{seed}-{kind}-{attempt}")
        meta = corpus.metadata(rng)
        if meta["upload_type"] != kind:
            continue
        recid = 5000 + attempt
        contents = dict(corpus._files(rng, kind, 0))  # noqa: SLF001 - the corpus's own file maker
        bucket = f"b0c1d2e3-0000-4000-8000-{recid:012d}"
        files = [{"id": f"00000000-0000-4000-8000-{recid:08d}{index:04d}", "bucket": bucket,
                  "checksum": f"md5:{hashlib.md5(data).hexdigest()}", "key": key, "size": len(data),  # noqa: S324
                  "type": key.rsplit(".", 1)[-1].lower(), "sha256": hashlib.sha256(data).hexdigest(),
                  "links": {"self": f"{BASE}/api/files/{bucket}/{quote(key)}"}}
                 for index, (key, data) in enumerate(contents.items())]
        for item in files:
            if item["key"].endswith(".csv"):
                item["fields"] = [{"name": name, "type": "integer" if name == "year" else "string"}
                                  for name in COLUMNS]
        metadata = to_record_metadata(meta, _Lookups())
        visible = metadata["access_right"] in ("open",)  # closed, embargoed and restricted: no files shown
        found.append((make_record(recid, metadata, files=files if visible else None),
                      contents if visible else {}))
    return found
