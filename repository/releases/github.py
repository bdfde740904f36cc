"""Fetching a release from GitHub's REST API (or anything serving its documented endpoints at the base URL).

Only the tag is taken from the webhook payload: the release, the repository, its contributors, the metadata files
at the tag and the archive are all fetched from the API, so a forged event cannot inject content.
"""

from __future__ import annotations

import base64
import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Protocol
from urllib.parse import quote

import requests

from repository.files.store import FileStore, StoredFile
from repository.releases.metafiles import METADATA_FILES

TIMEOUT = 30  # seconds per request: a platform that hangs must not hold the release worker forever
MAX_CREATORS = 30  # as the reference: the top contributors by number of contributions
USER_AGENT = "research-repository-release-archiver"


class PlatformError(Exception):
    """The platform could not give what a release needs; the message says what and why, for the release's errors."""


@dataclass
class FetchedRelease:
    """What a release's metadata is derived from."""

    full_name: str  # owner/name
    tag: str
    name: str = ""  # the release's title; the tag stands in when empty
    notes: str = ""  # the release notes, Markdown
    published: str = ""  # YYYY-MM-DD
    tree_url: str = ""  # the browsable tree at the tag
    repository_description: str = ""
    license: str | None = None  # SPDX id; "NOASSERTION" when a license exists but is not recognised; None: none
    creators: list[dict[str, str]] = field(default_factory=list)  # [{name, affiliation?}], most active first
    files: dict[str, bytes] = field(default_factory=dict)  # the metadata files present at the tag


class ReleaseSource(Protocol):
    """Where a release comes from: a platform's API, or a local git checkout."""

    def fetch(self) -> FetchedRelease:
        """The release's facts and metadata files; PlatformError if they cannot be had."""
        ...

    def write_archive(self, store: FileStore, limit: int) -> StoredFile:
        """Stream the release archive (zip) into `store`; PlatformError if it cannot be had."""
        ...


class GitHubRelease:
    """One release of one repository, read through the REST API at `api_url`."""

    def __init__(self, api_url: str, full_name: str, tag: str, token: str | None = None) -> None:
        self.api_url = api_url.rstrip("/")
        self.full_name = full_name
        self.tag = tag
        self.headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28",
                        "User-Agent": USER_AGENT}  # fmt: skip
        if token:
            self.headers["Authorization"] = f"Bearer {token}"

    def fetch(self) -> FetchedRelease:
        repo_path = f"/repos/{self.full_name}"
        tag = quote(self.tag, safe="")
        with self._session() as session:
            repo = self._json(session, repo_path, "the repository")
            release = self._json(session, f"{repo_path}/releases/tags/{tag}", f"the release {self.tag}")
            license_ = self._json(session, f"{repo_path}/license", "the license", {"ref": self.tag}, optional=True)
            files = {}
            for name in METADATA_FILES:
                found = self._json(session, f"{repo_path}/contents/{quote(name)}", name, {"ref": self.tag}, True)
                if found is not None:
                    files[name] = _decode_contents(found, name)
            creators = self._creators(session, repo_path) or _author(release)
        spdx = ((license_ or {}).get("license") or {}).get("spdx_id") if license_ else None
        return FetchedRelease(
            full_name=repo.get("full_name") or self.full_name,
            tag=self.tag,
            name=release.get("name") or "",
            notes=release.get("body") or "",
            published=(release.get("published_at") or release.get("created_at") or "")[:10]
            or dt.date.today().isoformat(),
            tree_url=f"{repo.get('html_url') or 'https://github.com/' + self.full_name}/tree/{self.tag}",
            repository_description=repo.get("description") or "",
            license=spdx,
            creators=creators,
            files=files,
        )

    def write_archive(self, store: FileStore, limit: int) -> StoredFile:
        url = f"{self.api_url}/repos/{self.full_name}/zipball/{quote(self.tag, safe='')}"
        with self._session() as session:
            try:
                with session.get(url, stream=True, timeout=TIMEOUT) as response:
                    _check(response, "the release archive")
                    response.raw.decode_content = True
                    return store.write(_Reader(response.raw), limit)
            except requests.RequestException as exc:
                raise PlatformError(f"Could not download the release archive from {self.api_url}: {exc}.") from exc

    @contextmanager
    def _session(self) -> Iterator[requests.Session]:
        with requests.Session() as session:
            session.headers.update(self.headers)
            yield session

    def _json(self, session: requests.Session, path: str, what: str, params: dict | None = None,
              optional: bool = False) -> Any:  # fmt: skip
        try:
            response = session.get(self.api_url + path, params=params, timeout=TIMEOUT)
        except requests.RequestException as exc:
            raise PlatformError(f"Could not reach the platform at {self.api_url} for {what}: {exc}.") from exc
        with response:
            if optional and response.status_code == 404:
                return None
            _check(response, what)
            if response.status_code == 204:
                return None
            try:
                return response.json()
            except ValueError:
                raise PlatformError(f"The platform's answer for {what} is not JSON.") from None

    def _creators(self, session: requests.Session, repo_path: str) -> list[dict[str, str]]:
        """People (not bots) by contributions, with their profile name and company."""
        listed = self._json(session, f"{repo_path}/contributors", "the contributors", {"per_page": 100}) or []
        people = [c for c in listed if isinstance(c, dict) and c.get("type") == "User" and c.get("login")]
        people.sort(key=lambda c: -int(c.get("contributions") or 0))
        creators = []
        for person in people[:MAX_CREATORS]:
            login = person["login"]
            profile = self._json(session, f"/users/{quote(login)}", f"the profile of {login}", optional=True) or {}
            creator = {"name": profile.get("name") or login}
            if profile.get("company"):
                creator["affiliation"] = profile["company"].strip()
            creators.append(creator)
        return creators


def _author(release: dict) -> list[dict[str, str]]:
    """The release's author when the repository lists no contributors."""
    author = release.get("author") or {}
    return [{"name": author["login"]}] if author.get("login") else [{"name": "Unknown"}]


def _decode_contents(found: Any, name: str) -> bytes:
    if not isinstance(found, dict) or found.get("encoding") != "base64" or "content" not in found:
        raise PlatformError(f"The platform's answer for {name} is not a base64-encoded file.")
    return base64.b64decode(found["content"])


def _check(response: requests.Response, what: str) -> None:
    """PlatformError with a message a repository owner can act on, for any answer but success."""
    if response.ok:
        return
    try:
        detail = response.json().get("message", "")
    except ValueError:
        detail = ""
    status = f"{response.status_code} {detail or response.reason}".strip()
    if response.status_code == 401:
        advice = "the repository's access token is wrong, expired or revoked: enable the repository again with a new token"
    elif response.status_code in (403, 429):
        advice = "the platform refused or rate-limited the request: retry the release later"
    elif response.status_code == 404:
        advice = "not found: a private repository needs an access token (enable it again with one)"
    else:
        advice = "retry the release later"
    raise PlatformError(f"Could not fetch {what} from the platform ({status}): {advice}.")


class _Reader:
    """A file-like `read(n)` over urllib3's raw stream, so FileStore can stream it in chunks."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw

    def read(self, size: int = -1) -> bytes:
        return self.raw.read(size)
