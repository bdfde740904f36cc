"""Request arguments: the verb, duplicates and unknown names, and the `from`/`until` datestamps."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from werkzeug.datastructures import MultiDict

from repository.oai.errors import OaiError, bad_argument

_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")  # ASCII digits only: \d takes any script's
_SECOND = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
# Attribute values the OAI-PMH schema accepts on `<request>` (metadataPrefixType, setSpecType).
PREFIX_PATTERN = re.compile(r"[A-Za-z0-9\-_.!~*'()]+")
SET_PATTERN = re.compile(r"[A-Za-z0-9\-_.!~*'()]+(:[A-Za-z0-9\-_.!~*'()]+)*")


def datestamp(value: datetime) -> str:
    """The protocol's UTC datestamp at second granularity, `YYYY-MM-DDThh:mm:ssZ`."""
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return value.isoformat(timespec="seconds") + "Z"  # strftime took a third of a page's headers


def single_values(args: MultiDict) -> dict[str, str]:
    """The arguments as a dict; a repeated argument is a badArgument (badVerb for a repeated verb)."""
    values: dict[str, str] = {}
    for name in args:
        given = args.getlist(name)
        if len(given) > 1:
            if name == "verb":
                raise OaiError("badVerb", "The verb argument is repeated.")
            raise bad_argument(f"The argument {name!r} is repeated.")
        values[name] = given[0]
    return values


def check_names(args: dict[str, str], required: frozenset[str], optional: frozenset[str]) -> None:
    """badArgument for a missing required argument or one the verb does not take."""
    illegal = sorted(set(args) - required - optional - {"verb"})
    if illegal:
        raise bad_argument("Illegal argument(s) for this verb: " + ", ".join(illegal) + ".")
    missing = sorted(name for name in required if not args.get(name))
    if missing:
        raise bad_argument("Missing required argument(s): " + ", ".join(missing) + ".")


def _parse(value: str, name: str) -> tuple[datetime, bool]:
    """(the instant, whether it was given to the day only)."""
    try:
        if _DAY.fullmatch(value):
            return datetime.strptime(value, "%Y-%m-%d"), True
        if _SECOND.fullmatch(value):
            return datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ"), False
    except ValueError:
        pass
    raise bad_argument(f"The {name!r} argument must be a UTC date YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ.")


def check_set(spec: str | None) -> None:
    """badArgument for a set spec the protocol's syntax (setSpecType) does not allow; an unknown but
    well-formed set is not an error here (it has no records)."""
    if spec is not None and not SET_PATTERN.fullmatch(spec):
        raise bad_argument("The 'set' argument is not a valid setSpec.")


@dataclass(frozen=True)
class DateRange:
    """Datestamps `lower <= d < upper`; either end may be open."""

    lower: datetime | None = None
    upper: datetime | None = None


def date_range(from_: str | None, until: str | None) -> DateRange:
    """`from` and `until` are inclusive at their granularity: `until=2024-05-01` takes the whole day."""
    lower = upper = None
    day_from = day_until = None
    if from_:
        lower, day_from = _parse(from_, "from")
    if until:
        start, day_until = _parse(until, "until")
        try:
            upper = start + (timedelta(days=1) if day_until else timedelta(seconds=1))
        except OverflowError:  # the last instant datetime can hold (9999-12-31): nothing is later, no bound
            upper = None
    if from_ and until:
        if day_from != day_until:
            raise bad_argument("The 'from' and 'until' arguments must have the same granularity.")
        if lower and upper and lower >= upper:
            raise bad_argument("The 'from' argument must not be later than 'until'.")
    return DateRange(lower, upper)
