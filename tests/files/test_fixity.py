"""scripts/fixity.py: stored files re-hashed against the database. Files uploaded over HTTP, then altered on disk
behind the service's back (a flipped byte, a truncation, a deletion): each is reported with what was expected and
found and where the file is used, the exit status says so, and the JSON report is machine-readable. A pass stopped
part-way (--max-files, or SIGINT to the real script) resumes where it stopped; the rate limit sleeps as it must."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.factories import make_deposit, publish
from helpers.http import ROOT

from repository.files.fixity import Throttle
from scripts import fixity

pytestmark = pytest.mark.local_store  # corrupts the stored files on disk (S3: test_s3_store.py)

CONTENTS = {f"f{n}.bin": bytes([n]) * 3000 + f"file {n}".encode() for n in range(5)}


def on_disk(settings, content: bytes) -> Path:  # type: ignore[no-untyped-def]
    """The stored file holding `content` (every test file's bytes differ)."""
    found = [p for p in Path(settings.FILES_ROOT).rglob("*")
             if p.is_file() and ".tmp" not in p.parts and p.read_bytes() == content]
    assert len(found) == 1, found
    return found[0]


@pytest.fixture
def stored(client, auth) -> dict:  # type: ignore[no-untyped-def]
    """A published record with files f0-f2, a draft with f3-f4."""
    record = make_deposit(client, auth)
    draft = make_deposit(client, auth, title="Draft")
    for dep, names in ((record, ("f0.bin", "f1.bin", "f2.bin")), (draft, ("f3.bin", "f4.bin"))):
        bucket = dep["links"]["bucket"].replace("https://localhost", "")
        for name in names:
            assert client.put(f"{bucket}/{name}", data=CONTENTS[name], headers=auth).status_code == 200
    publish(client, auth, record)
    return {"record": record["id"], "draft": draft["id"]}


def run(settings, tmp_path: Path, *args: str) -> tuple[int, dict]:  # type: ignore[no-untyped-def]
    report = tmp_path / "report.json"
    code = fixity.main(["--quiet", "--rate", "0", "--json", str(report), *args], settings)
    return code, json.loads(report.read_text())


def test_a_sound_store_passes(stored, settings, tmp_path):
    code, report = run(settings, tmp_path)
    assert code == 0
    assert report["complete"] is True and report["problems"] == []
    assert report["checked"] == 5 and report["bytes"] == sum(len(c) for c in CONTENTS.values())
    assert not (Path(settings.INSTANCE_PATH) / "fixity-state.json").exists()


def test_altered_truncated_and_missing_files_are_reported(stored, settings, tmp_path, capsys):
    flipped = on_disk(settings, CONTENTS["f0.bin"])
    flipped.write_bytes(b"X" + CONTENTS["f0.bin"][1:])
    on_disk(settings, CONTENTS["f1.bin"]).write_bytes(CONTENTS["f1.bin"][:100])
    on_disk(settings, CONTENTS["f3.bin"]).unlink()
    code, report = run(settings, tmp_path)
    assert code == 1 and report["complete"] is True and report["checked"] == 5
    found = {(p["problem"], p["objects"][0]["key"]) for p in report["problems"]}
    assert found == {("md5", "f0.bin"), ("sha256", "f0.bin"), ("size", "f1.bin"), ("md5", "f1.bin"),
                     ("sha256", "f1.bin"), ("missing", "f3.bin")}
    by_kind = {(p["problem"], p["objects"][0]["key"]): p for p in report["problems"]}
    altered = by_kind[("md5", "f0.bin")]
    assert altered["expected"] == "md5:" + hashlib.md5(CONTENTS["f0.bin"]).hexdigest()
    assert altered["actual"] == "md5:" + hashlib.md5(flipped.read_bytes()).hexdigest()
    assert by_kind[("sha256", "f0.bin")]["expected"] == hashlib.sha256(CONTENTS["f0.bin"]).hexdigest()
    assert altered["records"] == [stored["record"]] and altered["deposits"] == [stored["record"]]
    assert len(altered["objects"]) == 2  # the deposit's bucket and the record's snapshot share the file
    assert (by_kind[("size", "f1.bin")]["expected"], by_kind[("size", "f1.bin")]["actual"]) == (
        len(CONTENTS["f1.bin"]), 100)
    missing = by_kind[("missing", "f3.bin")]
    assert (missing["actual"], missing["records"], missing["deposits"]) == (None, [], [stored["draft"]])
    assert "problem: missing" in capsys.readouterr().err


def test_a_pass_stopped_part_way_resumes_where_it_stopped(stored, settings, tmp_path):
    on_disk(settings, CONTENTS["f4.bin"]).unlink()
    first_code, first = run(settings, tmp_path, "--max-files", "2")
    assert first_code in (1, 3) and first["complete"] is False and first["checked"] == 2
    assert (Path(settings.INSTANCE_PATH) / "fixity-state.json").exists()
    code, report = run(settings, tmp_path)
    assert report["resumed"] is True and report["complete"] is True
    assert report["checked"] == 5 and report["bytes"] == sum(len(c) for c in CONTENTS.values())
    assert [p["problem"] for p in report["problems"]] == ["missing"] and code == 1
    # The next run is a new pass over everything.
    code, again = run(settings, tmp_path)
    assert again["resumed"] is False and again["checked"] == 5


@pytest.mark.slow  # the script in a subprocess, stopped by a signal and started again
def test_the_real_script_interrupted_by_a_signal_resumes(stored, settings, tmp_path):
    env = {**os.environ, "INSTANCE_PATH": settings.INSTANCE_PATH, "DATABASE_URL": settings.DATABASE_URL,
           "FILES_ROOT": settings.FILES_ROOT, "SEARCH_URL": settings.SEARCH_URL}
    state = Path(settings.INSTANCE_PATH) / "fixity-state.json"
    # 3 KB a second and 3 KB files: about a second a file, so the signal comes part-way. SIGINT is put back to its
    # default in the child: a suite started in the background by a shell inherits it ignored, as the script would.
    proc = subprocess.Popen([sys.executable, str(Path(ROOT) / "scripts" / "fixity.py"), "--quiet", "--rate", "3000"],
                            env=env, cwd=ROOT, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        while not state.exists() and proc.poll() is None:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3, err
    assert "run again to resume" in err
    stopped_at = json.loads(state.read_text())["checked"]
    assert 1 <= stopped_at < 5
    code, report = run(settings, tmp_path)
    assert code == 0 and report["resumed"] is True and report["checked"] == 5


def test_a_file_deleted_during_the_pass_is_not_a_problem(stored, client, auth, settings, tmp_path):
    draft_files = client.get(f"/api/deposit/depositions/{stored['draft']}/files", headers=auth).json
    from repository.files import fixity as checking
    from repository.files.store import FileStore

    db = client.application.extensions["repository"].db
    deleted: list[int] = []

    def delete_once(_n: int) -> None:  # while the first file is read, the row of a later one goes
        if not deleted:
            for item in draft_files:
                client.delete(f"/api/deposit/depositions/{stored['draft']}/files/{item['id']}", headers=auth)
            deleted.append(1)

    progress = checking.run_pass(db, FileStore(settings.FILES_ROOT), str(tmp_path / "state.json"), 0,
                                 on_bytes=delete_once)
    assert progress.complete and progress.problems == []


def test_the_throttle_keeps_to_the_rate():
    now = [0.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    throttle = Throttle(1000, sleep=sleep, clock=lambda: now[0])
    throttle.took(500)
    assert slept == [0.5]
    now[0] += 2.0  # a slow read: no sleep while behind the rate
    throttle.took(1000)
    assert slept == [0.5]
    throttle.took(3000)
    assert slept == [0.5, 2.0]
    unlimited = Throttle(0, sleep=sleep, clock=lambda: now[0])
    unlimited.took(10**9)
    assert slept == [0.5, 2.0]
