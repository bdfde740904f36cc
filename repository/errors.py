"""Errors are data with a status: domain code raises, one handler renders the error object."""

from __future__ import annotations

import errno
from collections.abc import Callable, Iterable
from typing import Any


class ApiError(Exception):
    """An error the API answers with `{"message", "status", "errors"?}`."""

    status = 400
    default_message = "Bad Request"

    def __init__(
        self,
        message: str | None = None,
        errors: Iterable[dict[str, Any]] | None = None,
        status: int | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.message = message or self.default_message
        self.errors = list(errors) if errors else []
        if status is not None:
            self.status = status
        self.headers = headers or {}
        super().__init__(self.message)

    def body(self) -> dict[str, Any]:
        """The error object of the specification."""
        body: dict[str, Any] = {"message": self.message, "status": self.status}
        if self.errors:
            body["errors"] = self.errors
        return body


class BadRequest(ApiError):
    status = 400
    default_message = "Bad Request"


class ValidationError(BadRequest):
    """A 400 listing every problem at once, each with its dotted field path."""

    default_message = "Validation error."


class Unauthorized(ApiError):
    status = 401
    default_message = "Unauthorized: a valid access token is required."


class Forbidden(ApiError):
    status = 403
    default_message = "Forbidden"


class NotFound(ApiError):
    status = 404
    default_message = "Not Found"


class NotAcceptable(ApiError):
    status = 406
    default_message = "Not Acceptable"


class Conflict(ApiError):
    status = 409
    default_message = "Conflict"


class Gone(ApiError):
    status = 410
    default_message = "Gone"


class PayloadTooLarge(ApiError):
    status = 413
    default_message = "Payload Too Large"


class UnsupportedMediaType(ApiError):
    status = 415
    default_message = "Unsupported Media Type"


class UnprocessableEntity(ApiError):
    status = 422
    default_message = "Unprocessable Entity"


class ServiceUnavailable(ApiError):
    status = 503
    default_message = "Service Unavailable"


class InsufficientStorage(ApiError):
    """507: the disk (or the quota) holding files or the database is full; nothing was stored."""

    status = 507
    default_message = "Insufficient Storage"


DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


def disk_full(exc: BaseException) -> InsufficientStorage | None:
    """The 507 for an OSError of a full disk or quota (ENOSPC, EDQUOT), None for any other error."""
    if isinstance(exc, OSError) and exc.errno in DISK_FULL_ERRNOS:
        return InsufficientStorage("The server's storage is full: nothing was stored. Retry later.")
    return None


def field_error(field: str | None, message: str) -> dict[str, Any]:
    """One entry of the `errors` list; `field` is a dotted path such as `metadata.creators.0.name`."""
    entry: dict[str, Any] = {"message": message}
    if field is not None:
        entry["field"] = field
    return entry


def library_errors() -> dict[type[Exception], Callable[[Any], ApiError]]:
    """The one table mapping other packages' exceptions to the ApiError answering them (one handler each).

    The serializers raise their refusals as data (message, field, detail) because they import nothing of the
    repository. Imported when called: the serializers take seconds to import, which this module, imported by
    every script, should not.
    """
    from serializers.errors import NoRepresentation, NotDescribable, UnusableParameter

    def answer(api_error: type[ApiError]) -> Callable[[Any], ApiError]:
        return lambda exc: api_error(exc.message, [field_error(exc.field, exc.detail)])

    # A format made for other kinds of record (Croissant for a software record): a 406 as for a format not offered.
    return {NoRepresentation: answer(NotAcceptable), NotDescribable: answer(NotAcceptable),
            UnusableParameter: answer(BadRequest)}
