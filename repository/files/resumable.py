"""MD5 and SHA-256 whose state can be saved to disk and taken up again, so a multipart upload's whole-file hash
advances as its parts arrive and survives a restart (repository.files.multipart's hash frontier).

Python's hashlib cannot export a hash's state. OpenSSL's libcrypto — which hashlib itself uses — still exports
the low-level MD5_* and SHA256_* functions (deprecated in OpenSSL 3, not removed), whose contexts are plain structs
of fixed size: their bytes are the state. They are called through ctypes, which releases the GIL during each call
(the two hashes run side by side in two threads at the speed of hashlib). The layout is checked once against
hashlib on start; where libcrypto or its layout is not as expected, `available()` is False and the caller hashes
the whole file at the end instead (correct, only slower)."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import hashlib
import struct
from typing import Any

# (init, update, final, context bytes, digest bytes): MD5_CTX is 4 + 2 + 16 words and an int; SHA256_CTX 8 + 2 +
# 16 words and two ints (openssl/md5.h, openssl/sha.h; unchanged since OpenSSL 0.9.8).
_KINDS = {"md5": ("MD5_Init", "MD5_Update", "MD5_Final", 92, 16),
          "sha256": ("SHA256_Init", "SHA256_Update", "SHA256_Final", 112, 32)}
MAGIC = b"RHS1"


@functools.cache
def _libcrypto() -> Any:
    name = ctypes.util.find_library("crypto")
    if name is None:
        return None
    try:
        lib = ctypes.CDLL(name)
        for init, update, final, _size, _digest in _KINDS.values():
            getattr(lib, init).argtypes = [ctypes.c_void_p]
            getattr(lib, update).argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
            getattr(lib, final).argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    except (OSError, AttributeError):
        return None
    return lib


class Hash:
    """One running hash (`md5` or `sha256`) whose `state()` bytes rebuild it with `Hash(kind, state)`."""

    def __init__(self, kind: str, state: bytes | None = None) -> None:
        self.lib = _libcrypto()
        self.kind = kind
        init, self._update, self._final, size, self.digest_size = _KINDS[kind]
        if state is None:
            self.ctx = ctypes.create_string_buffer(size)
            getattr(self.lib, init)(self.ctx)
        else:
            if len(state) != size:
                raise ValueError(f"a {kind} state is {size} bytes")
            self.ctx = ctypes.create_string_buffer(state, size)

    def update(self, data: bytes | memoryview) -> None:
        buffer = data if isinstance(data, bytes) else bytes(data)
        getattr(self.lib, self._update)(self.ctx, buffer, len(buffer))

    def state(self) -> bytes:
        return self.ctx.raw

    def hexdigest(self) -> str:
        copy = ctypes.create_string_buffer(self.ctx.raw, len(self.ctx.raw))  # final consumes the context
        out = ctypes.create_string_buffer(self.digest_size)
        getattr(self.lib, self._final)(out, copy)
        return out.raw.hex()


@functools.cache
def available() -> bool:
    """True when libcrypto is there and a hash split by a saved state gives hashlib's digest."""
    if _libcrypto() is None:
        return False
    sample = bytes(range(256)) * 37
    try:
        for kind in _KINDS:
            first = Hash(kind)
            first.update(sample[:1001])
            resumed = Hash(kind, first.state())
            resumed.update(sample[1001:])
            if resumed.hexdigest() != hashlib.new(kind, sample).hexdigest():
                return False
    except (OSError, ValueError, AttributeError):
        return False
    return True


def dump(offset: int, md5: Hash, sha256: Hash) -> bytes:
    """The saved form of a frontier: how many bytes are hashed, and the two states."""
    return MAGIC + struct.pack(">Q", offset) + md5.state() + sha256.state()


def load(data: bytes) -> tuple[int, Hash, Hash] | None:
    """A frontier from `dump`, or None when `data` is not one (empty, torn, another layout): start again."""
    md5_size, sha_size = _KINDS["md5"][3], _KINDS["sha256"][3]
    if len(data) != len(MAGIC) + 8 + md5_size + sha_size or not data.startswith(MAGIC):
        return None
    (offset,) = struct.unpack(">Q", data[len(MAGIC):len(MAGIC) + 8])
    rest = data[len(MAGIC) + 8:]
    return offset, Hash("md5", rest[:md5_size]), Hash("sha256", rest[md5_size:])
