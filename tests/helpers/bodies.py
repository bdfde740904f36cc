"""Request bodies that behave like slow clients, for tests that need something to happen mid-upload."""

import io
import threading


class PausedBody(io.BytesIO):
    """A body that stops half way until let go (a client whose connection is still sending): `halfway` is set when
    it stops, `go_on` lets it finish."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.half = len(data) // 2
        self.halfway, self.go_on = threading.Event(), threading.Event()

    def read(self, size: int | None = -1) -> bytes:
        if self.tell() == self.half:
            self.halfway.set()
            self.go_on.wait(60)
        if self.tell() < self.half and (size is None or size < 0 or self.tell() + size > self.half):
            size = self.half - self.tell()
        return super().read(size)

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def,override]  # werkzeug reads through this
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)
