"""A release taken from a local git checkout (no platform): files at the tag, creators from the history by commits,
and the archive built with `git archive`."""

from __future__ import annotations

import subprocess
from pathlib import Path

from repository.files.store import FileStore, StoredFile
from repository.releases.github import MAX_CREATORS, FetchedRelease, PlatformError
from repository.releases.metafiles import METADATA_FILES

LICENSE_FILES = ("LICENSE", "LICENSE.md", "LICENSE.txt", "COPYING")


class LocalRelease:
    """The tag `tag` of the git checkout at `path`, archived as `full_name` (`owner/name`)."""

    def __init__(self, path: str | Path, full_name: str, tag: str, tree_url: str = "") -> None:
        self.path = str(path)
        self.full_name = full_name
        self.tag = tag
        self.tree_url = tree_url

    def _git(self, *args: str, check: bool = True) -> str | None:
        done = subprocess.run(["git", "-C", self.path, *args], capture_output=True, timeout=120)
        if done.returncode != 0:
            if check:
                raise PlatformError(f"git {args[0]} failed: {done.stderr.decode(errors='replace').strip()}")
            return None
        return done.stdout.decode("utf-8", errors="replace")

    def fetch(self) -> FetchedRelease:
        ref = f"refs/tags/{self.tag}"
        if self._git("rev-parse", "--verify", "--quiet", ref + "^{commit}", check=False) is None:
            raise PlatformError(f"There is no tag {self.tag!r} in {self.path}.")
        kind, date, subject, body = (self._git("for-each-ref", ref, "--format=%(objecttype)%00%(creatordate:short)"
                                               "%00%(contents:subject)%00%(contents:body)") or "").split("\0", 3)  # fmt: skip
        files = {}
        for name in METADATA_FILES:
            shown = subprocess.run(["git", "-C", self.path, "show", f"{ref}:{name}"], capture_output=True, timeout=60)
            if shown.returncode == 0:
                files[name] = shown.stdout
        tree = self._git("ls-tree", "--name-only", ref) or ""
        has_license = any(name in LICENSE_FILES for name in tree.splitlines())
        # An annotated tag's message is the release's notes; a lightweight tag has none of its own.
        notes = (subject + "\n\n" + body).strip() if kind == "tag" else ""
        return FetchedRelease(
            full_name=self.full_name,
            tag=self.tag,
            notes=notes,
            published=date.strip(),
            tree_url=self.tree_url,
            license="NOASSERTION" if has_license else None,
            creators=self._creators(ref),
            files=files,
        )

    def _creators(self, ref: str) -> list[dict[str, str]]:
        """Authors of the commits up to the tag, most commits first (`git shortlog -sn`)."""
        out = self._git("shortlog", "-sn", "--no-merges", ref) or ""
        creators = []
        for line in out.splitlines():
            count, _, name = line.strip().partition("\t")
            if name.strip():
                creators.append({"name": name.strip()})
        return creators[:MAX_CREATORS] or [{"name": "Unknown"}]

    def write_archive(self, store: FileStore, limit: int) -> StoredFile:
        repo = self.full_name.rsplit("/", 1)[-1]
        command = ["git", "-C", self.path, "archive", "--format=zip", f"--prefix={repo}-{self.tag}/",
                   f"refs/tags/{self.tag}"]  # fmt: skip
        with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
            assert proc.stdout is not None and proc.stderr is not None
            try:
                stored = store.write(proc.stdout, limit)
            finally:
                proc.stdout.close()
                error = proc.stderr.read().decode(errors="replace").strip()
            if proc.wait() != 0:
                store.remove(stored.uri)
                raise PlatformError(f"git archive failed: {error}")
        return stored
