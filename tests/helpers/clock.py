"""A clock the test moves: put on the app's services (`services.clock`), it is the now of OAI-PMH's tokens and of
the owners' correction windows; time passes by moving it, never by sleeping."""

from __future__ import annotations

from datetime import datetime, timedelta

from repository.timeutil import utcnow


class Clock:
    """Now, shifted by what the test says."""

    def __init__(self) -> None:
        self.offset = timedelta(0)

    def __call__(self) -> datetime:
        return utcnow() + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += timedelta(seconds=seconds)
