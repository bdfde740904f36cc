"""The file area of the deposit form without JavaScript: plain forms that upload (one or more files, streamed to the
file store as the bucket PUT does), replace, delete, rename and move a file of the signed-in owner's draft, then go
back to the form (`/deposit/<id>#files`) where the area says what happened. `/deposit/<id>/files` shows the area on a
page of its own (static/uploads.js reloads the list from it).

The partial `templates/pages/deposit/_files.html` renders the area from the deposition as the API shapes it; with
JavaScript (static/uploads.js) uploads go straight to the bucket with a progress bar per file, and moves and
deletions go through the API, with the session's CSRF token in `X-CSRFToken` (docs/researchers/depositing.md#files)."""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import Blueprint, Response, redirect, request, session
from werkzeug.wrappers import Response as BaseResponse

from repository import urls
from repository.deposits import actions, representation, uploads
from repository.errors import ApiError
from repository.files import buckets, quotas
from repository.pages.base import render_page, require_user
from repository.web.openapi import doc
from repository.web.request import services
from repository.web.session import current_user

bp = Blueprint("deposit_files", __name__, url_prefix="/deposit/<int:dep_id>/files")
FORM_OVERHEAD = 1024 * 1024  # the multipart framing and the small fields beside the files


@bp.url_value_preprocessor
def _bound_body(_endpoint: str | None, _values: dict | None) -> None:
    # Runs before the CSRF check, which parses the form (werkzeug spools each file to a temporary file first): a body
    # larger than a bucket may hold is a 413 page before any byte of it is written anywhere.
    # Only for a signed-in user (a guest's body keeps the small bound of every page: repository.pages.base).
    quota = services().settings.BUCKET_QUOTA_BYTES
    if quota and current_user() is not None:
        request.max_content_length = quota + FORM_OVERHEAD
    elif current_user() is not None:
        request.max_content_length = None

NOTICE = "deposit_files_notice"
BACK = {"303": {"description": "Done or refused: back to the form, whose file area says which."}}


@bp.app_template_global()
def files_notice(dep_id: int) -> dict | None:
    """What the last file action on deposition `dep_id` did (shown once in its file area), or None."""
    notice = session.get(NOTICE)
    if isinstance(notice, dict) and notice.get("dep") == dep_id:
        session.pop(NOTICE)
        return notice
    return None


@bp.app_template_filter("local_path")
def local_path(url: str) -> str:
    """An absolute link of the API as a path of this site (the page's own origin, whatever BASE_URL says)."""
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


@bp.app_template_filter("upload_size")
def upload_size(size: int) -> str:
    """A byte count people read: 1 byte, 532 bytes, 1.4 kB, 23.0 MB (SI units, as the reference service shows)."""
    if size == 1:
        return "1 byte"
    if size < 1000:
        return f"{size} bytes"
    value = float(size)
    for unit in ("kB", "MB", "GB", "TB", "PB"):
        value /= 1000
        if value < 1000 or unit == "PB":
            break
    return f"{value:.1f} {unit}"


@bp.app_template_global()
def file_area(dep: dict) -> dict:
    """For the file area of deposition `dep` (as the API shows it): `sha256`, the SHA-256 of each file by name (the
    old files interface's file objects carry the MD5 only; files stored before migration 0015 have none), and
    `room`, the bytes its quotas leave (None without a limit), which static/uploads.js checks before sending."""
    s = services()
    with s.db.read() as conn:
        bucket = actions.get_deposit(conn, dep["id"], dep["owner"])["bucket_id"]
        sums = {o["key"]: o["sha256"] for o in buckets.list_objects(conn, bucket) if o.get("sha256")}
        room = quotas.room(conn, quotas.Quota.of(s.settings), bucket)
    return {"sha256": sums, "room": None if room is None else room[0]}


def _owned(dep_id: int) -> int:
    """The signed-in owner's id; a 404 page for anyone else's deposition (and sign-in for a guest)."""
    user = require_user()
    with services().db.read() as conn:
        actions.get_deposit(conn, dep_id, user["id"])
    return int(user["id"])


