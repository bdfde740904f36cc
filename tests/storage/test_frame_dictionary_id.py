"""`packing.dictionary_id` reads the dictionary id off a zstd frame's header: the same answer as the zstd library's
own frame parser, for every size of the id field, with and without a window descriptor."""

from __future__ import annotations

import functools
import random

import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from repository.storage import packing
from repository.storage.packing import zstd


@functools.cache
def _dictionary(dict_id: int) -> bytes:
    rng = random.Random(dict_id)
    samples = [" ".join(rng.choice(["record", "title", "creator", "2026", "doi", "10.5281"]) for _ in range(40)).encode()
               for _ in range(200)]
    return zstandard.train_dictionary(4096, samples, dict_id=dict_id).as_bytes()


@functools.cache
def _data(size: int) -> bytes:
    """`size` random bytes, the same for every example of that size (generating them costs more than the test)."""
    return bytes(random.Random(size).randrange(256) for _ in range(size))


# Ids that need the field's 1, 2 and 4 bytes (the encoder picks the shortest), sizes either side of a single segment.
@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(dict_id=st.sampled_from([0, 1, 200, 255, 256, 40_000, 65_535, 65_536, 2**31 + 5, 2**32 - 1]),
       size=st.sampled_from([0, 1, 100, 5_000, 200_000]),
       writer=st.sampled_from(["packing", "zstandard"]))
def test_the_id_read_off_the_header_is_the_librarys(dict_id, size, writer):
    data = _data(size)
    content = _dictionary(dict_id) if dict_id else None
    if writer == "packing":
        frame = packing.pack(data, zstd.ZstdDict(content) if content else None)
    else:
        options = {"dict_data": zstandard.ZstdCompressionDict(content)} if content else {}
        frame = zstandard.ZstdCompressor(**options).compress(data)
    assert packing.dictionary_id(frame) == zstd.get_frame_info(frame).dictionary_id == dict_id


def test_a_header_cut_short_is_the_librarys_error():
    # A stored value cut inside its frame header (a damaged row) fails as the library's own parser fails, rather
    # than naming a dictionary from whatever bytes follow.
    frame = packing.pack(b"x" * 1000, zstd.ZstdDict(_dictionary(65_536)))
    assert packing.dictionary_id(frame) == 65_536
    for cut in range(4, 10):
        if len(frame[:cut]) >= (5 if frame[4] & 0x20 else 6) + 4:
            continue
        with pytest.raises(zstd.ZstdError):
            zstd.get_frame_info(frame[:cut])
        with pytest.raises(zstd.ZstdError):
            packing.dictionary_id(frame[:cut])
