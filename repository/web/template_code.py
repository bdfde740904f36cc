"""Compiled templates shared by every application of the process.

Each Flask application has a Jinja environment of its own, which compiles a template the first time it renders it.
A process that builds several applications (the test suite builds hundreds; a server builds one per worker process,
and the benchmark's and the scripts' in-process apps one more) would compile every template again for each. Jinja's
bytecode cache hands the compiled code from one environment to the next: the key is the template's name and file,
and Jinja checks the source's checksum on load, so an edited template is compiled afresh."""

from __future__ import annotations

import threading

from jinja2 import BytecodeCache
from jinja2.bccache import Bucket


class ProcessBytecodeCache(BytecodeCache):
    """The compiled code of each template, kept in this process's memory (a few hundred KiB for every template)."""

    def __init__(self) -> None:
        self._code: dict[str, bytes] = {}
        self._lock = threading.Lock()

    def load_bytecode(self, bucket: Bucket) -> None:
        with self._lock:
            found = self._code.get(bucket.key)
        if found is not None:
            bucket.bytecode_from_string(found)  # Jinja drops it when the source's checksum differs

    def dump_bytecode(self, bucket: Bucket) -> None:
        with self._lock:
            self._code[bucket.key] = bucket.bytecode_to_string()

    def clear(self) -> None:
        with self._lock:
            self._code.clear()


TEMPLATE_CODE = ProcessBytecodeCache()
