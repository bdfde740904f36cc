"""Every answer the service gives about some records, to compare before and after a change of how they are stored."""

from __future__ import annotations

import re

RECORD_FORMATS = ("application/json", "application/x-bibtex", "application/x-datacite+xml",
                  "application/marcxml+xml", "application/ld+json")  # fmt: skip


def answers(client, auth: dict, recids: list[int]) -> dict[str, bytes]:  # type: ignore[no-untyped-def]
    """Every answer about `recids`, keyed by request (OAI's responseDate left out: it is the time of asking)."""
    found = {}

    def keep(path: str, headers: dict | None = None) -> None:
        response = client.get(path, headers=headers or {})
        assert response.status_code == 200, (path, response.status_code)
        found[f"{path} {headers}"] = re.sub(rb"<responseDate>[^<]*</responseDate>", b"", response.data)

    for recid in recids:
        for accept in RECORD_FORMATS:
            keep(f"/api/records/{recid}", {"Accept": accept})
        for prefix in ("oai_dc", "oai_registry", "marcxml"):
            keep(f"/oai2d?verb=GetRecord&metadataPrefix={prefix}&identifier=oai:localhost:{recid}")
        keep(f"/api/deposit/depositions/{recid}", auth)
    for prefix in ("oai_dc", "oai_registry"):
        keep(f"/oai2d?verb=ListRecords&metadataPrefix={prefix}")
    keep("/oai2d?verb=ListIdentifiers&metadataPrefix=oai_dc&set=type-dataset")  # a set selected by type, in SQL
    keep("/api/records?q=&sort=mostrecent&size=20")
    keep("/api/records?q=packed")
    return found
