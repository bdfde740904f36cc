"""The deposition state machine: create, update, delete, publish, edit, discard, newversion.

Every function runs inside the caller's write transaction (`db.write()`), so an action fully happens or not at
all; rows are locked (`FOR UPDATE` on PostgreSQL, `BEGIN IMMEDIATE` on SQLite) before state is checked, so two
simultaneous publishes or newversions give one result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, delete, func, insert, select, update

from repository import outbox
from repository.accounts import audit
from repository.communities import inclusions, notifications
from repository.config import Settings
from repository.datadesc import checks
from repository.deposits import filefix, pids
from repository.errors import BadRequest, Conflict, Forbidden, Gone, NotFound, ValidationError, field_error
from repository.files import buckets, multipart
from repository.files.store import FileStore
from repository.metadata import DoiPolicy, MetadataLookups, validate_draft, validate_for_publish
from repository.records import review, screening
from repository.records.access import access_columns
from repository.records.build import get_record_row, touch_versions
from repository.storage.tables.deposits import deposit_form_states, deposit_select, deposits
from repository.storage.tables.records import concepts, records
from repository.timeutil import utcnow
from repository.vocabularies.resource_types import type_columns


@dataclass(frozen=True)
class Context:
    """What deposit actions need besides the connection."""

    settings: Settings
    lookups: MetadataLookups
    # Releases the files a version fixed in place no longer names (docs/researchers/corrections.md#fixing-files).
    store: FileStore | None = None
    # Imports publish metadata-only records whatever METADATA_ONLY_DEPOSITS says (docs/operators/migration.md).
    metadata_only: bool = False


def get_deposit(conn: Connection, dep_id: int, owner_id: int, lock: bool = False) -> dict:
    """The caller's deposition; NotFound for anyone else's (existence stays hidden)."""
    query = deposit_select().where(deposits.c.id == dep_id)
    if lock:
        query = query.with_for_update(of=deposits)
    row = conn.execute(query).mappings().first()
    if row is None or row["owner_id"] != owner_id:
        raise NotFound("Deposition not found.")
    return dict(row)


def _doi_policy(ctx: Context, dep: dict) -> DoiPolicy:
    """Which DOIs this deposit may take: its reserved one or an external one, or only the one it has."""
    own = pids.own_doi(ctx.settings, dep)
    locked = None
    if dep["status"] == "published" and not dep["doi_external"]:
        locked = dep["doi"]
    elif dep.get("version_draft"):
        locked = own
    return DoiPolicy(
        prefix=ctx.settings.doi_prefix, reserved=own, locked=locked, test_prefix=ctx.settings.SANDBOX_DOI_PREFIX
    )


def _apply_doi(conn: Connection, ctx: Context, dep: dict, metadata: dict, given: Any) -> dict[str, Any]:
    """The deposit's DOI columns after `metadata` was validated; an external DOI must not be taken already."""
    own = pids.own_doi(ctx.settings, dep)
    doi = metadata.get("doi")
    if doi is None or doi.lower() == own.lower():
        if dep.get("doi_external") and dep["status"] == "published" and isinstance(given, dict) and "doi" in given:
            raise ValidationError(errors=[field_error("metadata.doi", "An external DOI cannot be emptied.")])
        if dep.get("doi_external") and dep["status"] == "published":
            metadata["doi"] = dep["doi"]
            return {"doi": dep["doi"], "doi_external": True}
        metadata.pop("doi", None)
        return {"doi": own, "doi_external": False}
    if pids.doi_taken(conn, doi, dep["id"]):
        raise _doi_exists()
    return {"doi": doi.lower(), "doi_external": True}


class OneByOne(Exception):
    """A new record only `create` and `publish` themselves can make (see `new_publication`)."""


def _doi_exists() -> ValidationError:
    return ValidationError(errors=[field_error("metadata.doi", "DOI already exists in this repository.")])


