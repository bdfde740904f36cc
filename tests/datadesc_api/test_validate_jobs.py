"""Large validations run in the background (issue 14.8): `POST /api/datadesc/validate` answers 202 and a job to
poll, `GET /api/datadesc/validate/<id>`, for the token's user only; the worker's pass takes up jobs that a dead
process left, and removes them after DATADESC_JOB_RETENTION seconds."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.datadesc_docs import CODEBOOK, CORPUS, INVALID_ROWS, csv_bytes, descriptor_bytes
from helpers.http import https_client

from app import create_app
from repository.accounts import tokens

URL = "/api/datadesc/validate"
ROWS = 12_000  # about 450 KB
MANY_ROWS = [f"Germany,{1990 + i % 40},{i},gdp,World Bank,USD," for i in range(ROWS)]
REPORT_KEYS = ("kind", "status", "errors", "summary")


class Instance:
    """An app of the test instance (several share its directory and database, as gunicorn's processes do)."""

    def __init__(self, app) -> None:  # type: ignore[no-untyped-def]
        self.app = app
        self.client = https_client(app)
        self.jobs = app.extensions["repository"].validation_jobs

    def token(self, email: str) -> dict[str, str]:
        with self.app.extensions["repository"].db.write() as conn:
            token = tokens.create_token(conn, tokens.create_user(conn, email), list(tokens.SCOPES))[1]
        return {"Authorization": f"Bearer {token}"}

    def worker_pass(self) -> None:
        """The background worker's pass (scripts/worker.py, or the thread of the embedded shape), then the jobs it
        started."""
        self.app.extensions["repository"].indexer.run_pass(grace=0.0)
        self.jobs.wait_idle()

    def poll(self, response, headers):  # type: ignore[no-untyped-def]
        return self.client.get(response.headers["Location"].replace("https://localhost", ""), headers=headers)


@pytest.fixture
def instance(make_settings):  # type: ignore[no-untyped-def]
    """Build apps on the same instance directory and database; every one is idle and closed at the end."""
    made: list[Instance] = []

    def make(**settings) -> Instance:  # type: ignore[no-untyped-def]
        made.append(Instance(create_app(make_settings(**{"DATADESC_ASYNC_BYTES": 100_000, **settings}))))
        return made[-1]

    yield make
    for each in made:
        each.jobs.wait_idle()
        each.app.extensions["repository"].db.dispose()


def package(client, headers, rows=MANY_ROWS, query=""):  # type: ignore[no-untyped-def]
    data = {"document": (io.BytesIO(descriptor_bytes()), "datapackage.json"),
            "files": [(io.BytesIO(csv_bytes(*rows)), "data.csv"), (io.BytesIO(CODEBOOK), "codebook.md")]}  # fmt: skip
    return client.post(URL + query, data=data, content_type="multipart/form-data", headers=headers)


def jobs_dir(inst: Instance) -> Path:
    return Path(inst.app.extensions["repository"].settings.INSTANCE_PATH) / "validation-jobs"


def test_a_large_request_is_validated_whole_in_the_background(instance):
    # The synchronous CPU bound is 0: only a background validation checks every row.
    inst = instance(DATADESC_VALIDATE_SECONDS=0)
    auth = inst.token("a@example.org")
    with inst.jobs.paused():
        submitted = package(inst.client, auth)
        assert submitted.status_code == 202, submitted.json
        assert submitted.headers["Location"] == submitted.json["links"]["self"]
        assert submitted.json["status"] == "pending" and submitted.json["kind"] == "datapackage"
        assert inst.poll(submitted, auth).json["status"] == "pending"
    inst.worker_pass()
    done = inst.poll(submitted, auth)
    assert done.status_code == 200 and done.json["status"] == "valid", done.json
    assert done.json["summary"]["rows_checked"] == ROWS and not done.json["summary"].get("truncated")
    assert done.json["id"] == submitted.json["id"] and done.json["expires"] > done.json["created"]


@pytest.mark.slow
@pytest.mark.parametrize("rows", [MANY_ROWS, MANY_ROWS[:100] + INVALID_ROWS + MANY_ROWS[100:]])
def test_the_same_inputs_give_the_same_report_as_synchronous_validation(instance, rows):
    inst = instance(DATADESC_VALIDATE_SECONDS=600)
    auth = inst.token("a@example.org")
    now = package(inst.client, auth, rows, "?async=false")
    assert now.status_code == 200
    later = package(inst.client, auth, rows)
    assert later.status_code == 202
    inst.worker_pass()
    report = inst.poll(later, auth).json
    assert {k: report[k] for k in REPORT_KEYS} == now.json
    assert (now.json["status"] == "valid") == (rows is MANY_ROWS)


def test_a_corpus_document_on_request(instance):
    inst = instance()
    auth = inst.token("a@example.org")
    now = inst.client.post(URL, json=CORPUS, headers=auth)
    assert now.status_code == 200
    asked = inst.client.post(URL, json=CORPUS, headers={**auth, "Prefer": "respond-async, wait=5"})
    assert asked.status_code == 202 and asked.headers["Preference-Applied"] == "respond-async"
    inst.worker_pass()
    report = inst.poll(asked, auth).json
    assert {k: report[k] for k in REPORT_KEYS} == now.json
    also = inst.client.post(URL + "?async=true", json=CORPUS, headers=auth)
    assert also.status_code == 202


def test_only_the_submitter_reads_a_job(instance):
    inst = instance()
    owner, other = inst.token("a@example.org"), inst.token("b@example.org")
    submitted = inst.client.post(URL + "?async=true", json=CORPUS, headers=owner)
    inst.worker_pass()
    assert inst.poll(submitted, owner).status_code == 200
    refused = inst.poll(submitted, other)
    assert refused.status_code == 404 and refused.json["status"] == 404
    assert inst.poll(submitted, {}).status_code == 401
    for job_id in ("unknown", "x" * 32, "..", "%2e%2e"):
        missing = inst.client.get(f"{URL}/{job_id}", headers=owner)
        assert missing.status_code == 404 and missing.json["status"] == 404
    assert len(submitted.json["id"]) >= 32


def test_guests_get_no_background_jobs(instance):
    inst = instance(DATADESC_ASYNC_BYTES=0)
    asked = inst.client.post(URL + "?async=true", json=CORPUS)
    assert asked.status_code == 401 and "access token" in asked.json["message"]
    # A preference only: a guest gets the answer now, as for any small request.
    preferred = inst.client.post(URL, json=CORPUS, headers={"Prefer": "respond-async"})
    assert preferred.status_code == 200 and preferred.json["status"] == "valid"
    assert "Preference-Applied" not in preferred.headers
    bad = inst.client.post(URL + "?async=maybe", json=CORPUS)
    assert bad.status_code == 400 and bad.json["errors"][0]["field"] == "async"


@pytest.mark.slow
def test_a_job_survives_the_process_that_was_validating_it(instance):
    first = instance()
    auth = first.token("a@example.org")
    with first.jobs.paused():  # this process never gets to it
        submitted = package(first.client, auth)
        # Another process holds the job (it is validating it), then dies.
        with subprocess.Popen(
            [sys.executable, "-c", "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT); "
             "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); sys.stdin.read()",
             str(jobs_dir(first) / submitted.json["id"] / "lock")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        ) as holder:  # fmt: skip
            try:
                assert holder.stdout.readline().strip() == "held"
                second = instance()  # another server process (or scripts/worker.py) of the instance
                second.worker_pass()
                assert second.poll(submitted, auth).json["status"] == "pending"  # under way elsewhere: left alone
            finally:
                holder.kill()
        second.worker_pass()
        done = second.poll(submitted, auth).json
        assert done["status"] == "valid" and done["summary"]["rows_checked"] == ROWS
        assert first.poll(submitted, auth).json == done


@pytest.mark.slow
def test_bytes_are_dropped_once_validated_and_jobs_expire(instance):
    inst = instance()
    auth = inst.token("a@example.org")
    submitted = package(inst.client, auth)
    inst.worker_pass()
    job = jobs_dir(inst) / submitted.json["id"]
    assert inst.poll(submitted, auth).json["status"] == "valid"
    assert not (job / "document").exists() and not (job / "files").exists()  # the report alone is kept

    expiring = instance(DATADESC_JOB_RETENTION=0)
    auth = expiring.token("b@example.org")
    gone = package(expiring.client, auth)
    assert gone.status_code == 202
    assert expiring.poll(gone, auth).status_code == 404  # expired: not shown, even before the sweep
    # A request that crashed while its files were being received left its staging directory behind.
    crashed = jobs_dir(expiring) / ".incoming-crashed"
    (crashed / "files").mkdir(parents=True)
    (crashed / "files" / "data.csv").write_bytes(b"x" * 1000)
    os.utime(crashed, (1, 1))
    expiring.worker_pass()
    assert sorted(os.listdir(jobs_dir(expiring))) == []


def test_waiting_jobs_per_user_are_bounded(instance):
    inst = instance(DATADESC_JOBS_PER_USER=1)
    auth = inst.token("a@example.org")
    with inst.jobs.paused():
        assert inst.client.post(URL + "?async=true", json=CORPUS, headers=auth).status_code == 202
        refused = inst.client.post(URL + "?async=true", json=CORPUS, headers=auth)
        assert refused.status_code == 429 and refused.json["status"] == 429
        assert package(inst.client, auth).status_code == 429  # large: refused before its upload is received
        assert inst.client.post(URL + "?async=true", json=CORPUS, headers=inst.token("b@example.org")).status_code == 202
    inst.worker_pass()
    assert inst.client.post(URL + "?async=true", json=CORPUS, headers=auth).status_code == 202


@pytest.mark.slow  # a subprocess: seconds of start-up
def test_scripts_worker_takes_up_a_job_of_the_server(instance):
    inst = instance()
    auth = inst.token("a@example.org")
    settings = inst.app.extensions["repository"].settings
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "INSTANCE_PATH": settings.INSTANCE_PATH, "DATABASE_URL": settings.DATABASE_URL,
           "SECRET_KEY": "test-secret", "BASE_URL": settings.BASE_URL, "AUTO_MIGRATE": "false"}  # fmt: skip
    with inst.jobs.paused():  # the server process never gets to it (as if it had died)
        submitted = package(inst.client, auth)
        worker = subprocess.run([sys.executable, str(root / "scripts" / "worker.py"), "--once"], cwd=root, env=env,
                                capture_output=True, text=True, timeout=300)  # fmt: skip
        assert worker.returncode == 0, worker.stderr
        done = inst.poll(submitted, auth).json
    assert done["status"] == "valid" and done["summary"]["rows_checked"] == ROWS
