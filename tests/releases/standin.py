"""A stand-in for GitHub's REST API on 127.0.0.1, serving fixture git repositories made in the test with `git`.

Endpoints, with the shapes GitHub documents: repository, releases by tag, contributors, users, contents at a ref
(base64 JSON), license at a ref, and the zipball (302 to a codeload URL, as GitHub does, then `git archive`).
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

GIT_ENV = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"}
LICENSE_NAMES = ("LICENSE", "LICENSE.md", "COPYING")


def git(path: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Run git in `path` with no user configuration; returns stdout."""
    done = subprocess.run(["git", "-C", str(path), *args], capture_output=True, check=True,
                          env={**os.environ, **GIT_ENV, **(env or {})})  # fmt: skip
    return done.stdout.decode()


class GitRepo:
    """A fixture repository: commits by named authors, tags, files."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True)
        git(path, "-c", "init.defaultBranch=main", "init", "-q")
        self.clock = 1_700_000_000

    def commit(self, author: str, files: dict[str, str | None], message: str = "change") -> None:
        """Write (or delete, for None) `files` and commit them as `author` ("Name <email>")."""
        for name, content in files.items():
            target = self.path / name
            if content is None:
                target.unlink()
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(content, encoding="utf-8")
        name, email = re.fullmatch(r"(.+) <(.+)>", author).groups()  # type: ignore[union-attr]
        self.clock += 3600
        stamp = f"{self.clock} +0000"
        env = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_COMMITTER_NAME": name,
               "GIT_COMMITTER_EMAIL": email, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}  # fmt: skip
        git(self.path, "add", "-A")
        git(self.path, "commit", "-q", "--allow-empty", "-m", message, env=env)

    def tag(self, tag: str, message: str | None = None) -> None:
        env = {"GIT_COMMITTER_NAME": "Tagger", "GIT_COMMITTER_EMAIL": "tagger@example.org",
               "GIT_COMMITTER_DATE": f"{self.clock} +0000"}  # fmt: skip
        if message:
            git(self.path, "tag", "-a", tag, "-m", message, env=env)
        else:
            git(self.path, "tag", tag)


@dataclass
class Hosted:
    """A fixture repository as the platform shows it."""

    repo: GitRepo
    full_name: str
    description: str = ""
    profiles: dict[str, dict[str, Any]] = field(default_factory=dict)  # login -> {name, company}
    releases: dict[str, dict[str, Any]] = field(default_factory=dict)  # tag -> release JSON
    token: str | None = None  # a private repository: this bearer token is needed

    def release(self, tag: str, name: str = "", body: str = "", published_at: str = "2024-05-01T10:00:00Z") -> dict:
        """Publish a release of an existing tag; returns the webhook payload's `release`."""
        number = 1000 + len(self.releases)
        self.releases[tag] = {"id": number, "tag_name": tag, "name": name, "body": body, "draft": False,
                              "prerelease": False, "published_at": published_at,
                              "author": {"login": "release-bot", "type": "User"}}  # fmt: skip
        return self.releases[tag]


