"""gunicorn reads this file when started from this directory: the service's settings (repository/serving)."""

from repository.serving.gunicorn_conf import *  # noqa: F403
