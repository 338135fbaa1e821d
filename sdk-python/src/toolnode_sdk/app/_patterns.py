"""Allow and deny patterns over tool names, as in the node's access files.

``*`` matches any run of characters, dots included, ``?`` exactly one, and every other
character itself, case-sensitively (see docs/search.md).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["Filter", "check_pattern", "match"]

_MAX_PATTERN = 256
_PATTERN = re.compile(r"[A-Za-z0-9_.\-*?]+\Z")


def check_pattern(pattern: str) -> str:
    """Return ``pattern`` when the node would accept it; else raise ValueError saying why."""
    if not pattern:
        raise ValueError('empty pattern; write "*" for every tool')
    if len(pattern) > _MAX_PATTERN:
        raise ValueError(f"pattern is {len(pattern)} characters long, at most {_MAX_PATTERN}")
    if not _PATTERN.match(pattern):
        bad = next(c for c in pattern if not _PATTERN.match(c))
        raise ValueError(
            f"pattern {pattern!r} holds {bad!r}, which no tool name has; names use A-Z a-z 0-9 _ - . "
            "and patterns add * (any run of characters, dots included) and ? (one character)"
        )
    return pattern


def match(pattern: str, name: str) -> bool:
    """Whether ``name`` matches ``pattern``; backtracks only to the last ``*``."""
    if "*" not in pattern and "?" not in pattern:
        return pattern == name
    pi = ni = 0
    star, mark = -1, 0
    while ni < len(name):
        if pi < len(pattern) and pattern[pi] == "*":
            star, mark = pi, ni
            pi += 1
        elif pi < len(pattern) and (pattern[pi] == "?" or pattern[pi] == name[ni]):
            pi += 1
            ni += 1
        elif star >= 0:
            pi = star + 1
            mark += 1
            ni = mark
        else:
            return False
    while pi < len(pattern) and pattern[pi] == "*":
        pi += 1
    return pi == len(pattern)


class Filter:
    """The tools a caller may see and call: those an allow pattern matches and no deny pattern does."""

    def __init__(self, allow: Sequence[str] = ("*",), deny: Sequence[str] = ()) -> None:
        if isinstance(allow, str) or isinstance(deny, str):
            raise TypeError("allow and deny take a list of patterns, e.g. allow=['meos.*']")
        self.allow = tuple(check_pattern(p) for p in allow)
        self.deny = tuple(check_pattern(p) for p in deny)

    def __call__(self, name: str) -> bool:
        return any(match(p, name) for p in self.allow) and not any(match(p, name) for p in self.deny)
