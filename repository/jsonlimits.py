"""The shape bound of JSON (and YAML) read from clients: how deeply it nests and, for YAML, how many values its
aliases expand to. Checked once, right after parsing, so that nothing walking the value later (a JSON Schema
validator, marshmallow, a serializer, our own code) can run out of stack or time on it (issue 14.7).

Parsers differ in how they fail on deep input: orjson refuses past 1,024 levels (a JSONDecodeError), the
standard `json` and PyYAML raise RecursionError somewhere below 1,000. `loads_bounded` gives one answer for all.
"""

from __future__ import annotations

import json
from typing import Any

# Deposit metadata nests 4 levels, a software corpus document 8; extensions (extra properties of a data package,
# a MentionedVersion) rarely add more than a few.
MAX_DEPTH = 64
# A YAML document can name a value once and refer to it many times: 9 levels of 10 aliases expand to 10^9 values.
MAX_YAML_VALUES = 100_000
_CONTAINERS = (dict, list)  # what JSON and safe YAML parse to (exact types: faster than isinstance)


class ShapeError(ValueError):
    """A parsed value nested too deeply, or (YAML aliases) expanding to too many values; the message says which."""

    @staticmethod
    def too_deep(max_depth: int = MAX_DEPTH) -> str:
        """The words for input nested too deeply (`The body is ...`)."""
        return f"nested deeper than {max_depth} levels of arrays and objects"


def check_shape(value: Any, max_depth: int = MAX_DEPTH, max_values: int | None = None) -> None:
    """ShapeError when `value` nests more than `max_depth` arrays/objects deep, or (with `max_values`) holds more
    than that many values counting each reference to a shared one (iterative: deep input cannot overflow it)."""
    level = [value] if type(value) in _CONTAINERS else []
    depth = seen = 0
    while level:  # one level of nesting at a time
        depth += 1
        if depth > max_depth:
            raise ShapeError(ShapeError.too_deep(max_depth))
        below: list[Any] = []
        for node in level:
            children = node.values() if type(node) is dict else node
            if max_values is not None:
                seen += len(children)
                if seen > max_values:
                    raise ShapeError(f"more than {max_values:,} values once its aliases are expanded")
            below.extend(child for child in children if type(child) in _CONTAINERS)
        level = below


def loads_bounded(text: str | bytes, max_depth: int = MAX_DEPTH, **options: Any) -> Any:
    """`json.loads(text, **options)` then `check_shape`: json.JSONDecodeError for bad syntax, ShapeError for input
    nested too deeply (whether the parser or the check found it)."""
    try:
        value = json.loads(text, **options)
    except RecursionError:
        raise ShapeError(ShapeError.too_deep(max_depth)) from None
    check_shape(value, max_depth)
    return value
