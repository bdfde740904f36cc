"""The deposition representation (specification's Deposition table; docs/reference-behaviour.md#deposition-representation for the shapes clients rely on).

Everything needed for a list of depositions is fetched in a few queries, then each is rendered once.
"""

from __future__ import annotations

from sqlalchemy import Connection, select

from repository import urls
from repository.config import Settings
from repository.deposits import pids
from repository.files import buckets
from repository.metadata import METADATA_KEYS
from repository.storage.tables.deposits import deposit_select, deposits
from repository.storage.tables.records import concepts, records
from repository.timeutil import isoformat
from serializers.jsonformats import specification_people


def file_json(base: str, dep_id: int, bucket_id: str, obj: buckets.ObjectRow) -> dict:
    """A file of the old files interface: bare MD5 hex, links self (no query string) and download."""
    return {
        "id": obj["file_id"],
        "filename": obj["key"],
        "filesize": obj["size"],
        "checksum": obj["checksum"].removeprefix("md5:"),
        "links": {
            "self": urls.deposit_file_api(base, dep_id, obj["file_id"]),
            "download": urls.bucket_object(base, bucket_id, obj["key"]),
        },
    }


def object_json(base: str, bucket_id: str, obj: buckets.ObjectRow) -> dict:
    """A bucket file object (the specification's Bucket file table)."""
    url = urls.bucket_object(base, bucket_id, obj["key"])
    return {
        "key": obj["key"],
        "mimetype": obj["mimetype"],
        "checksum": obj["checksum"],
        "checksums": buckets.file_checksums(obj),
        "version_id": obj["version_id"],
        "size": obj["size"],
        "created": isoformat(obj["created"]),
        "updated": isoformat(obj["updated"]),
        "links": {"self": url, "version": f"{url}?versionId={obj['version_id']}", "uploads": f"{url}?uploads"},
        "is_head": True,
        "delete_marker": False,
    }


def _concept_facts(conn: Connection, concept_ids: set[int]) -> dict[int, dict]:
    """Per concept: its DOI, its latest published version and its unpublished draft, if any."""
    facts = {c: {"conceptdoi": None, "latest": None, "draft": None} for c in concept_ids}
    if not concept_ids:
        return facts
    for row in conn.execute(select(concepts.c.id, concepts.c.conceptdoi).where(concepts.c.id.in_(concept_ids))):
        facts[row.id]["conceptdoi"] = row.conceptdoi
    published = select(records.c.conceptrecid, records.c.id).where(
        records.c.conceptrecid.in_(concept_ids), records.c.deleted.is_(None)
    )
    for row in conn.execute(published):
        latest = facts[row.conceptrecid]["latest"]
        facts[row.conceptrecid]["latest"] = max(latest or 0, row.id)
    drafts = select(deposits.c.conceptrecid, deposits.c.id).where(
        deposits.c.conceptrecid.in_(concept_ids), deposits.c.status == "draft"
    )
    for row in conn.execute(drafts):
        facts[row.conceptrecid]["draft"] = row.id
    return facts


def render_many(conn: Connection, settings: Settings, rows: list[dict], form: bool = False) -> list[dict]:
    """Depositions as the API shows them, in the order given; `form`: for the deposit form, with the metadata it
    keeps beyond the specification's keys (people's affiliation ids)."""
    facts = _concept_facts(conn, {r["conceptrecid"] for r in rows})
    objects = buckets.objects_of_buckets(conn, [r["bucket_id"] for r in rows])
    rendered = [_render(settings, row, facts[row["conceptrecid"]], objects[row["bucket_id"]]) for row in rows]
    if not form:
        for deposition in rendered:
            deposition["metadata"] = specification_people(deposition["metadata"])
    return rendered


def render(conn: Connection, settings: Settings, dep_id: int, form: bool = False) -> dict:
    row = conn.execute(deposit_select().where(deposits.c.id == dep_id)).mappings().one()
    return render_many(conn, settings, [dict(row)], form)[0]


def _state(row: dict) -> tuple[str, bool]:
    if row["status"] == "published":
        return ("inprogress" if row["editing"] else "done"), True
    return "unsubmitted", False


def _render(settings: Settings, row: dict, facts: dict, objs: list[buckets.ObjectRow]) -> dict:
    base = settings.BASE_URL
    dep_id = row["id"]
    state, submitted = _state(row)
    metadata = {k: v for k, v in row["metadata"].items() if k in METADATA_KEYS}
    own_doi = pids.own_doi(settings, row)
    if submitted:
        metadata["doi"] = row["doi"]
    if row["prereserved"] or (not submitted and row["doi"] == own_doi and facts["latest"]):
        metadata["prereserve_doi"] = {"doi": own_doi, "recid": dep_id}
    draft = facts["draft"] or dep_id
    links = {
        "self": urls.deposit_api(base, dep_id),
        "html": urls.deposit_html(base, dep_id),
        "files": urls.deposit_files_api(base, dep_id),
        "bucket": urls.bucket(base, row["bucket_id"]),
        "publish": urls.deposit_action_api(base, dep_id, "publish"),
        "edit": urls.deposit_action_api(base, dep_id, "edit"),
        "discard": urls.deposit_action_api(base, dep_id, "discard"),
        "newversion": urls.deposit_action_api(base, dep_id, "newversion"),
        "latest_draft": urls.deposit_api(base, draft),
        "latest_draft_html": urls.deposit_html(base, draft),
    }
    body = {
        "id": dep_id,
        "conceptrecid": str(row["conceptrecid"]),
        "created": isoformat(row["created"]),
        "modified": isoformat(row["modified"]),
        "owner": row["owner_id"],
        "state": state,
        "submitted": submitted,
        "title": metadata.get("title", ""),
        "metadata": metadata,
        "files": [file_json(base, dep_id, row["bucket_id"], o) for o in objs],
        "links": links,
    }
    if submitted:
        body.update(
            doi=row["doi"],
            doi_url=urls.doi(row["doi"]),
            record_id=dep_id,
            record_url=urls.record_api(base, dep_id),
        )
        links.update(record=body["record_url"], record_html=urls.record_html(base, dep_id), doi=body["doi_url"])
    if facts["conceptdoi"] and facts["latest"]:
        body["conceptdoi"] = facts["conceptdoi"]
        links["conceptdoi"] = urls.doi(facts["conceptdoi"])
    if facts["latest"]:
        links["latest"] = urls.record_api(base, facts["latest"])
        links["latest_html"] = urls.record_html(base, facts["latest"])
    return body
