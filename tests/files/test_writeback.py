"""The early write-out of uploaded bytes (repository/files/writeback.py) is a hint: where the kernel refuses it the
upload goes on, and the bytes written are the bytes sent either way."""

import hashlib
import io
import os

from repository.files import buckets, writeback


def test_a_file_that_cannot_be_written_out_early_is_still_written(tmp_path):
    read_end, write_end = os.pipe()  # sync_file_range refuses a pipe (ESPIPE)
    try:
        early = writeback.Writeback(write_end, 0, step=4)
        os.write(write_end, b"12345678")
        early.wrote(8)  # refused: no error, and no further attempt
        assert early.call is None
        assert os.read(read_end, 8) == b"12345678"
    finally:
        os.close(read_end)
        os.close(write_end)


def test_a_stored_file_is_whole_across_several_write_outs(tmp_path):
    body = os.urandom(2 * writeback.STEP + 12345)
    store = buckets.FileStore(str(tmp_path / "files"))
    stored = store.write(io.BytesIO(body))
    with open(store.path(stored.uri), "rb") as handle:
        assert handle.read() == body
    assert stored.checksum == "md5:" + hashlib.md5(body).hexdigest()
