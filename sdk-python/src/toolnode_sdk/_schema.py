"""The argument check run before every handler.

It covers what a handler would otherwise re-check by hand: required properties,
JSON types of top-level properties, and numeric bounds. Anything else in the
schema (patterns, nested objects, ``$ref``) is passed to the client untouched
and left to the handler.
"""

from __future__ import annotations

import operator
from typing import Any, Callable, Dict, Mapping, Optional, Tuple

# An article per type so messages read naturally: 'must be an integer'.
_TYPE_NAMES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "object": "an object",
    "array": "an array",
    "null": "null",
}


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


_TYPE_TESTS: Dict[str, Callable[[object], bool]] = {
    "string": lambda v: isinstance(v, str),
    # JSON booleans arrive as bool, a subclass of int: they are not integers.
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": _is_number,
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
}

_BOUNDS: Tuple[Tuple[str, str, Callable[[Any, Any], bool]], ...] = (
    ("minimum", ">=", operator.ge),
    ("maximum", "<=", operator.le),
    ("exclusiveMinimum", ">", operator.gt),
    ("exclusiveMaximum", "<", operator.lt),
)


def check_arguments(schema: Mapping[str, Any], args: Mapping[str, Any]) -> Optional[str]:
    """Return the first problem with args as a sentence naming the argument, or None."""
    for name in schema.get("required", ()):
        if name not in args:
            return f'missing required argument "{name}"'
    properties = schema.get("properties", {})
    for name, value in args.items():
        prop = properties.get(name)
        if isinstance(prop, Mapping):
            problem = _check_value(prop, value)
            if problem is not None:
                return f'argument "{name}" must be {problem}'
    return None


def _check_value(prop: Mapping[str, Any], value: object) -> Optional[str]:
    expected = prop.get("type")
    types = [expected] if isinstance(expected, str) else expected
    if isinstance(types, list):
        known = [t for t in types if t in _TYPE_TESTS]
        if known and not any(_TYPE_TESTS[t](value) for t in known):
            return " or ".join(_TYPE_NAMES[t] for t in known)
    if _is_number(value):
        for keyword, word, holds in _BOUNDS:
            bound = prop.get(keyword)
            if _is_number(bound) and not holds(value, bound):
                return f"{word} {bound}"
    return None