def new_publication(ctx: Context, given: Any, taken: Callable[[str], bool]) -> dict:
    """The metadata `create` then `publish` would publish for a new metadata-only draft made of `given` whose DOI is
    external (`taken`: whether a DOI is used already), checked by the same rules in the same order, writing nothing
    (a bulk import's batch, docs/operators/migration.md#bulk-writes). ValidationError as they would raise it;
    OneByOne for what only they can decide: a DOI under this service's prefix or none, files, communities, and
    moderation rules that depend on the order of publications."""
    if ctx.settings.MODERATE_FIRST_DEPOSITS or ctx.settings.MODERATION_BURST_RECORDS:
        raise OneByOne("moderation rules that depend on the order of publications")
    if _wants_reservation(given):
        raise OneByOne("a DOI to reserve")
    # A new draft's DOI policy, the same at `create` and at its first `publish`.
    policy = _doi_policy(ctx, {"id": 0, "status": "draft", "doi_external": False, "doi": None})
    # One pass of the metadata rules where `create` and `publish` make two: metadata the publish rules take pass the
    # draft rules (the same rules, less the required fields and defaults), and come out the same whether the draft
    # rules normalised them first or not (what a rule leaves, it leaves unchanged). Metadata they refuse take both
    # passes below, so that the errors reported are those of the first pass that refuses them, as one by one.
    try:
        published: dict | None = validate_for_publish(given, ctx.lookups, doi_policy=policy)
    except ValidationError:
        published = None
    draft = published if published is not None else validate_draft(given, ctx.lookups, doi_policy=policy)
    doi = draft.get("doi")
    if doi is None or doi.lower().startswith(f"{ctx.settings.doi_prefix}/".lower()):
        raise OneByOne("a DOI of this service's, or none")
    if taken(doi):
        raise _doi_exists()
    errors: list[dict] = []
    if published is None:
        try:
            published = validate_for_publish(draft, ctx.lookups, doi_policy=policy)
        except ValidationError as exc:
            errors.extend(exc.errors)
    metadata = published or {}
    if files_enabled(metadata or draft or {}):
        raise OneByOne("a record with files")
    errors.extend(_metadata_only_errors(ctx, []))
    if errors:
        raise ValidationError(errors=errors)
    if metadata.get("communities"):
        raise OneByOne("a record that asks communities")
    return metadata


def published_in_bulk(conn: Connection, ctx: Context, owner_id: int, published: Sequence[tuple[int, str, dict]]) -> None:
    """What `publish` does after writing the first version of a new concept, for the records (id, DOI, metadata) a
    batch wrote from `new_publication`'s metadata, in their order: the audit entry, then the moderation rules."""
    audit.record_many(conn, audit.owner(conn, owner_id), "deposit.publish", "record",
                      [(recid, {"doi": doi.lower()}) for recid, doi, _metadata in published])
    if published and screening.order_free_rules(conn, ctx.settings):  # `new_publication` left out the others
        for recid, _doi, metadata in published:
            review.hold(conn, ctx.settings, recid, owner_id, metadata)


def _wants_reservation(given: Any) -> bool:
    return isinstance(given, dict) and given.get("prereserve_doi") not in (None, False, {})


def create(conn: Connection, ctx: Context, owner_id: int, given: Any) -> int:
    """A new draft from `{}` or `{"metadata": {...}}` (given fields validated and stored); returns its id."""
    if given is None:
        given = {}
    concept_id = pids.mint(conn, "concept")
    recid = pids.mint(conn, "record")
    now = utcnow()
    dep = {"id": recid, "status": "draft", "doi_external": False, "doi": None}
    metadata = validate_draft(given, ctx.lookups, doi_policy=_doi_policy(ctx, dep))
    conn.execute(insert(concepts).values(id=concept_id, owner_id=owner_id, created=now, lock_version=0))
    conn.execute(
        insert(deposits).values(
            id=recid,
            conceptrecid=concept_id,
            owner_id=owner_id,
            status="draft",
            editing=False,
            metadata=metadata,
            prereserved=_wants_reservation(given),
            bucket_id=buckets.create_bucket(conn),
            created=now,
            modified=now,
            **_apply_doi(conn, ctx, dep, metadata, given),
        )
    )
    return recid


def is_version_draft(conn: Connection, dep: dict) -> bool:
    """A draft made by newversion: its concept already has a published version."""
    if dep["status"] != "draft":
        return False
    query = select(records.c.id).where(records.c.conceptrecid == dep["conceptrecid"]).limit(1)
    return conn.execute(query).first() is not None


def update_metadata(conn: Connection, ctx: Context, dep_id: int, owner_id: int, given: Any) -> None:
    """Replace the metadata of a draft or of a deposit being edited."""
    dep = get_deposit(conn, dep_id, owner_id, lock=True)
    if dep["status"] == "published" and not dep["editing"]:
        raise Forbidden("The deposition is published: unlock it with actions/edit before changing it.")
    if not isinstance(given, dict) or "metadata" not in given:
        raise ValidationError(errors=[field_error("metadata", "Missing data for required field.")])
    dep["version_draft"] = is_version_draft(conn, dep)
    metadata = validate_draft(given["metadata"], ctx.lookups, doi_policy=_doi_policy(ctx, dep))
    values = _apply_doi(conn, ctx, dep, metadata, given["metadata"])
    if dep["status"] == "published":
        values = {}  # the DOI of a published record changes only through its own rules (kept in metadata)
    conn.execute(
        update(deposits)
        .where(deposits.c.id == dep_id)
        .values(
            metadata=metadata,
            modified=utcnow(),
            prereserved=dep["prereserved"] or _wants_reservation(given["metadata"]),
            **values,
        )
    )


