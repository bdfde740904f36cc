"""The jobs page of the administration area, `/admin/jobs/` (docs/operators/administration.md#jobs), for
administrators: the outbox and the mail outbox with their failing entries and last errors, the last reindex check
and fixity run with their findings, the database's size and the free disk (the numbers of /metrics). A failing
outbox entry can be retried now or dropped; both are audited."""

from __future__ import annotations

from flask import Blueprint, Response
from werkzeug.wrappers import Response as BaseResponse

from repository import urls
from repository.accounts import users
from repository.pages.admin import BACK, _act
from repository.pages.base import render_page, require_user
from repository.web.openapi import doc
from repository.web.request import services
from repository.web.staff import page_actor
from repository.worker import jobs

bp = Blueprint("admin_jobs_pages", __name__, url_prefix="/admin/jobs")


@bp.get("/")
def jobs_page() -> Response:
    """The queues, the checks' last runs and the sizes (administrators only; 403 otherwise)."""
    actor = page_actor(require_user(), users.ADMIN)
    s = services()
    with s.db.read() as conn:
        facts = jobs.overview(conn, s.db, s.files.root)
    return render_page("admin/jobs.html", actor=actor, **facts)


@bp.post("/outbox/<int:entry_id>/<any(retry, drop):action>")
@doc(responses=BACK)
def outbox_action(entry_id: int, action: str) -> BaseResponse:
    """Retry a pending outbox entry now, or drop it (administrators only)."""
    change = jobs.retry if action == "retry" else jobs.drop
    done = (f"Entry {entry_id} is being tried again." if action == "retry"
            else f"Entry {entry_id} is dropped: its change will not be applied.")
    return _act(users.ADMIN, urls.admin_jobs_html(""), done, lambda conn, actor: change(conn, actor, entry_id))
