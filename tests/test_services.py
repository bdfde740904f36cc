"""build_services: the one start-up of every process (server, worker, scripts), without Flask."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime

import pytest

from repository.files.store import FileStore
from repository.files.sweeper import Sweeper
from repository.services import build_services

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Run in a fresh interpreter: this one has imported Flask for the other tests.
WITHOUT_FLASK = """
import sys
from sqlalchemy import func, select
from repository.config import Settings
from repository.services import build_services
from repository.storage.tables.vocabularies import licenses

services = build_services(Settings.build({}, INSTANCE_PATH=sys.argv[1], BACKGROUND_WORKER=False))
with services.db.read() as conn:
    print(conn.execute(select(func.count()).select_from(licenses)).scalar_one() > 0)
print(sorted(name for name in sys.modules if name == "flask" or name.startswith("flask.")))
services.db.dispose()
"""


@pytest.mark.slow  # a new interpreter that migrates an instance and loads the vocabularies
def test_a_new_embedded_instance_starts_without_flask(tmp_path):
    """An empty instance is migrated and its vocabularies loaded by build_services alone, Flask never imported."""
    env = {key: value for key, value in os.environ.items() if key not in {"DATABASE_URL", "INSTANCE_PATH"}}
    done = subprocess.run([sys.executable, "-c", WITHOUT_FLASK, str(tmp_path / "instance")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["True", "[]"]


def test_an_override_is_used_by_the_services_built_on_it(settings, tmp_path):
    store = FileStore(str(tmp_path / "other-files"))

    def clock() -> datetime:
        return datetime(2020, 1, 2)

    services = build_services(settings, files=store, clock=clock)
    try:
        assert services.files is store and services.clock is clock
        assert services.validations.store is store
        sweepers = [task for task in services.indexer.on_pass if isinstance(task, Sweeper)]
        assert [sweeper.store for sweeper in sweepers] == [store]
    finally:
        services.db.dispose()


def test_an_unknown_override_is_refused(settings):
    with pytest.raises(TypeError, match="unknown service.*limiter"):
        build_services(settings, limiter=object())


def test_the_background_worker_setting_starts_the_worker_thread(make_settings):
    services = build_services(make_settings(BACKGROUND_WORKER=True))
    try:
        assert services.indexer._thread is not None and services.indexer._thread.is_alive()
    finally:
        services.indexer.stop()
        services.db.dispose()