def delete_deposit(conn: Connection, dep_id: int, owner_id: int) -> list[str]:
    """Delete a never-published draft; returns file ids to release. Forbidden once published."""
    dep = get_deposit(conn, dep_id, owner_id, lock=True)
    if dep["status"] == "published":
        raise Forbidden("A published deposition cannot be deleted.")
    conn.execute(delete(deposit_form_states).where(deposit_form_states.c.deposit_id == dep_id))
    audit.record(conn, audit.owner(conn, owner_id), "deposit.delete", "deposit", dep_id)
    conn.execute(delete(deposits).where(deposits.c.id == dep_id))
    freed = buckets.drop_bucket(conn, dep["bucket_id"])
    still_used = conn.execute(
        select(func.count()).select_from(records).where(records.c.conceptrecid == dep["conceptrecid"])
    ).scalar()
    others = conn.execute(
        select(func.count()).select_from(deposits).where(deposits.c.conceptrecid == dep["conceptrecid"])
    ).scalar()
    if not still_used and not others:
        conn.execute(delete(concepts).where(concepts.c.id == dep["conceptrecid"]))
    return freed


def _file_errors(conn: Connection, dep: dict, objs: list[buckets.ObjectRow]) -> list[dict]:
    """A draft's files: at least one, and not the same set as a published version's."""
    if not objs:
        return [field_error("files", "Minimum one file must be provided.")]
    checksums = sorted(o["checksum"] for o in objs)
    previous = conn.execute(
        select(records.c.bucket_id).where(
            records.c.conceptrecid == dep["conceptrecid"], records.c.id != dep["id"]
        )
    ).scalars()
    for objs_before in buckets.objects_of_buckets(conn, list(previous)).values():
        if sorted(o["checksum"] for o in objs_before) == checksums:
            return [field_error("files", "New version's files must differ from all previous versions.")]
    return []


def files_enabled(metadata: dict) -> bool:
    """False for a metadata-only record (docs/researchers/depositing.md#metadata-only-records)."""
    files = metadata.get("files")
    return not isinstance(files, dict) or files.get("enabled") is not False


def _metadata_only_errors(ctx: Context, objs: list[buckets.ObjectRow]) -> list[dict]:
    """A metadata-only draft: allowed by the setting, and without files."""
    if not ctx.settings.METADATA_ONLY_DEPOSITS and not ctx.metadata_only:
        return [field_error("metadata.files", "Metadata-only records are not enabled on this service.")]
    if objs:
        return [field_error("files", "A metadata-only record has no files: remove them, or enable files.")]
    return []


def _publish_checks(conn: Connection, ctx: Context, dep: dict, objs: list[buckets.ObjectRow]) -> tuple[dict, list[dict]]:
    """The metadata as published and what refuses the publish (the metadata's errors, then the files')."""
    dep["version_draft"] = is_version_draft(conn, dep)
    errors: list[dict] = []
    try:
        metadata = validate_for_publish(dep["metadata"], ctx.lookups, doi_policy=_doi_policy(ctx, dep))
    except ValidationError as exc:
        errors.extend(exc.errors)
        metadata = {}
    if dep["status"] == "draft" and not files_enabled(metadata or dep["metadata"] or {}):
        errors.extend(_metadata_only_errors(ctx, objs))
    elif dep["status"] == "draft":
        errors.extend(_file_errors(conn, dep, objs))
        errors.extend(multipart.publish_errors(conn, dep["bucket_id"]))
        errors.extend(checks.publish_errors(conn, ctx.settings, dep["bucket_id"], objs))
    return metadata, errors


def publish_preview(conn: Connection, ctx: Context, dep_id: int, owner_id: int) -> tuple[dict, dict, list[dict]]:
    """What publishing the deposition now would do, without doing it (the deposit form's review step): the deposit
    row, the metadata as it would be published ({} while refused) and the errors that would refuse it."""
    dep = get_deposit(conn, dep_id, owner_id)
    if dep["status"] == "published" and not dep["editing"]:
        raise BadRequest("The deposition is already published.")
    objs = buckets.list_objects(conn, dep["bucket_id"]) if dep["status"] == "draft" else []
    metadata, errors = _publish_checks(conn, ctx, dep, objs)
    return dep, metadata, errors


