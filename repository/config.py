"""Every setting, declared once with its type, default and help; read from the environment in one place.

Defaults give the embedded shape (SQLite, tantivy, files and keys under `INSTANCE_PATH`). A value that cannot be
parsed, or that names an unknown backend, stops start-up with a message naming the setting.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit


class StartupError(Exception):
    """A setting is wrong: the service refuses to start, naming it."""


def _bool(raw: str) -> bool:
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ValueError("expected true or false")


def _positive_int(raw: str) -> int:
    value = int(raw.strip())
    if value < 0:
        raise ValueError("expected a non-negative integer")
    return value


def _count(raw: str) -> int:
    value = int(raw.strip())
    if value < 1:
        raise ValueError("expected an integer of at least 1")
    return value


def _positive_float(raw: str) -> float:
    value = float(raw.strip())
    if not value >= 0:  # NaN too
        raise ValueError("expected a non-negative number")
    return value


def _str(raw: str) -> str:
    return raw.strip()


def _hex_colour(raw: str) -> str:
    value = raw.strip().lower()
    if len(value) != 7 or value[0] != "#" or any(c not in "0123456789abcdef" for c in value[1:]):
        raise ValueError("expected a colour as #rrggbb")
    return value


def _base_url(raw: str) -> str:
    parts = urlsplit(raw.strip())
    if parts.scheme not in {"http", "https"} or not parts.netloc:
        raise ValueError("expected an absolute http(s) URL such as https://repository.example.org")
    return raw.strip().rstrip("/")


def _database_url(raw: str) -> str:
    scheme = urlsplit(raw.strip()).scheme
    if not (scheme.startswith("sqlite") or scheme.startswith("postgresql")):
        raise ValueError("expected sqlite:///path or postgresql+psycopg://user@host/db")
    url = raw.strip()
    # psycopg 3 is the driver we ship; a bare postgresql:// URL would make SQLAlchemy look for psycopg2.
    if scheme in {"postgresql", "postgres"}:
        url = "postgresql+psycopg" + url[len(scheme):]
    return url


def _search_url(raw: str) -> str:
    scheme = urlsplit(raw.strip()).scheme
    if scheme not in {"embedded", "http", "https"}:
        raise ValueError("expected embedded:///path/to/index or http(s)://opensearch-host:9200")
    return raw.strip()


def _storage_uri(raw: str) -> str:
    scheme = urlsplit(raw.strip()).scheme
    if scheme not in {"file", "memory", "redis", "rediss", "redis+sentinel", "redis+cluster"}:
        raise ValueError("expected file:///path, memory:// or redis://host:6379/0")
    if scheme == "file" and not urlsplit(raw.strip()).path.strip("/"):
        raise ValueError("expected a file path such as file:///srv/instance/ratelimit.counters")
    return raw.strip()


def _limits(raw: str) -> str:
    from limits import parse_many

    parse_many(raw)  # raises ValueError with a useful message on a bad limit string
    return raw.strip()


def _email(raw: str) -> str:
    # OAI-PMH's schema wants a dotted domain: refuse what harvesters would refuse.
    if not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", raw.strip()):
        raise ValueError("expected an e-mail address such as admin@repository.example.org")
    return raw.strip()


def _optional_email(raw: str) -> str:
    return _email(raw) if raw.strip() else ""


def _choice(*allowed: str) -> Callable[[str], str]:
    def parse(raw: str) -> str:
        value = raw.strip().lower()
        if value not in allowed:
            raise ValueError("expected one of " + ", ".join(allowed))
        return value

    return parse


def _oai_prefixes(raw: str) -> str:
    from serializers import OAI_FORMATS  # imported here: the serializers take seconds to import

    names = tuple(dict.fromkeys(part.strip() for part in raw.split(",") if part.strip()))
    unknown = [name for name in names if name not in OAI_FORMATS]
    if unknown:
        raise ValueError(f"unknown metadataPrefix {', '.join(unknown)}; expected some of {', '.join(OAI_FORMATS)}")
    return ",".join(names)


# The specification's prefixes. The production one belongs to the reference service: DataCite refuses (or files under
# that service) any DOI another repository mints with it, so REGISTRAR=datacite needs DOI_PREFIX set explicitly.
DEFAULT_DOI_PREFIX = "10.5281"
DEFAULT_SANDBOX_DOI_PREFIX = "10.5072"


# Values copied from examples and templates: a service started with one signs with a key anyone can read.
PLACEHOLDER_SECRETS = frozenset({"change-me", "changeme", "change_me", "changethis", "secret", "secret-key",
                                 "secret_key", "placeholder", "replace-me", "your-secret-key", "xxx", "default"})


def _secret_key(raw: str) -> str:
    if raw.strip().lower() in PLACEHOLDER_SECRETS:
        raise ValueError("a placeholder, not a secret: leave it empty (one is generated under INSTANCE_PATH) or "
                         "generate one (python3 scripts/generate_env.py writes a .env for docker compose)")
    return raw.strip()


def _doi_prefix(raw: str) -> str:
    value = raw.strip()
    if not re.fullmatch(r"10\.\d+(\.\d+)*", value):
        raise ValueError("expected a DOI prefix such as 10.12345 (10. followed by digits, dots allowed)")
    return value


def setting(default: Any, help: str, parse: Callable[[str], Any] = _str, secret: bool = False) -> Any:
    """Declare one setting: its default (may refer to other settings as `{INSTANCE_PATH}`), help and parser; a
    `secret` one is left out of the settings' repr (nothing that prints them shows it)."""
    return field(default=default, repr=not secret, metadata={"help": help, "parse": parse})