def _back(dep_id: int, text: str, kind: str = "success") -> BaseResponse:
    session[NOTICE] = {"dep": dep_id, "kind": kind, "text": text}
    # Only back to this deposition's form or file page, whatever `next` says.
    wanted = request.form.get("next", "")
    form = urls.deposit_html("", dep_id)
    target = wanted if wanted in (form, f"{form}/files") else form
    return redirect(f"{target}#files", 303)


def _refused(dep_id: int, exc: ApiError) -> BaseResponse:
    details = " ".join(e["message"] for e in exc.errors if e.get("message") and e["message"] not in exc.message)
    return _back(dep_id, f"{exc.message} {details}".strip(), "error")


@bp.get("")
def files_page(dep_id: int) -> Response:
    """The file area of one of the signed-in user's depositions on a page of its own (404 page for anyone else's)."""
    user = require_user()
    with services().db.read() as conn:
        actions.get_deposit(conn, dep_id, user["id"])
        deposition = representation.render(conn, services().settings, dep_id)
    return render_page("deposit/files.html", deposition=deposition)


@bp.post("")
@doc(responses=BACK)
def upload(dep_id: int) -> BaseResponse:
    """Upload the files of the multipart form field `file` (one or more) to the draft, each streamed to the file
    store; a refused file (bad or taken name, published deposition, full quota) is named with its reason, and the
    others are kept."""
    owner = _owned(dep_id)
    chosen = [f for f in request.files.getlist("file") if f.filename]
    if not chosen:
        return _back(dep_id, "Choose one or more files to upload first.", "error")
    done: list[str] = []
    refused: list[str] = []
    quota = quotas.Quota.of(services().settings)
    for part in chosen:
        try:
            obj = uploads.add_file(services().db, services().files, quota, dep_id, owner, part.filename or "",
                                   part.stream)
            done.append(obj["key"])
        except ApiError as exc:
            refused.append(f"“{part.filename}” was not uploaded: {exc.message}")
        finally:
            part.close()
    said = ([f"Uploaded {', '.join(done)}."] if done else []) + refused
    return _back(dep_id, " ".join(said), "error" if refused else "success")


@bp.post("/<key>/replace")
@doc(responses=BACK)
def replace(dep_id: int, key: str) -> BaseResponse:
    """Put the file of the multipart form field `file` in the place of the draft's file `key`, under that name (its
    place in the list kept); refused like an upload, and then the old file stays."""
    owner = _owned(dep_id)
    part = request.files.get("file")
    if part is None or not part.filename:
        return _back(dep_id, f"Choose the file to put in the place of {key} first.", "error")
    try:
        obj = uploads.add_file(services().db, services().files, quotas.Quota.of(services().settings), dep_id, owner,
                               key, part.stream, replace=True)
    except ApiError as exc:
        return _refused(dep_id, exc)
    finally:
        part.close()
    return _back(dep_id, f"Replaced {obj['key']} with {part.filename}.")


@bp.post("/<key>/delete")
@doc(responses=BACK)
def delete(dep_id: int, key: str) -> BaseResponse:
    """Delete the file `key` of the draft."""
    owner = _owned(dep_id)
    try:
        uploads.delete_file(services().db, services().files, dep_id, owner, key)
    except ApiError as exc:
        return _refused(dep_id, exc)
    return _back(dep_id, f"Deleted {key}.")


@bp.post("/<key>/rename")
@doc(responses=BACK)
def rename(dep_id: int, key: str) -> BaseResponse:
    """Rename the file `key` of the draft to the form field `name`."""
    owner = _owned(dep_id)
    try:
        obj = uploads.rename_file(services().db, services().files, dep_id, owner, key, request.form.get("name", ""))
    except ApiError as exc:
        return _refused(dep_id, exc)
    return _back(dep_id, f"Renamed {key} to {obj['key']}.")


@bp.post("/order")
@doc(responses=BACK)
def order(dep_id: int) -> BaseResponse:
    """Move the file of the form field `key` one place up or down (`move=up|down`); the first file is shown first."""
    owner = _owned(dep_id)
    key, move = request.form.get("key", ""), request.form.get("move")
    if move not in ("up", "down"):
        return _back(dep_id, "Choose to move the file up or down.", "error")
    try:
        uploads.move_file(services().db, dep_id, owner, key, -1 if move == "up" else 1)
    except ApiError as exc:
        return _refused(dep_id, exc)
    return _back(dep_id, f"Moved {key} {move}.")
