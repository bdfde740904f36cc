"""File contents in an S3-compatible object store (FILES_STORE=s3; docs/operators/object-storage.md), behind the
interface of the local store (repository.files.store.FileStore), through boto3.

An object's key is the uri a local store would use (`ab/cd/<file id>`), so `repository-admin files migrate-to-s3`
copies a directory's files under the same names. A PUT streams: the body is read a part at a time, hashed on the
way (MD5 and SHA-256, as the local store), and sent as an S3 multipart upload of PART_SIZE parts, a few in flight
at once (memory: PART_SIZE times IN_FLIGHT + 1 per upload, whatever the file's size); a file smaller than one part
is one PutObject. An object becomes visible only when its upload completes: a PUT cut short leaves nothing
visible, and the incomplete upload is aborted (at once, or by the orphan sweep when the process died).

FILES_ROOT stays a local directory: the staging area of the resumable multipart uploads and a read-through cache
of the files that previews, data-description checks and thumbnails read as local files (`path`). Stored files
never change (a new version is a new file id), so a cached copy is never stale; the sweep removes old copies.

Errors of the store become answers: unreachable or failing (5xx) -> 503 with Retry-After, out of space -> 507;
wrong credentials or a missing bucket stop start-up (`check`)."""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from typing import Any
from urllib.parse import quote

import boto3  # type: ignore[import-untyped]  # no type information shipped
import botocore.exceptions  # type: ignore[import-untyped]
import botocore.handlers  # type: ignore[import-untyped]
from botocore.config import Config  # type: ignore[import-untyped]

from repository.config import Settings, StartupError
from repository.errors import ApiError, InsufficientStorage, ServiceUnavailable
from repository.files import memory
from repository.files.store import (
    CACHE_DIR,
    CHUNK,
    TMP_DIR,
    FileStore,
    Readable,
    StoredFile,
    copy_stream,
    discard,
    file_uri,
)

PART_SIZE = 8 * 1024 * 1024  # S3's parts are at least 5 MiB (but the last); boto3's own transfers use 8 MiB
IN_FLIGHT = 4  # parts sent at once by one upload
STAGED = ".multipart/"  # the multipart protocol's parts under S3's minimum part size (repository.files.objectparts)
RETRY_AFTER = "30"  # seconds, on a 503 of a store that cannot be reached

log = logging.getLogger("repository.files.s3store")

_UNREACHABLE = (
    botocore.exceptions.EndpointConnectionError,
    botocore.exceptions.ConnectionClosedError,
    botocore.exceptions.ConnectTimeoutError,
    botocore.exceptions.ReadTimeoutError,
    botocore.exceptions.ResponseStreamingError,
)
_FULL_CODES = frozenset({"InsufficientStorage", "QuotaExceeded", "XMinioStorageFull", "StorageFull"})


def unavailable() -> ServiceUnavailable:
    return ServiceUnavailable("The file storage is not available: nothing was stored. Retry later.",
                              headers={"Retry-After": RETRY_AFTER})


def s3_error(exc: BaseException) -> ApiError | None:
    """The answer for an error of the S3 client: 507 when the store refuses for space, 503 (Retry-After) when it
    cannot be reached, fails (5xx) or refuses our credentials; None for anything else (a client's own errors)."""
    if isinstance(exc, _UNREACHABLE):
        return unavailable()
    if isinstance(exc, botocore.exceptions.ClientError):
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        if exc.response.get("Error", {}).get("Code") in _FULL_CODES or status == 507:
            return InsufficientStorage("The server's storage is full: nothing was stored. Retry later.")
        return unavailable()
    return None


def _missing(exc: botocore.exceptions.ClientError) -> bool:
    return exc.response.get("Error", {}).get("Code") in {"404", "NoSuchKey", "NotFound"}


