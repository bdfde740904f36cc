"""What the serializers refuse, as data: the repository maps each to its HTTP answer in one table
(`repository.errors.LIBRARY_ERRORS`), so that the serializers import nothing of the repository."""

from __future__ import annotations


class SerializerError(Exception):
    """A request the serializers cannot honour (the caller's choice, not a fault of the record).

    `message` is the sentence for the caller; `field` names the parameter at fault (None: the request as a
    whole) and `detail` says what is wrong with it.
    """

    def __init__(self, message: str, field: str | None, detail: str) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.detail = detail


class NoRepresentation(SerializerError):
    """Nothing the caller accepts (`Accept`, `?format=`) is among the formats offered."""


class UnusableParameter(SerializerError):
    """A rendering parameter (citation style or locale) names nothing the serializers can render."""


class NotDescribable(SerializerError):
    """The chosen format describes other kinds of records only (Croissant datasets, CodeMeta software)."""