def publish(conn: Connection, ctx: Context, dep_id: int, owner_id: int) -> list[int]:
    """Publish a draft (or re-publish an edit); returns the record ids to index right after the commit."""
    dep = get_deposit(conn, dep_id, owner_id, lock=True)
    if dep["status"] == "published" and not dep["editing"]:
        raise BadRequest("The deposition is already published.")
    # The bucket's lock, as every file write takes it: an upload lands before the snapshot or is refused after. Its
    # objects are listed once, then checked, validated and snapshotted as they are.
    buckets.hold_bucket(conn, dep["bucket_id"])
    objs = buckets.list_objects(conn, dep["bucket_id"]) if dep["status"] == "draft" else []
    files_session = filefix.in_session(conn, dep)
    metadata, errors = _publish_checks(conn, ctx, dep, objs)
    if errors:
        raise ValidationError(errors=errors)
    now = utcnow()
    recid = dep["id"]
    if dep["status"] == "draft":
        doi = dep["doi"] if dep["doi_external"] else pids.own_doi(ctx.settings, dep)
        if pids.doi_taken(conn, doi, recid):
            raise _doi_exists()
        record_bucket = buckets.snapshot(conn, dep["bucket_id"], locked=True, listed=objs)
        conn.execute(
            insert(records).values(
                id=recid,
                conceptrecid=dep["conceptrecid"],
                owner_id=owner_id,
                metadata=metadata,
                **type_columns(metadata),
                doi=doi.lower(),
                doi_external=dep["doi_external"],
                bucket_id=record_bucket,
                revision=1,
                integrated=dep["doi_external"],
                **access_columns(metadata),
                created=now,
                updated=now,
                views=0,
                downloads=0,
                volume=0,
            )
        )
        buckets.lock(conn, dep["bucket_id"])
        checks.copy_to_snapshot(conn, dep["bucket_id"], record_bucket)
        if not dep["doi_external"]:
            conn.execute(
                update(concepts)
                .where(concepts.c.id == dep["conceptrecid"], concepts.c.conceptdoi.is_(None))
                .values(conceptdoi=pids.service_doi(ctx.settings, dep["conceptrecid"]))
            )
        audit.record(conn, audit.owner(conn, owner_id), "deposit.publish", "record", recid, doi=doi.lower())
    else:
        before = conn.execute(select(records.c.metadata).where(records.c.id == recid)).scalar() or {}
        audit.record(conn, audit.owner(conn, owner_id), "record.edit", "record", recid,
                     changed=audit.changed(before, metadata), files=bool(files_session))
        if files_session:
            freed = filefix.publish_files(conn, ctx.settings, dep, owner_id)
            if ctx.store is not None:
                buckets.release_files(conn, ctx.store, freed)
        conn.execute(
            update(records)
            .where(records.c.id == recid)
            .values(
                metadata=metadata,
                **type_columns(metadata),
                revision=records.c.revision + 1,
                updated=now,
                integrated=dep["doi_external"],
                **access_columns(metadata),
            )
        )
    conn.execute(
        update(deposits)
        .where(deposits.c.id == recid)
        .values(status="published", editing=False, metadata=None, modified=now)  # the record's: see deposit_select
    )
    # A first publish the moderation rules hold waits for approval: the communities it names are asked, its
    # siblings count it and its DOI is registered only then (review.release; docs/operators/moderation.md).
    held = dep["status"] == "draft" and review.hold(conn, ctx.settings, recid, owner_id, metadata)
    accepted = inclusions.accepted_communities(conn, [dep["conceptrecid"]])
    if not held:
        for request in inclusions.sync_on_publish(conn, dep["conceptrecid"], recid, owner_id, metadata):
            notifications.request_created(conn, ctx.settings, request, owner_id)
    if (dep["status"] == "draft" and not held) or accepted != inclusions.accepted_communities(
            conn, [dep["conceptrecid"]]):
        # The other versions show the latest one, the count and the concept's communities: they changed too.
        touch_versions(conn, dep["conceptrecid"], now, exclude=recid)
    pending = conn.execute(select(records.c.review).where(records.c.id == recid)).scalar() == review.PENDING
    if not dep["doi_external"] and not pending:
        outbox.enqueue(conn, "register_doi", recid)
    siblings = version_ids(conn, dep["conceptrecid"])
    for sibling in siblings:
        outbox.enqueue(conn, "index", sibling)
    return siblings