class S3Store(FileStore):
    """File contents as objects of `bucket`; `root` is the local staging area (FileStore's temporary area)."""

    kind = "s3"

    def __init__(self, root: str, bucket: str, *, endpoint_url: str = "", region: str = "us-east-1",
                 access_key_id: str = "", secret_access_key: str = "", addressing_style: str = "path",
                 create_bucket: bool = False, presigned_seconds: int = 300) -> None:
        super().__init__(root)
        self.bucket, self.create_bucket, self.presigned_seconds = bucket, create_bucket, presigned_seconds
        self.endpoint_url = endpoint_url
        credentials = {"aws_access_key_id": access_key_id, "aws_secret_access_key": secret_access_key} \
            if access_key_id else {}
        self.client = boto3.session.Session().client(
            "s3", endpoint_url=endpoint_url or None, region_name=region, **credentials,
            # payload_signing_enabled: the bodies' integrity rides on the CRC32 botocore adds to each PUT (checked by
            # the store) and on TLS, not on a SHA-256 of each body in the signature, which botocore computes over
            # plain HTTP unless told not to: the service hashes every byte with MD5 and SHA-256 already
            # (docs/operators/object-storage.md#speed).
            config=Config(signature_version="s3v4",
                          s3={"addressing_style": addressing_style, "payload_signing_enabled": False},
                          connect_timeout=5, read_timeout=60, max_pool_connections=32,
                          # A store that went away answers quickly: two tries, not boto3's default backoff.
                          retries={"mode": "standard", "total_max_attempts": 2}))
        # A part's bytes go to the store as they are: botocore would wrap them in a BytesIO, read back 16 KiB at a
        # time to send (a copy and a system call each) and again for the CRC32. Measured on the S3 bench's upload:
        # about 0.35 CPU seconds a GiB fewer in the workers (docs/operators/object-storage.md#speed).
        wrap = getattr(botocore.handlers, "convert_body_to_file_like_object", None)
        if wrap is not None:
            self.client.meta.events.unregister("before-parameter-build.s3.UploadPart", wrap)
        os.makedirs(os.path.join(self.root, TMP_DIR, CACHE_DIR), mode=0o700, exist_ok=True)

    @classmethod
    def from_settings(cls, settings: Settings) -> S3Store:
        return cls(settings.FILES_ROOT, settings.S3_BUCKET, endpoint_url=settings.S3_ENDPOINT_URL,
                   region=settings.S3_REGION, access_key_id=settings.S3_ACCESS_KEY_ID,
                   secret_access_key=settings.S3_SECRET_ACCESS_KEY, addressing_style=settings.S3_ADDRESSING_STYLE,
                   create_bucket=settings.S3_CREATE_BUCKET, presigned_seconds=settings.S3_PRESIGNED_SECONDS)

    def __repr__(self) -> str:  # never the credentials
        return f"S3Store(endpoint={self.endpoint_url or 'aws'!r}, bucket={self.bucket!r})"

    def check(self) -> None:
        """StartupError unless the bucket can be used with these credentials (created first when allowed)."""
        where = f"bucket {self.bucket!r} at {self.endpoint_url or 'AWS S3'}"
        try:
            self.client.head_bucket(Bucket=self.bucket)
            return
        except _UNREACHABLE as exc:
            raise StartupError(f"The S3 store cannot be reached ({where}): {exc}. Check S3_ENDPOINT_URL and that "
                               "the service is running.") from None
        except botocore.exceptions.ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            if code in {"403", "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch"}:
                raise StartupError(f"The S3 store refused the credentials for {where} ({code}): check "
                                   "S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY.") from None
            if not _missing(exc) and code != "NoSuchBucket":
                raise StartupError(f"The S3 store answered {code} for {where}.") from None
        if not self.create_bucket:
            raise StartupError(f"The S3 {where} does not exist: create it, or set S3_CREATE_BUCKET=true to let the "
                               "service create it at start-up.")
        try:
            self.client.create_bucket(Bucket=self.bucket)
        except botocore.exceptions.BotoCoreError as exc:
            raise StartupError(f"Cannot create the S3 {where}: {exc}") from None
        except botocore.exceptions.ClientError as exc:
            if exc.response.get("Error", {}).get("Code") not in {"BucketAlreadyOwnedByYou", "BucketAlreadyExists"}:
                raise StartupError(f"Cannot create the S3 {where}: {exc}") from None
        log.info("created the S3 %s", where)

    def reachable(self) -> bool:
        try:
            self.client.head_bucket(Bucket=self.bucket)
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
            log.warning("readiness: the S3 bucket %r cannot be reached: %s", self, exc)
            return False
        return True

    # Writing

    def write(self, stream: Readable, limit: int | None = None, durable: bool = True) -> StoredFile:
        """Stream `stream` into a new object (see the module's docstring); PayloadTooLarge past `limit` bytes."""
        file_id = str(uuid.uuid4())
        uri = file_uri(file_id)
        digest, sha256 = hashlib.md5(usedforsecurity=False), hashlib.sha256()
        # Reads of a whole part: each one goes to the store as it is, never joined or copied.
        size = self._send(uri, lambda out: copy_stream(stream, out, (digest, sha256), limit, PART_SIZE))
        return StoredFile(file_id, uri, size, "md5:" + digest.hexdigest(), sha256.hexdigest())

    def sync(self) -> None:
        """Nothing to flush: an object is stored once its upload is acknowledged."""

    def adopt(self, source: str, file_id: str) -> str:
        """Upload the local file `source` as `file_id` (its hashes are known already); `source` stays until the
        caller removes it, so a failed recording can be retried (`unadopt`)."""
        uri = file_uri(file_id)
        self.put_file(source, uri)
        return uri

    def put_file(self, source: str, uri: str) -> None:
        """Upload the local file `source` as the object `uri` (streamed in parts)."""
        def fill(out: _PartWriter) -> int:
            with open(source, "rb") as handle:
                while chunk := handle.read(PART_SIZE):
                    out.write(chunk)
            return 0

        self._send(uri, fill)

    def _send(self, uri: str, fill: Callable[[_PartWriter], int]) -> int:
        """Upload as `fill(writer)` writes (it returns a size); the upload aborted if anything fails, the store's
        errors as answers (503, 507)."""
        out = _PartWriter(self.client, self.bucket, uri)
        try:
            size = fill(out)
            out.finish()
        except BaseException as exc:
            out.abort()
            error = s3_error(exc)
            if error is None:
                raise
            log.error("cannot write to the S3 store %r: %s", self, exc)
            raise error from exc
        finally:
            memory.after_transfer(out.sent)
        return size

    def place(self, source: str, uri: str) -> None:
        self.put_file(source, uri)
        os.unlink(source)

    def is_empty(self) -> bool:
        return next(iter(self.stored()), None) is None

    def unadopt(self, uri: str, source: str) -> None:
        self.discard(uri)

    # Removing

    def remove(self, uri: str) -> None:
        try:
            self.client.delete_object(Bucket=self.bucket, Key=uri)
        except botocore.exceptions.BotoCoreError as exc:
            raise s3_error(exc) or exc from exc
        except botocore.exceptions.ClientError as exc:
            raise s3_error(exc) or exc from exc
        discard(self._cached(uri))

    def discard(self, uri: str) -> None:
        try:
            self.remove(uri)
        except ApiError as exc:  # the orphan sweep removes it later
            log.warning("could not remove %s from the S3 store (%s): left to the orphan sweep", uri, exc.message)

    # Reading

    def size(self, uri: str) -> int:
        return int(self._call(uri, self.client.head_object)["ContentLength"])

    def _call(self, uri: str, method: Callable[..., dict[str, Any]], **extra: Any) -> dict[str, Any]:
        """`method(Bucket=, Key=uri, **extra)`: FileNotFoundError for a missing object, the store's errors as
        answers."""
        try:
            return method(Bucket=self.bucket, Key=uri, **extra)
        except botocore.exceptions.ClientError as exc:
            if _missing(exc):
                raise FileNotFoundError(uri) from None
            raise s3_error(exc) or exc from exc
        except botocore.exceptions.BotoCoreError as exc:
            raise s3_error(exc) or exc from exc

    def read(self, uri: str, start: int = 0, length: int | None = None,
             digest: Callable[[bytes], None] | None = None) -> Iterator[bytes]:
        """As the local store's: one GET, streamed in 1 MiB chunks. Measured against ranged GETs of PART_SIZE,
        two or three in flight while the one before is sent, and against larger chunks: no faster through the
        service on two cores, where the store, TLS and the client share the CPU, and chunks of 4 MiB or more were
        slower (docs/operators/object-storage.md#speed)."""
        if length == 0:
            return
        ranged = {"Range": f"bytes={start}-{'' if length is None else start + length - 1}"} \
            if start or length is not None else {}
        body = self._call(uri, self.client.get_object, **ranged)["Body"]
        sent = 0
        try:
            for chunk in body.iter_chunks(CHUNK):
                if digest is not None:
                    digest(chunk)
                sent += len(chunk)
                yield chunk
        finally:
            body.close()
            memory.after_transfer(sent)

    def path(self, uri: str) -> str:
        """A local copy of the stored file (downloaded once, then kept: stored files never change); raises
        FileNotFoundError for a file the store does not have."""
        cached = self._cached(uri)
        if os.path.exists(cached):
            return cached
        tmp = f"{cached}.{uuid.uuid4().hex}.part"
        try:
            with open(tmp, "wb") as out:
                for chunk in self.read(uri):
                    out.write(chunk)
            os.replace(tmp, cached)
        except BaseException:
            discard(tmp)
            raise
        return cached

    def _cached(self, uri: str) -> str:
        return os.path.join(self.root, TMP_DIR, CACHE_DIR, os.path.basename(uri))

    def presigned_url(self, uri: str, name: str, mimetype: str, as_attachment: bool) -> str | None:
        disposition = "attachment" if as_attachment else "inline"
        return str(self.client.generate_presigned_url("get_object", ExpiresIn=self.presigned_seconds, Params={
            "Bucket": self.bucket, "Key": uri, "ResponseContentType": mimetype,
            "ResponseContentDisposition": f"{disposition}; filename*=UTF-8''{quote(name)}"}))

    # Listing, for the orphan sweep

    def stored(self, prefix: str = "") -> Iterator[tuple[str, float]]:
        """Every object's key and last-modified time (seconds since the epoch), page by page; the staged parts of
        the multipart protocol (under STAGED) only when `prefix` asks for them: their uploads' rows say how long
        they live (repository.files.objectparts), not the orphan sweep."""
        try:
            pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix)
            for page in pages:
                for item in page.get("Contents", []):
                    if prefix or not item["Key"].startswith(STAGED):
                        yield item["Key"], _epoch(item["LastModified"])
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
            raise s3_error(exc) or exc from exc

    def abort_stale_uploads(self, cutoff: float, keep: frozenset[str] = frozenset()) -> int:
        """Abort the S3 multipart uploads started before `cutoff` (a PUT whose process died): their parts hold
        space but no object is visible. Those in `keep` (the multipart protocol's open uploads, which live as long as
        their rows say) stay. Returns how many."""
        aborted = 0
        for page in self.client.get_paginator("list_multipart_uploads").paginate(Bucket=self.bucket):
            for upload in page.get("Uploads", []):
                if _epoch(upload["Initiated"]) <= cutoff and upload["UploadId"] not in keep:
                    self.abort_upload(upload["Key"], upload["UploadId"])  # gone already: another node's sweep
                    aborted += 1
        return aborted

    # The resumable multipart protocol's bytes (repository.files.objectparts): parts of PROTOCOL_MIN_PART and more
    # are the parts of an S3 multipart upload; smaller ones are staged as objects of their own under STAGED.

    def start_upload(self, uri: str) -> str:
        """A new S3 multipart upload of the object `uri`; returns its UploadId."""
        return str(self._upload_call(self.client.create_multipart_upload, Key=uri)["UploadId"])

    def upload_part(self, uri: str, upload_id: str, number: int, body: Any, size: int) -> str:
        """Send `size` bytes of the seekable file `body` as part `number` (from 1) of the S3 upload; returns the
        part's ETag. FileNotFoundError when the upload is gone."""
        return str(self._upload_call(self.client.upload_part, Key=uri, UploadId=upload_id, PartNumber=number,
                                     Body=body, ContentLength=size)["ETag"])

    def uploaded_parts(self, uri: str, upload_id: str) -> dict[int, set[str]]:
        """The S3 upload's parts as the store holds them: number (from 1) -> ETags (S3 keeps the last part sent
        under a number; SeaweedFS lists each one sent, and completes with the one whose ETag it is given);
        FileNotFoundError when the upload is gone."""
        found: dict[int, set[str]] = {}
        marker = 0
        while True:
            page = self._upload_call(self.client.list_parts, Key=uri, UploadId=upload_id, PartNumberMarker=marker)
            for item in page.get("Parts", []):
                found.setdefault(item["PartNumber"], set()).add(item["ETag"])
            if not page.get("IsTruncated"):
                return found
            marker = int(page["NextPartNumberMarker"])

    def complete_upload(self, uri: str, upload_id: str, parts: list[tuple[int, str]]) -> None:
        """Make the object `uri` of the S3 upload's `parts` ((number from 1, ETag), in order)."""
        self._upload_call(self.client.complete_multipart_upload, Key=uri, UploadId=upload_id,
                          MultipartUpload={"Parts": [{"PartNumber": n, "ETag": etag} for n, etag in parts]})

    def abort_upload(self, uri: str, upload_id: str) -> None:
        """Drop the S3 upload and its parts (nothing when it is gone already)."""
        try:
            self._upload_call(self.client.abort_multipart_upload, Key=uri, UploadId=upload_id)
        except FileNotFoundError:
            pass

    def put_staged(self, key: str, body: Any, size: int) -> str:
        """Store `size` bytes of the seekable file `body` as the staged object `key` (under STAGED); its ETag."""
        return str(self._upload_call(self.client.put_object, Key=key, Body=body, ContentLength=size)["ETag"])

    def read_staged(self, key: str, etag: str) -> Iterator[bytes]:
        """The staged object `key` if it is still the one whose ETag is `etag`; FileNotFoundError otherwise (gone,
        or replaced meanwhile)."""
        body = self._upload_call(self.client.get_object, Key=key, IfMatch=etag)["Body"]
        try:
            yield from body.iter_chunks(CHUNK)
        finally:
            body.close()

    def remove_staged(self, prefix: str) -> None:
        """Delete every staged object under `prefix` (STAGED + an upload id + "/")."""
        for key, _modified in list(self.stored(prefix)):
            self._upload_call(self.client.delete_object, Key=key)

    def _upload_call(self, method: Callable[..., dict[str, Any]], **params: Any) -> dict[str, Any]:
        """`method(Bucket=, **params)`: FileNotFoundError for an upload or object that is gone (or a staged part
        replaced: a failed If-Match), the store's errors as answers."""
        try:
            return method(Bucket=self.bucket, **params)
        except botocore.exceptions.ClientError as exc:
            code = exc.response.get("Error", {}).get("Code")
            if _missing(exc) or code in {"NoSuchUpload", "PreconditionFailed", "412"}:
                raise FileNotFoundError(params.get("Key", "")) from None
            raise s3_error(exc) or exc from exc
        except botocore.exceptions.BotoCoreError as exc:
            raise s3_error(exc) or exc from exc


