"""The compose file and the Dockerfile, read as text and YAML (no Docker engine here): pinned images, OpenSearch's
memory lock and health, restart policies, health checks on /readyz and the worker's heartbeat, no default secret,
an image that runs a non-editable install as an unprivileged user; and the .env generator compose relies on."""

from __future__ import annotations

import re
import stat
from pathlib import Path

import pytest
import yaml

from repository.config import Settings, StartupError
from scripts import generate_env, worker

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = (ROOT / "docker-compose.yml").read_text(encoding="utf-8")
SERVICES = yaml.safe_load(COMPOSE)["services"]
DOCKERFILE = (ROOT / "Dockerfile").read_text(encoding="utf-8")
SECRETS = {"SECRET_KEY", "POSTGRES_PASSWORD", "OPENSEARCH_PASSWORD", "S3_SECRET_ACCESS_KEY"}


def test_every_image_is_pinned_to_an_exact_version():
    images = {name: s["image"] for name, s in SERVICES.items() if "build" not in s}
    assert set(images) == {"postgres", "redis", "opensearch", "seaweedfs"}
    for image in images.values():
        assert re.fullmatch(r"[\w./-]+:\d+\.\d+(\.\d+)?", image), image
    assert images["opensearch"].startswith("opensearchproject/opensearch:2.")
    base = re.search(r"^ARG PYTHON_IMAGE=(\S+)$", DOCKERFILE, re.M)
    assert base and re.fullmatch(r"python:\d+\.\d+\.\d+-slim-\w+", base.group(1))
    # pg_dump must be of the server's major version: the Dockerfile's client follows compose's server.
    major = re.search(r"^ARG PG_MAJOR=(\d+)$", DOCKERFILE, re.M)
    assert major and images["postgres"].startswith(f"postgres:{major.group(1)}.")


def test_opensearch_locks_its_memory_and_is_healthy_at_yellow():
    opensearch = SERVICES["opensearch"]
    assert opensearch["ulimits"]["memlock"] == {"soft": -1, "hard": -1}
    assert opensearch["environment"]["bootstrap.memory_lock"] == "true"
    assert "wait_for_status=yellow" in " ".join(opensearch["healthcheck"]["test"])
    assert "vm.max_map_count=262144" in COMPOSE


def test_restart_policies_and_health_checks():
    for name in ("postgres", "redis", "opensearch", "seaweedfs", "worker", "app"):
        assert SERVICES[name]["restart"] == "unless-stopped", name
        assert SERVICES[name]["healthcheck"]["test"], name
    assert SERVICES["migrate"]["restart"] == "no"  # a one-shot job
    assert "/readyz" in " ".join(SERVICES["app"]["healthcheck"]["test"])
    assert "--heartbeat" in SERVICES["worker"]["command"]
    heartbeat = SERVICES["worker"]["command"][SERVICES["worker"]["command"].index("--heartbeat") + 1]
    assert heartbeat in " ".join(SERVICES["worker"]["healthcheck"]["test"])
    for name in ("worker", "app"):
        assert SERVICES[name]["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}


def test_no_default_secret_compose_refuses_to_start_without_them():
    for name in SECRETS:
        uses = re.findall(r"\$\{" + name + r"([^}]*)\}", COMPOSE)
        assert uses and all(use.startswith(":?") for use in uses), (name, uses)
    secret_values = [value for service in SERVICES.values()
                     for key, value in (service.get("environment") or {}).items()
                     if key in {"SECRET_KEY", "POSTGRES_PASSWORD", "OPENSEARCH_INITIAL_ADMIN_PASSWORD"}]
    assert len(secret_values) == 6 and all(value.startswith("${") for value in secret_values)
    assert "repository:repository@" not in COMPOSE


def test_the_image_is_a_non_editable_install_run_by_an_unprivileged_user():
    installs = re.findall(r"pip install[^\n]*", DOCKERFILE)
    assert installs and not any(re.search(r"\s(-e|--editable)\b", line) for line in installs)
    assert "pip wheel" in DOCKERFILE
    users = re.findall(r"^USER (\S+)$", DOCKERFILE, re.M)
    assert users and users[-1] not in {"root", "0"}
    assert re.search(r"^HEALTHCHECK .*\n?.*/readyz", DOCKERFILE, re.M)
    assert ".venv" in (ROOT / ".dockerignore").read_text().split()


def test_generate_env_writes_what_compose_requires_and_never_overwrites(tmp_path, capsys):
    env = tmp_path / ".env"
    assert generate_env.main(["--output", str(env)]) == 0
    values = dict(line.split("=", 1) for line in env.read_text().splitlines() if not line.startswith("#"))
    required = set(re.findall(r"\$\{(\w+):\?", COMPOSE))
    assert required == SECRETS and set(values) == required | {"METRICS_TOKEN"}
    # The scrape token is generated too (random, like the others) and reaches the app through compose.
    assert len(values["METRICS_TOKEN"]) >= 32 and re.search(r"^\s+METRICS_TOKEN: \$\{METRICS_TOKEN", COMPOSE, re.M)
    assert stat.S_IMODE(env.stat().st_mode) == 0o600
    password = values["OPENSEARCH_PASSWORD"]  # OpenSearch's rule for its admin password
    assert len(password) >= 8 and all(re.search(p, password) for p in ("[A-Z]", "[a-z]", "[0-9]", "[^A-Za-z0-9]"))
    assert Settings.build({"SECRET_KEY": values["SECRET_KEY"]}).SECRET_KEY == values["SECRET_KEY"]
    before = env.read_text()
    assert generate_env.main(["--output", str(env)]) == 2
    assert "never overwritten" in capsys.readouterr().err and env.read_text() == before
    assert generate_env.main(["--output", str(tmp_path / "other")]) == 0
    assert (tmp_path / "other").read_text() != before  # fresh secrets each time


@pytest.mark.parametrize("placeholder", ["change-me", "CHANGEME", "secret"])
def test_a_placeholder_secret_key_stops_start_up(placeholder):
    with pytest.raises(StartupError, match="SECRET_KEY.*placeholder"):
        Settings.build({"SECRET_KEY": placeholder})


def test_the_worker_touches_its_heartbeat_after_a_pass(settings, tmp_path, capsys):
    heartbeat = tmp_path / "worker.heartbeat"
    assert worker.main(["--once", "--heartbeat", str(heartbeat)], settings) == 0
    assert heartbeat.exists() and "applied" in capsys.readouterr().out