class StandIn:
    """The stand-in server; `url` is its API root."""

    def __init__(self) -> None:
        self.hosted: dict[str, Hosted] = {}
        self.requests: list[tuple[str, str | None]] = []  # (path, Authorization header)
        handler = type("Handler", (_Handler,), {"standin": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def host(self, repo: GitRepo, full_name: str, **kwargs: Any) -> Hosted:
        self.hosted[full_name.lower()] = Hosted(repo, full_name, **kwargs)
        return self.hosted[full_name.lower()]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


class _Handler(BaseHTTPRequestHandler):
    standin: StandIn

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass

    def do_GET(self) -> None:  # noqa: N802 - the base class's name
        parts = urlsplit(self.path)
        path, query = unquote(parts.path), {k: v[0] for k, v in parse_qs(parts.query).items()}
        self.standin.requests.append((path, self.headers.get("Authorization")))
        user = re.fullmatch(r"/users/([^/]+)", path)
        if user:
            return self._user(user.group(1))
        found = re.fullmatch(r"/(?:repos|codeload)/([^/]+/[^/]+)(/.*)?", path)
        hosted = self.standin.hosted.get(found.group(1).lower()) if found else None
        if hosted is None:
            return self._json({"message": "Not Found"}, 404)
        if hosted.token and self.headers.get("Authorization") != f"Bearer {hosted.token}":
            if self.headers.get("Authorization"):
                return self._json({"message": "Bad credentials"}, 401)
            return self._json({"message": "Not Found"}, 404)  # GitHub hides private repositories
        self._repo(hosted, found.group(2) or "", query)  # type: ignore[union-attr]

    def _repo(self, hosted: Hosted, rest: str, query: dict[str, str]) -> None:
        repo, ref = hosted.repo, query.get("ref", "HEAD")
        if rest == "":
            body = {"id": 42, "full_name": hosted.full_name, "name": hosted.full_name.split("/")[1],
                    "html_url": f"https://github.example/{hosted.full_name}", "description": hosted.description,
                    "private": bool(hosted.token), "owner": {"login": hosted.full_name.split("/")[0]}}  # fmt: skip
            return self._json(body)
        if match := re.fullmatch(r"/releases/tags/(.+)", rest):
            release = hosted.releases.get(match.group(1))
            return self._json(release) if release else self._json({"message": "Not Found"}, 404)
        if rest == "/contributors":
            return self._json(_contributors(repo))
        if match := re.fullmatch(r"/contents/(.+)", rest):
            content = _show(repo, ref, match.group(1))
            if content is None:
                return self._json({"message": "Not Found"}, 404)
            return self._json({"type": "file", "encoding": "base64", "name": match.group(1).rsplit("/", 1)[-1],
                               "path": match.group(1), "content": base64.encodebytes(content).decode()})  # fmt: skip
        if rest == "/license":
            for name in LICENSE_NAMES:
                content = _show(repo, ref, name)
                if content is not None:
                    spdx = "MIT" if b"MIT License" in content else "NOASSERTION"
                    return self._json({"name": name, "path": name, "license": {"spdx_id": spdx, "key": spdx.lower()}})
            return self._json({"message": "Not Found"}, 404)
        if match := re.fullmatch(r"/zipball/(.+)", rest):
            self.send_response(302)
            self.send_header("Location", f"/codeload/{hosted.full_name}/zip/{match.group(1)}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        if match := re.fullmatch(r"/zip/(.+)", rest):
            prefix = f"{hosted.full_name.replace('/', '-')}-{match.group(1)}/"
            data = subprocess.run(["git", "-C", str(repo.path), "archive", "--format=zip", f"--prefix={prefix}",
                                   match.group(1)], capture_output=True, check=True).stdout  # fmt: skip
            return self._send(data, "application/zip")
        return self._json({"message": "Not Found"}, 404)

    def _user(self, login: str) -> None:
        for hosted in self.standin.hosted.values():
            if login in hosted.profiles:
                return self._json({"login": login, "type": "User", **hosted.profiles[login]})
        return self._json({"login": login, "type": "User", "name": None, "company": None})

    def _json(self, body: Any, status: int = 200) -> None:
        self._send(json.dumps(body).encode(), "application/json", status)

    def _send(self, data: bytes, content_type: str, status: int = 200) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _show(repo: GitRepo, ref: str, name: str) -> bytes | None:
    done = subprocess.run(["git", "-C", str(repo.path), "show", f"{ref}:{name}"], capture_output=True)
    return done.stdout if done.returncode == 0 else None


def _contributors(repo: GitRepo) -> list[dict[str, Any]]:
    """GitHub's contributor list: login (the e-mail's local part here), type, contributions; most first."""
    out = git(repo.path, "shortlog", "-sne", "HEAD")
    listed = []
    for line in out.splitlines():
        count, _, who = line.strip().partition("\t")
        login = re.search(r"<([^@>]+)@", who).group(1)  # type: ignore[union-attr]
        listed.append({"login": login, "type": "Bot" if login.endswith("[bot]") else "User",
                       "contributions": int(count)})  # fmt: skip
    return sorted(listed, key=lambda c: -c["contributions"])