@dataclass(frozen=True)
class Settings:
    """The service's settings. Build with `Settings.from_env()`; tests pass overrides to `Settings.build()`."""

    INSTANCE_PATH: str = setting("./instance", "Directory holding every file of the embedded shape.")
    DATABASE_URL: str = setting(
        "sqlite:///{INSTANCE_PATH}/repository.db",
        "Source of truth: sqlite:///path (embedded) or postgresql+psycopg://user@host/db (scaled).",
        _database_url,
    )
    SEARCH_URL: str = setting(
        "embedded://{INSTANCE_PATH}/index",
        "Search engine: embedded:///path (tantivy, default) or https://opensearch-host:9200.",
        _search_url,
    )
    SEARCH_WINDOW: int = setting(
        10_000, "Deepest result reachable by page/size; links.next then carries a cursor instead.", _positive_int
    )
    SEARCH_CACHE_ENTRIES: int = setting(
        256, "Search results each server process keeps until the next index commit (embedded engine; 0: off).",
        _positive_int,
    )
    SEARCH_BULK_HEAP_MB: int = setting(
        0, "Memory of the index writer that a rebuild (scripts/reindex.py) loads the embedded engine with, in MB; 0: a "
        "quarter of the machine's memory, at most 4096. Less writes and merges more segments: at a million records "
        "1000 took 187 s, 4096 123 s.", _positive_int,
    )
    SEARCH_INDEX_PREFIX: str = setting("records", "Name (OpenSearch alias) of the records index.")
    SEARCH_REPLICAS: int = setting(
        0, "Replicas of each shard of the records index on OpenSearch (0 on one node; 1 or more on a cluster, so "
        "that a node going away loses no shard). Applies to indices created from then on (the next reindex).",
        _positive_int,
    )
    SEARCH_CA_CERTS: str = setting("", "CA bundle to verify OpenSearch's certificate (empty: the system's).")
    SEARCH_VERIFY_CERTS: bool = setting(
        True, "Verify OpenSearch's TLS certificate (switch off only on a private network with a demo certificate).", _bool
    )
    FILES_ROOT: str = setting(
        "{INSTANCE_PATH}/files", "Directory where uploaded file contents are stored (with FILES_STORE=s3: the "
        "local staging area of uploads and previews only).")
    FILES_STORE: str = setting(
        "local", "Where file contents live: `local` (FILES_ROOT) or `s3` (an S3-compatible object store, the S3_* "
        "settings; docs/operators/object-storage.md).", _choice("local", "s3"))
    S3_ENDPOINT_URL: str = setting("", "URL of the S3 service (e.g. http://seaweedfs:8333); empty: AWS's own.")
    S3_BUCKET: str = setting("", "Bucket holding the file contents (FILES_STORE=s3).")
    S3_REGION: str = setting("us-east-1", "Region of the bucket (signing; most S3-compatible services ignore it).")
    S3_ACCESS_KEY_ID: str = setting("", "Access key of the S3 service; empty: boto3's usual sources.")
    S3_SECRET_ACCESS_KEY: str = setting("", "Secret key of the S3 service (never logged).",
                                         secret=True)
    S3_ADDRESSING_STYLE: str = setting(
        "path", "`path` (bucket in the path: SeaweedFS, MinIO, Ceph) or `virtual` (bucket in the host name) or "
        "`auto`.", _choice("path", "virtual", "auto"))
    S3_CREATE_BUCKET: bool = setting(
        False, "Create S3_BUCKET at start-up when it does not exist (otherwise start-up stops, naming it).", _bool)
    S3_PRESIGNED_DOWNLOADS: bool = setting(
        False, "Downloads of files answer a redirect to a short-lived presigned URL of the store (bytes flow from "
        "the store, not through the service), given only to who may read the file.", _bool)
    S3_PRESIGNED_SECONDS: int = setting(300, "Lifetime of a presigned download URL, in seconds.", _count)
    BASE_URL: str = setting(
        "https://127.0.0.1:5000", "Public root of the service, used in every link it gives out.", _base_url
    )
    SANDBOX: bool = setting(False, "Test instance: new DOIs get SANDBOX_DOI_PREFIX instead of DOI_PREFIX.", _bool)
    DOI_PREFIX: str = setting(
        DEFAULT_DOI_PREFIX,
        "Registrant prefix of new DOIs (10.NNNN): your DataCite prefix; required explicitly with REGISTRAR=datacite. "
        "Existing DOIs keep theirs.",
        _doi_prefix,
    )
    SANDBOX_DOI_PREFIX: str = setting(
        DEFAULT_SANDBOX_DOI_PREFIX, "Prefix of new DOIs on a test instance (SANDBOX=true).", _doi_prefix
    )
    DOI_NAMESPACE: str = setting("repository", "DOI suffix namespace: DOIs are <prefix>/<namespace>.<recid>.")
    REGISTRAR: str = setting(
        "local", "DOI registration: local (recorded only) or datacite (DataCite REST API).", _choice("local", "datacite")
    )
    DATACITE_URL: str = setting("https://api.datacite.org", "DataCite REST API root.", _base_url)
    DATACITE_USERNAME: str = setting("", "DataCite repository account id.")
    DATACITE_PASSWORD: str = setting("", "DataCite repository account password.")
    DOI_FAILURE_NOTIFY_ATTEMPTS: int = setting(
        10, "Failed attempts in a row after which a DOI registration is logged as an error and its depositor mailed "
        "(once; retries go on). With the retries' backoff the 10th comes about 17 minutes after the first. "
        "0: never mail.", _positive_int,
    )
    SECRET_KEY: str = setting(
        "", "Key signing resumption tokens and cursors; empty means one generated once under INSTANCE_PATH.",
        _secret_key,
    )
    TLS_CERT: str = setting("{INSTANCE_PATH}/tls/cert.pem", "TLS certificate (PEM) served by scripts/serve.py.")
    TLS_KEY: str = setting("{INSTANCE_PATH}/tls/key.pem", "TLS private key (PEM) served by scripts/serve.py.")
    ALLOW_HTTP: bool = setting(False, "Accept plain-HTTP requests (local development only).", _bool)
    TRUSTED_PROXIES: int = setting(
        0, "Number of reverse proxies whose X-Forwarded-Proto/-For headers are trusted.", _positive_int
    )
    HSTS_MAX_AGE: int = setting(
        31536000, "Strict-Transport-Security max-age (seconds) sent on HTTPS responses; 0: not sent.", _positive_int
    )
    AUTO_MIGRATE: str = setting(
        "auto",
        "Run database migrations at start-up: auto (only on SQLite), true or false (use scripts/migrate.py).",
        _choice("auto", "true", "false"),
    )
    RATELIMIT_ENABLED: bool = setting(True, "Enforce rate limits (switch off only for private benchmarks).", _bool)
    RATELIMIT_STORAGE_URI: str = setting(
        "file://{INSTANCE_PATH}/ratelimit.counters",
        "Where rate-limit counters live: file:///path (shared by the processes of one machine), redis://host:6379/0 "
        "(shared by several machines) or memory:// (each process its own).",
        _storage_uri,
    )
    RATELIMIT_GUEST: str = setting("60/minute;2000/hour", "Limits for requests without a token (per address).", _limits)
    RATELIMIT_USER: str = setting("100/minute;5000/hour", "Limits for authenticated requests (per user).", _limits)
    RATELIMIT_OAI: str = setting("120/minute", "Limit on the OAI-PMH endpoint.", _limits)
    RATELIMIT_THUMBNAILS: str = setting("20/minute", "Limit on image thumbnails.", _limits)
    THUMBNAIL_MAX_PIXELS: int = setting(
        40_000_000,
        "Largest image (width x height, after a JPEG's reduced-scale decoding) decoded for a thumbnail; a larger "
        "one answers 422. Each decoding holds up to 4 bytes per pixel.",
        _positive_int,
    )
    THUMBNAIL_CONCURRENCY: int = setting(
        2, "Thumbnails decoded at once on this machine (all processes); a request past it answers 503.", _positive_int
    )
    BENCH_CEILING_ENDPOINT: bool = setting(
        False, "Serve /api/_ceiling, a fixed 5 KB JSON answer: the ceiling bench/bench.py compares against.", _bool
    )
    BACKGROUND_WORKER: bool = setting(
        True, "Run the outbox worker (index and DOI retries) as a thread in each server process (embedded shape).", _bool
    )
    FILES_SWEEP_INTERVAL: int = setting(
        600, "Seconds between two sweeps of FILES_ROOT by the background worker (thread or scripts/worker.py).",
        _positive_int,
    )
    EXPORTS_ROOT: str = setting(
        "{INSTANCE_PATH}/exports", "Directory holding the full public exports served at /api/exports/ "
        "(docs/operators/export.md).")
    EXPORT_INTERVAL: int = setting(
        86400, "Seconds between two full public exports written by the background worker (thread or "
        "scripts/worker.py); 0: none (the export command still writes them).", _positive_int,
    )
    METADATA_ONLY_DEPOSITS: bool = setting(
        False, "Whether users may publish metadata-only records (`metadata.files.enabled: false`, no files, a link "
        "to where the work is held) through the deposit API and form; imports create them whatever this says.",
        _bool,
    )
    EXPORT_KEEP: int = setting(
        3, "How many full public exports are kept; each new one removes the oldest beyond this number.",
        _count,
    )
    FILES_ORPHAN_AGE: int = setting(
        3600,
        "Age in seconds past which the sweep removes a file no row points at (a crashed upload's temporary file); "
        "an upload in progress keeps its temporary file younger.",
        _positive_int,
    )
    MULTIPART_EXPIRY_DAYS: int = setting(
        7, "Days after which an unfinished multipart upload to a bucket expires; the worker's sweep then removes its "
        "parts.", _positive_int,
    )
    BUCKET_QUOTA_BYTES: int = setting(
        50 * 10**9, "Most bytes one deposit's files may take (as the reference: 50 GB), open multipart uploads "
        "counted at their full size; past it uploads answer 413. 0: no limit.", _positive_int,
    )
    MULTIPART_USER_RESERVED_BYTES: int = setting(
        50_000_000_000,
        "Most bytes one user's open multipart uploads may reserve at once, across all their deposits (each reserves "
        "its whole size on disk at initiate); past it initiating answers 413. 0: no limit.",
        _positive_int,
    )
    USER_QUOTA_BYTES: int = setting(
        0, "Most bytes one user's files may take in all (drafts and records; a file shared by versions counts once; "
        "open multipart uploads at their full size); past it uploads answer 413. 0: no limit (the reference has "
        "none).", _positive_int,
    )
    FIXITY_BYTES_PER_SECOND: int = setting(
        50 * 1024 * 1024, "Read rate of scripts/fixity.py (re-hashing stored files), so the check does not starve "
        "downloads; 0: unthrottled.", _positive_int,
    )
    AUDIT_LOG_DAYS: int = setting(
        730, "Days the audit log keeps an entry (docs/operators/administration.md#audit-log); the worker deletes "
        "older ones. 0: keep every entry.", _positive_int,
    )
    MODERATE_FIRST_DEPOSITS: bool = setting(
        False, "Hold a user's publications for approval until one of theirs was approved: a held record is not public, "
        "not searchable, not harvested and has no registered DOI (docs/operators/moderation.md).", _bool,
    )
    MODERATION_BURST_RECORDS: int = setting(
        0, "Hold a publication for review when its owner published this many records within "
        "MODERATION_BURST_MINUTES (docs/operators/moderation.md#rules). 0: no such rule.", _positive_int,
    )
    MODERATION_BURST_MINUTES: int = setting(
        60, "The window of MODERATION_BURST_RECORDS, in minutes.", _positive_int,
    )
    MODERATION_LINKS_PERCENT: int = setting(
        0, "Hold a publication for review when links make up at least this share (in percent) of its description's "
        "text (docs/operators/moderation.md#rules). 0: no such rule.", _positive_int,
    )
    RECORD_DELETE_DAYS: int = setting(
        30, "Days after a version is first published during which its owner may delete it (a tombstone stays); "
        "later only a deletion request to the administrators. 0: owners never delete.", _positive_int,
    )
    FILES_EDIT_DAYS: int = setting(
        30, "Days after a version is first published during which its owner may unlock its files once to fix "
        "them (same DOI, every change kept in the file history); later only a new version. 0: never.",
        _positive_int,
    )
    MAX_JSON_BYTES: int = setting(2_000_000, "Largest accepted JSON request body, in bytes.", _positive_int)
    MAX_MULTIPART_BYTES: int = setting(
        100 * 1024 * 1024, "Largest file accepted by the old multipart files interface, in bytes.", _positive_int
    )
    OAI_HOST: str = setting("", "Host in OAI identifiers oai:<host>:<recid>; empty means BASE_URL's host.")
    OAI_PAGE_SIZE: int = setting(100, "Records per OAI-PMH page.", _positive_int)
    OAI_PRERENDER: str = setting(
        "oai_dc,oai_registry",
        "OAI-PMH formats rendered whenever a record is indexed, so harvests serve stored XML (the others are "
        "rendered at their first harvest and kept).",
        _oai_prefixes,
    )
    REPOSITORY_NAME: str = setting("Research Repository", "Name shown in OAI-PMH Identify and exports.")
    SITE_CONTACT_EMAIL: str = setting(
        "", "Contact address shown in the footer of every page (docs/operators/branding-and-pages.md); empty: none. "
        "Administrators may change it on the site page.", _optional_email,
    )
    SITE_PRIMARY_COLOUR: str = setting(
        "#0b57a4", "Primary colour of the pages (links, buttons), #rrggbb; administrators may change it on the site "
        "page, which refuses a colour with less than 4.5:1 contrast against white.", _hex_colour,
    )
    SITE_IMAGE_MAX_BYTES: int = setting(
        256 * 1024, "Largest logo or favicon an administrator may upload, in bytes.", _count,
    )
    SIGNUP_REQUIRES_TERMS: bool = setting(
        False, "Sign-up asks to accept the current Terms of use (the content page `terms`); each user's accepted "
        "version is recorded.", _bool,
    )
    SITEMAP_SIZE: int = setting(
        10_000, "Record ids per file of /sitemap.xml (a file lists at most this many URLs; the protocol allows "
        "50,000).", _positive_int,
    )
    ADMIN_EMAIL: str = setting(
        "repository-admin@example.org", "Administrator e-mail shown in OAI-PMH Identify.", _email
    )
    RELEASES_API_URL: str = setting(
        "https://api.github.com", "REST API root of the code-hosting platform whose releases are archived.", _base_url
    )
    RELEASES_MAX_ARCHIVE_BYTES: int = setting(
        2 * 1024**3, "Largest release archive (zip) accepted from a code-hosting platform, in bytes.", _positive_int
    )
    DATADESC_BLOCK_PUBLISH: bool = setting(
        False, "Refuse to publish a deposit while any of its data-description documents is invalid or pending.", _bool
    )
    DATADESC_GUEST_MAX_BYTES: int = setting(
        2_000_000,
        "Largest request a guest (no token) may send to /api/datadesc/validate, in bytes; with a token the limit "
        "is MAX_MULTIPART_BYTES (and a document itself MAX_JSON_BYTES). Larger data: deposit it, validation runs "
        "in the background there.",
        _positive_int,
    )
    DATADESC_VALIDATE_SECONDS: float = setting(
        10.0,
        "CPU seconds one /api/datadesc/validate request may spend checking table rows; past them the report "
        "says where the check stopped (code time-limit).",
        _positive_float,
    )
    DATADESC_ASYNC_BYTES: int = setting(
        5_000_000,
        "A token holder's /api/datadesc/validate request larger than this (document and files, in bytes) is "
        "validated whole in the background: 202 and a job to poll (?async=true|false chooses explicitly).",
        _positive_int,
    )
    DATADESC_JOB_RETENTION: int = setting(
        86400,
        "Seconds a background validation job (its uploaded files and its report, under "
        "INSTANCE_PATH/validation-jobs) is kept after its submission.",
        _positive_int,
    )
    DATADESC_JOBS_PER_USER: int = setting(
        5, "Background validation jobs a user may have waiting at once; past them, 429.", _positive_int
    )
    MAIL_SMTP_HOST: str = setting(
        "", "SMTP server the worker sends mail through; empty: each message is written as an .eml file under "
        "INSTANCE_PATH/mail (embedded shape)."
    )
    MAIL_SMTP_PORT: int = setting(587, "Port of the SMTP server.", _positive_int)
    MAIL_SMTP_TLS: str = setting(
        "starttls", "TLS to the SMTP server: starttls (upgrade a plain connection), ssl (TLS from the start) or none.",
        _choice("starttls", "ssl", "none"),
    )
    MAIL_SMTP_USER: str = setting("", "User to log in to the SMTP server as; empty: no login.")
    MAIL_SMTP_PASSWORD: str = setting("", "Password of MAIL_SMTP_USER.")
    MAIL_FROM: str = setting("", "From address of the service's mail; empty: ADMIN_EMAIL.", _optional_email)
    SIGNUP_ENABLED: bool = setting(True, "Let people create their own account at /signup/.", _bool)
    PASSWORD_MIN_LENGTH: int = setting(10, "Fewest characters an account's password may have.", _positive_int)
    PASSWORD_HASH_PROFILE: str = setting(
        "rfc9106-low-memory",
        "argon2id parameters of new password hashes: rfc9106-low-memory (3 passes, 64 MiB), rfc9106-high-memory "
        "(1 pass, 2 GiB) or cheapest (for test suites only: no protection). Older hashes are upgraded at sign-in.",
        _choice("rfc9106-low-memory", "rfc9106-high-memory", "cheapest"),
    )
    SESSION_LIFETIME_DAYS: int = setting(
        14, "Days a browser stays signed in without signing in again.", _positive_int
    )
    SESSION_MAX_DAYS: int = setting(
        30, "Days a sign-in lasts at most, however often it is used: then the browser signs in again.", _positive_int
    )
    CONFIRM_LINK_HOURS: int = setting(
        48, "Hours an e-mail confirmation link (sign-up, changed address, access request) stays valid.", _positive_int
    )
    RESET_LINK_HOURS: int = setting(2, "Hours a password reset link stays valid.", _positive_int)
    RATELIMIT_SIGNIN: str = setting(
        "10/15minutes;50/day",
        "Limits on sign-in, sign-up and reset attempts, counted per client address and per e-mail address from each "
        "client (never per e-mail address alone: nobody locks an owner out), and on current-password checks per "
        "account.", _limits,
    )
    OIDC_ISSUER: str = setting(
        "", "OpenID Connect provider to offer for sign-in (e.g. https://orcid.org); empty: none offered."
    )
    OIDC_CLIENT_ID: str = setting("", "Client id of this service at OIDC_ISSUER.")
    OIDC_CLIENT_SECRET: str = setting("", "Client secret of this service at OIDC_ISSUER.")
    OIDC_LABEL: str = setting("Sign in with ORCID", "Label of the OpenID Connect sign-in button.")
    LOG_LEVEL: str = setting("INFO", "Logging level.", _choice("debug", "info", "warning", "error"))
    LOG_FORMAT: str = setting(
        "text", "Log lines as text or as JSON objects (json: time, level, logger, message, and request_id, user_id "
        "and route on every line written for a request, gunicorn's access log included).", _choice("text", "json"),
    )
    METRICS_TOKEN: str = setting(
        "", "Bearer token Prometheus sends to scrape /metrics; empty: /metrics is off (404)."
    )
    READY_MIN_FREE_BYTES: int = setting(
        1_000_000_000, "/readyz answers 503 when the disk of FILES_ROOT (or of the SQLite database) has fewer free "
        "bytes than this; a multipart upload may reserve only what leaves this much free (507 otherwise).",
        _positive_int,
    )
    READY_MAX_OUTBOX_AGE_SECONDS: int = setting(
        3600, "/readyz answers 503 when the oldest entry of the outbox (indexing, DOI registration) has waited "
        "longer than this many seconds; 0: not checked.", _positive_int,
    )
    COMPRESS_MIN_BYTES: int = setting(
        1000, "JSON, XML and HTML responses at least this large are compressed (zstd, brotli or gzip, as the "
        "client accepts); file downloads never are.", _positive_int,
    )

    @classmethod
    def declarations(cls) -> list[dataclasses.Field]:
        """The declared settings, in order (for the settings table of docs/operators/settings.md, and validation)."""
        return [f for f in dataclasses.fields(cls) if "help" in f.metadata]

    @classmethod
    def build(cls, values: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Parse raw string `values` (e.g. the environment) plus typed `overrides`; StartupError names a bad one."""
        values = values or {}
        parsed: dict[str, Any] = {}
        for f in cls.declarations():
            if f.name in overrides:
                parsed[f.name] = overrides[f.name]
                continue
            raw = values.get(f.name)
            if raw is None:
                parsed[f.name] = f.default
                continue
            try:
                parsed[f.name] = f.metadata["parse"](raw)
            except ValueError as exc:
                raise StartupError(f"Setting {f.name}={raw!r} is invalid: {exc}") from None
        unknown = set(overrides) - {f.name for f in cls.declarations()}
        if unknown:
            raise StartupError("Unknown setting(s): " + ", ".join(sorted(unknown)))
        _check_doi_prefix(parsed, explicit=set(overrides) | {name for name in values if name in parsed})
        if parsed["FILES_STORE"] == "s3" and not parsed["S3_BUCKET"]:
            raise StartupError("Setting S3_BUCKET is required when FILES_STORE=s3: name the bucket that holds the "
                               "file contents (docs/operators/object-storage.md).")
        instance = os.path.abspath(str(parsed["INSTANCE_PATH"]))
        parsed["INSTANCE_PATH"] = instance
        for name, value in parsed.items():
            if isinstance(value, str) and "{INSTANCE_PATH}" in value:
                parsed[name] = value.replace("{INSTANCE_PATH}", instance)
        return cls(**parsed)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Read every setting from the environment (the only place the environment is read)."""
        return cls.build(os.environ if environ is None else environ)

    @property
    def doi_prefix(self) -> str:
        """The prefix of DOIs minted from now on (DOIs already given keep theirs)."""
        return self.SANDBOX_DOI_PREFIX if self.SANDBOX else self.DOI_PREFIX

    @property
    def oai_prerender(self) -> list[str]:
        """The metadataPrefixes of OAI_PRERENDER."""
        return [name for name in self.OAI_PRERENDER.split(",") if name]

    @property
    def oai_host(self) -> str:
        return self.OAI_HOST or (urlsplit(self.BASE_URL).hostname or "localhost")

    @property
    def migrate_on_start(self) -> bool:
        if self.AUTO_MIGRATE == "auto":
            return self.DATABASE_URL.startswith("sqlite")
        return self.AUTO_MIGRATE == "true"


def _check_doi_prefix(parsed: dict[str, Any], explicit: set[str]) -> None:
    """Prefixes are well-formed; REGISTRAR=datacite registers DOIs for real, so it refuses a prefix nobody chose."""
    for name in ("DOI_PREFIX", "SANDBOX_DOI_PREFIX"):  # a typed override skips the parser: check it here too
        try:
            _doi_prefix(str(parsed[name]))
        except ValueError as exc:
            raise StartupError(f"Setting {name}={parsed[name]!r} is invalid: {exc}") from None
    if parsed["REGISTRAR"] != "datacite":
        return
    name = "SANDBOX_DOI_PREFIX" if parsed["SANDBOX"] else "DOI_PREFIX"
    if name not in explicit:
        raise StartupError(
            f"Setting {name} is required when REGISTRAR=datacite: the default {parsed[name]} is not your prefix "
            "(it belongs to another DOI registrant), so DataCite would refuse the DOIs or file them under someone "
            f"else. Set {name} to the prefix of your DataCite repository account (e.g. 10.12345)."
        )


def settings_table() -> str:
    """The settings table of docs/operators/settings.md, generated from the declarations so it cannot drift."""
    rows = ["| setting | default | what it does |", "|---|---|---|"]
    for f in Settings.declarations():
        default = f.default
        if isinstance(default, bool):
            default = str(default).lower()
        rows.append(f"| `{f.name}` | `{default}` | {f.metadata['help']} |")
    return "\n".join(rows)
