"""OAI-PMH errors: a protocol code, a message, and the HTTP status they are sent with."""

from __future__ import annotations

# The protocol's error codes (OAI-PMH 2.0 §3.6).
CODES = frozenset({
    "badArgument", "badResumptionToken", "badVerb", "cannotDisseminateFormat", "idDoesNotExist",
    "noRecordsMatch", "noMetadataFormats", "noSetHierarchy",
})  # fmt: skip


class OaiError(Exception):
    """An OAI-PMH `<error>`; HTTP 200 as the protocol wants, except a bad token (422, the specification)."""

    def __init__(self, code: str, message: str) -> None:
        assert code in CODES, code
        self.code = code
        self.message = message
        # Harvesters stop at a 4xx before reading the OAI error, so only the specification's case gets one.
        self.status = 422 if code == "badResumptionToken" else 200
        super().__init__(f"{code}: {message}")

    @property
    def echoes_arguments(self) -> bool:
        """The protocol forbids echoing the request's arguments after badVerb or badArgument."""
        return self.code not in {"badVerb", "badArgument"}


def bad_argument(message: str) -> OaiError:
    return OaiError("badArgument", message)


def bad_token() -> OaiError:
    return OaiError("badResumptionToken", "The value of the resumptionToken argument is invalid or expired.")
