"""Checksums a client sends with a bucket upload, checked against the bytes received: `Content-MD5` (RFC 1864:
base64 of the MD5; the 32-digit hex form that the reference sends on downloads is accepted too) and
`Content-Digest` (RFC 9530, e.g. `sha-256=:<base64>:, md5=:<base64>:`). The MD5 and the SHA-256 are computed anyway
while a file streams to disk (a multipart part: the MD5); other algorithms are computed alongside only when a client
asks for them. The same checks apply to a whole PUT and to each part of a multipart upload.

A multipart part's own checksum (its `checksum` in the parts listing, what a resuming client can compare with the
part it holds) is a CRC-32 (`Crc32`), as S3 lists parts with one: the whole file's MD5 and SHA-256 are computed
by the hash frontier anyway, and a second MD5 over every byte, the slowest of the three, held a 4 GiB upload in 4
parallel parts under 0.8 of a plain write+MD5 loop on two cores (`bench/multipart_bench.py`). A client that wants a part
checked by MD5 sends it (`Content-MD5`), and the MD5 is then computed for that part."""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Collection, Mapping
from typing import Any, Protocol

from isal import isal_zlib

from repository.errors import BadRequest

# RFC 9530 algorithm keys -> hashlib names. Unknown keys are ignored, as the RFC allows; known ones are checked.
ALGORITHMS = {"md5": "md5", "sha": "sha1", "sha-256": "sha256", "sha-512": "sha512"}
_MEMBER = re.compile(r"^([A-Za-z*][A-Za-z0-9_.*-]*)=:([A-Za-z0-9+/=]*):(;.*)?$")
_HEX_MD5 = re.compile(r"^[0-9a-fA-F]{32}$")


def _malformed(header: str, why: str) -> BadRequest:
    return BadRequest(f"Malformed {header} header: {why}.", errors=[{"field": header, "message": why}])


def _b64(header: str, text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise _malformed(header, "not valid base64") from None


class Headers(Protocol):
    """What `expected_digests` reads: werkzeug's request headers, or a plain dict."""

    def get(self, key: str, /) -> str | None: ...


def expected_digests(headers: Headers) -> dict[str, tuple[str, bytes]]:
    """hashlib name -> (the header that asked, the digest it expects); BadRequest for a malformed header."""
    expected: dict[str, tuple[str, bytes]] = {}
    content_md5 = headers.get("Content-MD5")
    if content_md5 is not None:
        text = content_md5.strip()
        value = bytes.fromhex(text) if _HEX_MD5.match(text) else _b64("Content-MD5", text)
        if len(value) != 16:
            raise _malformed("Content-MD5", "an MD5 digest is 16 bytes, in base64")
        expected["md5"] = ("Content-MD5", value)
    content_digest = headers.get("Content-Digest")
    if content_digest is not None:
        members = [m.strip() for m in content_digest.split(",")]
        for member in members:
            match = _MEMBER.match(member)
            if match is None:
                raise _malformed("Content-Digest", "expected `<algorithm>=:<base64>:` items separated by commas")
            algorithm = match.group(1).lower()
            name = ALGORITHMS.get(algorithm)
            value = _b64("Content-Digest", match.group(2))
            if name is None:
                continue
            if len(value) != hashlib.new(name).digest_size:
                raise _malformed("Content-Digest", f"a {algorithm} digest is {hashlib.new(name).digest_size} bytes")
            if name in expected and expected[name][1] != value:
                raise BadRequest("The Content-MD5 and Content-Digest headers disagree: nothing was stored.")
            expected[name] = ("Content-Digest", value)
    return expected


class Crc32:
    """CRC-32 (ISO-HDLC, zlib's and zip's) with the update/hexdigest face of hashlib's objects: 8 hex digits.
    ISA-L's, as the archive takes its entries' (repository.files.archive): the same value, several times faster."""

    def __init__(self) -> None:
        self.value = 0

    def update(self, data: bytes) -> None:
        self.value = isal_zlib.crc32(data, self.value)

    def hexdigest(self) -> str:
        return f"{self.value:08x}"


class Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class HashingReader:
    """Wraps a request stream, hashing what is read with the extra algorithms asked for (those the writer computes
    anyway, `known`, excepted)."""

    def __init__(self, stream: Readable, names: Collection[str], known: Collection[str] = ("md5", "sha256")) -> None:
        self.stream = stream
        self.hashes = {name: hashlib.new(name) for name in names if name not in known}

    def read(self, size: int = -1) -> bytes:
        chunk = self.stream.read(size)
        for digest in self.hashes.values():
            digest.update(chunk)
        return chunk


def verify(expected: dict[str, tuple[str, bytes]], known: Mapping[str, str | None], reader: Any) -> None:
    """BadRequest when a digest the client sent differs from the bytes received; `known` holds the hex digests the
    writer computed (hashlib name -> hex), `reader` the others when it is a HashingReader."""
    computed = {name: bytes.fromhex(value) for name, value in known.items() if value is not None}
    if isinstance(reader, HashingReader):
        computed.update({name: digest.digest() for name, digest in reader.hashes.items()})
    for name, (header, value) in expected.items():
        if computed[name] != value:
            raise BadRequest(
                f"The {name.upper()} checksum of the bytes received does not match the {header} header: the upload "
                "was incomplete or altered, and nothing was stored.",
                errors=[{"field": header, "message": "Checksum mismatch."}],
            )