def version_ids(conn: Connection, conceptrecid: int) -> list[int]:
    """The published (not deleted) versions of a concept, oldest first."""
    query = (
        select(records.c.id)
        .where(records.c.conceptrecid == conceptrecid, records.c.deleted.is_(None))
        .order_by(records.c.id)
    )
    return list(conn.execute(query).scalars())


def edit(conn: Connection, dep_id: int, owner_id: int) -> None:
    """Unlock a published deposition's metadata (files stay locked)."""
    dep = get_deposit(conn, dep_id, owner_id, lock=True)
    if dep["status"] != "published":
        raise BadRequest("Only a published deposition can be edited; this one is still in progress.")
    if dep["editing"]:
        raise BadRequest("The deposition is already being edited (state inprogress).")
    record = get_record_row(conn, dep_id)
    if record is not None and record["deleted"] is not None:
        raise Gone("This version is deleted: it cannot be edited.")
    if record is not None and record["review"] == review.PENDING:
        raise Conflict("The record awaits a moderator's approval: it can be edited once approved.")
    if record is not None and not record["integrated"]:
        raise Conflict("The record is still being integrated (DOI registration, indexing): retry in a few minutes.")
    conn.execute(update(deposits).where(deposits.c.id == dep_id).values(editing=True, modified=utcnow()))


def _published_record(conn: Connection, recid: int) -> dict:
    """The records row of a published version, which every publish writes."""
    record = get_record_row(conn, recid)
    if record is None:
        raise LookupError(f"record {recid} is published but has no records row")
    return record


def discard(conn: Connection, dep_id: int, owner_id: int, store: FileStore | None = None) -> None:
    """Drop the changes of the edit session: the metadata goes back to the published record's, and so do the files
    of a files session (the files uploaded in it are released through `store`)."""
    dep = get_deposit(conn, dep_id, owner_id, lock=True)
    if not dep["editing"]:
        raise BadRequest("The deposition is not being edited: there is nothing to discard.")
    _published_record(conn, dep_id)  # raises if the record is missing: the metadata is about to become its
    if filefix.in_session(conn, dep):
        freed = filefix.discard_files(conn, dep)
        if store is not None:
            buckets.release_files(conn, store, freed)
    conn.execute(
        update(deposits)
        .where(deposits.c.id == dep_id)
        .values(editing=False, metadata=None, modified=utcnow())  # the record's again: see deposit_select
    )


def newversion(conn: Connection, ctx: Context, dep_id: int, owner_id: int) -> int | None:
    """Start a new version from the latest published one; returns the new draft's id (None if one existed)."""
    dep = get_deposit(conn, dep_id, owner_id)
    if dep["status"] != "published":
        raise BadRequest("Only a published deposition can get a new version.")
    # Lock the concept: two simultaneous calls serialise here and the second finds the first one's draft.
    conn.execute(
        update(concepts)
        .where(concepts.c.id == dep["conceptrecid"])
        .values(lock_version=concepts.c.lock_version + 1)
    )
    live = version_ids(conn, dep["conceptrecid"])
    if not live:
        raise Gone("Every version of this record is deleted: start a new upload instead.")
    latest = live[-1]
    if latest != dep_id:
        raise BadRequest(f"Only the latest version can get a new version: use deposition {latest}.")
    if dep["doi_external"]:
        raise BadRequest("A record with an external DOI cannot get new versions.")
    existing = conn.execute(
        select(deposits.c.id).where(deposits.c.conceptrecid == dep["conceptrecid"], deposits.c.status == "draft")
    ).first()
    if existing is not None:
        return None
    record = _published_record(conn, latest)
    recid = pids.mint(conn, "record")
    metadata = {k: v for k, v in record["metadata"].items() if k != "doi"}
    now = utcnow()
    conn.execute(
        insert(deposits).values(
            id=recid,
            conceptrecid=dep["conceptrecid"],
            owner_id=owner_id,
            status="draft",
            editing=False,
            metadata=metadata,
            doi=pids.service_doi(ctx.settings, recid),
            doi_external=False,
            prereserved=True,
            bucket_id=(draft_bucket := buckets.snapshot(conn, record["bucket_id"], locked=False)),
            created=now,
            modified=now,
        )
    )
    checks.copy_to_snapshot(conn, record["bucket_id"], draft_bucket)
    audit.record(conn, audit.owner(conn, owner_id), "deposit.newversion", "deposit", recid, of=latest)
    return recid
