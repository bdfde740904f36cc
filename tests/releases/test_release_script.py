"""`scripts/release.py`: a release from a local git checkout, published through the same path as a webhook's."""

from __future__ import annotations

import json

import pytest
from helpers.releases import ALICE, BOB

from scripts import release

from .standin import GitRepo

DEPOSITS = "/api/deposit/depositions"


@pytest.fixture
def checkout(tmp_path) -> GitRepo:  # type: ignore[no-untyped-def]
    """Bob commits twice, Alice once; v1.0.0 is an annotated tag with a `.service.json`."""
    repo = GitRepo(tmp_path / "checkout")
    repo.commit(BOB, {"main.c": "int main(void) { return 0; }\n", "LICENSE": "Custom terms\n"})
    repo.commit(ALICE, {".service.json": json.dumps({"keywords": ["c"], "license": "MIT"})})
    repo.commit(BOB, {"main.c": "int main(void) { return 1; }\n"})
    repo.tag("v1.0.0", message="Version one\n\nFirst public version.")
    # Changes after the tag must not count: the files are read at the tag.
    repo.commit(ALICE, {".service.json": '{"keywords": ["later"]}'})
    return repo


def run(capsys, settings, checkout: GitRepo, tag: str, *extra: str) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    code = release.main(["--path", str(checkout.path), "--tag", tag, "--email", "owner@example.org",
                         "--name", "lab/prog", *extra], settings)  # fmt: skip
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
def test_release_from_a_local_checkout_then_a_new_version(client, auth, settings, checkout, capsys):
    code, out, err = run(capsys, settings, checkout, "v1.0.0", "--tree-url", "https://git.example/lab/prog/v1.0.0")
    assert code == 0, err
    assert out.startswith("lab/prog v1.0.0: published as record ")
    deps = client.get(DEPOSITS, headers=auth).json
    assert len(deps) == 1
    metadata = deps[0]["metadata"]
    assert metadata["title"] == "lab/prog: v1.0.0" and metadata["version"] == "v1.0.0"
    assert metadata["creators"] == [{"name": "Bob Baker"}, {"name": "Alice Archer"}]  # by commits
    assert metadata["keywords"] == ["c"] and metadata["license"] == "MIT"
    assert metadata["description"] == "<p>Version one</p>\n<p>First public version.</p>"
    assert metadata["related_identifiers"][0]["identifier"] == "https://git.example/lab/prog/v1.0.0"
    assert [f["filename"] for f in deps[0]["files"]] == ["lab/prog-v1.0.0.zip"]

    checkout.tag("v1.1.0")
    code, out, err = run(capsys, settings, checkout, "v1.1.0")
    assert code == 0, err
    newest = client.get(DEPOSITS, headers=auth).json[0]
    assert newest["conceptrecid"] == deps[0]["conceptrecid"] and newest["id"] != deps[0]["id"]
    assert newest["metadata"]["keywords"] == ["later"] and newest["metadata"]["license"] == "other-open"
    assert "related_identifiers" not in newest["metadata"]

    code, out, err = run(capsys, settings, checkout, "v1.1.0")
    assert code == 2 and "already been received" in err


@pytest.mark.slow
def test_a_failing_release_prints_its_errors(settings, checkout, capsys):
    checkout.commit(ALICE, {".service.json": '{"upload_type": "sofware"}'})
    checkout.tag("v2.0.0")
    code, out, err = run(capsys, settings, checkout, "v2.0.0")
    assert code == 1 and out == ""
    assert "lab/prog v2.0.0: failed" in err
    assert ".service.json upload_type: Not a valid choice. Hint: Did you mean 'software'?" in err
    code, out, err = run(capsys, settings, checkout, "v9")
    assert code == 1 and "There is no tag 'v9'" in err


def test_not_a_checkout(settings, tmp_path, capsys):
    assert release.main(["--path", str(tmp_path), "--tag", "v1", "--email", "a@example.org"], settings) == 2
    assert "not a git checkout" in capsys.readouterr().err
