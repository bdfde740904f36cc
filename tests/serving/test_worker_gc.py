"""A server worker, once its app is loaded, freezes what it holds out of the cyclic collector's view and collects
young objects less often (repository/serving/gunicorn_conf.py: a record read spent ~8% of its instructions in
collections walking the worker's caches)."""

from __future__ import annotations

import os
import subprocess
import sys

from repository.serving.gunicorn_conf import GC_THRESHOLDS

PROBE = """
import gc
from repository.serving import gunicorn_conf
before = gc.get_threshold(), gc.get_freeze_count()
gunicorn_conf.post_worker_init(None)
print(before, gc.get_threshold(), gc.get_freeze_count() > 1000)
"""


def test_the_hook_freezes_the_loaded_objects_and_sets_the_thresholds(tmp_path):
    env = {**os.environ, "INSTANCE_PATH": str(tmp_path), "SECRET_KEY": "test-secret"}
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split("\n")[0] == f"((700, 10, 10), 0) {GC_THRESHOLDS} True"
