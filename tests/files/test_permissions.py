"""What the service stores is its own: the instance folder, the SQLite database, the file store and its files, and
a backup's files are readable by the service's user only (the database holds password hashes and token digests;
files of restricted records are not everyone's)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from helpers.factories import published
from helpers.http import https_client

from app import create_app
from repository.accounts.tokens import SCOPES, create_token, create_user
from scripts import backup

pytestmark = pytest.mark.local_store  # file modes on disk


def _others_can_read(path: Path) -> bool:
    return bool(stat.S_IMODE(path.stat().st_mode) & 0o077)


@pytest.mark.slow
def test_instance_database_files_and_backups_are_owner_only(make_settings, tmp_path, capsys):
    old_umask = os.umask(0o022)  # a usual umask: what the service creates must not rely on a stricter one
    try:
        instance = tmp_path / "fresh"
        settings = make_settings(INSTANCE_PATH=str(instance), DATABASE_URL=f"sqlite:///{instance}/repository.db",
                                 AUTO_MIGRATE="true")
        app = create_app(settings)
        client = https_client(app)
        with app.extensions["repository"].db.write() as conn:
            auth = {"Authorization": f"Bearer {create_token(conn, create_user(conn, 'o@example.org'), list(SCOPES))[1]}"}
        published(client, auth)
        stored = [p for p in Path(settings.FILES_ROOT).rglob("*") if p.is_file()]
        assert stored
        for path in [instance, instance / "repository.db", Path(settings.FILES_ROOT), *stored]:
            assert not _others_can_read(path), (path, oct(path.stat().st_mode))
        target = tmp_path / "backup"
        assert backup.main([str(target), "--quiet"], settings) == 0
        for path in [target, *target.rglob("*")]:
            assert not _others_can_read(path), (path, oct(path.stat().st_mode))
        app.extensions["repository"].db.dispose()
    finally:
        os.umask(old_umask)