def _epoch(value: datetime) -> float:
    return value.timestamp()


class _PartWriter:
    """A write-only file over an S3 multipart upload: `write` gathers PART_SIZE bytes and sends them as a part
    (IN_FLIGHT at once, in threads), `finish` completes (one PutObject when everything fit in one part)."""

    def __init__(self, client: Any, bucket: str, key: str) -> None:
        self.client, self.bucket, self.key = client, bucket, key
        self.chunks: list[bytes] = []  # less than a part, not sent yet
        self.buffered = 0
        self.sent = 0  # bytes handed to the store
        self.upload_id: str | None = None
        self.pending: deque[Future[dict[str, Any]]] = deque()
        self.parts: list[dict[str, Any]] = []
        self.pool: ThreadPoolExecutor | None = None

    def write(self, chunk: bytes) -> None:
        """A write of a whole part, with nothing gathered before it, is sent as it is (no copy: `write` reads
        parts); smaller ones are gathered, joined once, and sent by the part."""
        self.chunks.append(chunk)
        self.buffered += len(chunk)
        while self.buffered >= PART_SIZE:
            data = b"".join(self.chunks)  # one chunk: the same object, not a copy
            rest = data[PART_SIZE:]
            self.chunks, self.buffered = ([rest] if rest else []), len(rest)
            self._send(data[:PART_SIZE] if rest else data)

    def _send(self, data: bytes) -> None:
        self.sent += len(data)
        if self.upload_id is None:
            self.upload_id = self.client.create_multipart_upload(Bucket=self.bucket, Key=self.key)["UploadId"]
            self.pool = ThreadPoolExecutor(IN_FLIGHT, thread_name_prefix="s3-part")
        assert self.pool is not None
        while len(self.pending) >= IN_FLIGHT:
            self.parts.append(self.pending.popleft().result())
        number = len(self.parts) + len(self.pending) + 1
        self.pending.append(self.pool.submit(self._part, number, data))

    def _part(self, number: int, data: bytes) -> dict[str, Any]:
        answer = self.client.upload_part(Bucket=self.bucket, Key=self.key, UploadId=self.upload_id,
                                         PartNumber=number, Body=data)
        return {"PartNumber": number, "ETag": answer["ETag"]}

    def finish(self) -> None:
        if self.upload_id is None:
            self.client.put_object(Bucket=self.bucket, Key=self.key, Body=b"".join(self.chunks))
            return
        if self.chunks:
            self._send(b"".join(self.chunks))
            self.chunks, self.buffered = [], 0
        while self.pending:
            self.parts.append(self.pending.popleft().result())
        self.client.complete_multipart_upload(Bucket=self.bucket, Key=self.key, UploadId=self.upload_id,
                                              MultipartUpload={"Parts": self.parts})
        self._close()

    def abort(self) -> None:
        """Drop what was sent (nothing of it was ever visible); errors here leave it to the sweep."""
        for future in self.pending:
            future.cancel()
        self._close()
        if self.upload_id is not None:
            try:
                self.client.abort_multipart_upload(Bucket=self.bucket, Key=self.key, UploadId=self.upload_id)
            except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
                log.warning("could not abort the S3 upload of %s (%s): left to the orphan sweep", self.key, exc)

    def _close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True)
            self.pool = None


def store_for(settings: Settings) -> FileStore:
    """The file store the settings choose (an S3 one made once per settings: a boto3 client takes milliseconds)."""
    return _s3_store(settings) if settings.FILES_STORE == "s3" else FileStore(settings.FILES_ROOT)


@functools.lru_cache(maxsize=8)
def _s3_store(settings: Settings) -> S3Store:
    return S3Store.from_settings(settings)


def open_store(settings: Settings) -> FileStore:
    """The file store the settings choose, checked (StartupError when it cannot be used): at start-up."""
    store = store_for(settings)
    store.check()
    return store
