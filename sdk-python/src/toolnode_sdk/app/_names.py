"""Tool names as model APIs accept them, and back.

OpenAI and Anthropic accept function names of 1-64 characters of ``A-Z a-z 0-9 _ -``;
Gemini also wants the first one to be a letter or ``_``. One rendering satisfies all three:
a name that already does is kept, any other character becomes ``_``, a name that does not
start with a letter or ``_`` gets a leading ``_``, and a rendering that would be longer than
64 characters or shared by two names is cut and given eight hex digits of the SHA-256 of the
full name. The same rule is the node's ``--names underscore`` and the Go package's; the
vectors in ``testdata/app/names.json`` hold all three to it.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable

__all__ = ["MAX_NAME", "NameMap", "is_provider_name", "map_names"]

MAX_NAME = 64
"""The longest function name the model APIs accept."""

_HASH_HEX = 8


def _allowed(ch: str) -> bool:
    return ch == "_" or ch == "-" or ("a" <= ch <= "z") or ("A" <= ch <= "Z") or ("0" <= ch <= "9")


def _leads(ch: str) -> bool:
    return ch == "_" or ("a" <= ch <= "z") or ("A" <= ch <= "Z")


def is_provider_name(name: str) -> bool:
    """Whether every model API accepts ``name`` as a function name."""
    return 0 < len(name) <= MAX_NAME and _leads(name[0]) and all(_allowed(c) for c in name)


def _base(name: str) -> str:
    base = "".join(c if _allowed(c) else "_" for c in name)
    if not base or not _leads(base[0]):
        base = "_" + base
    return base


def _hashed(name: str, base: str, attempt: int) -> str:
    seed = name if attempt == 0 else f"{name}#{attempt}"
    digest = hashlib.sha256(seed.encode("utf-8")).hexdigest()[:_HASH_HEX]
    return base[: MAX_NAME - _HASH_HEX - 1] + "_" + digest


class NameMap:
    """A set of tool names rendered for model APIs, with the way back.

    Build one with :func:`map_names`; it never maps two names to one rendering.
    """

    def __init__(self, rendered: dict[str, str]) -> None:
        self._rendered = rendered
        self._names = {r: n for n, r in rendered.items()}

    def provider_name(self, name: str) -> str:
        """The rendering of a tool name of the set."""
        return self._rendered[name]

    def tool_name(self, provider_name: str) -> str | None:
        """The tool a rendering stands for, or None when it stands for none of the set."""
        return self._names.get(provider_name)

    def items(self) -> Iterable[tuple[str, str]]:
        """Pairs of (tool name, rendering)."""
        return self._rendered.items()

    def __len__(self) -> int:
        return len(self._rendered)


def map_names(names: Iterable[str]) -> NameMap:
    """Render a set of tool names for model APIs, without two names sharing a rendering."""
    unique = sorted(set(names))
    bases = {n: _base(n) for n in unique}
    count = Counter(bases.values())
    rendered: dict[str, str] = {}
    pending: list[str] = []
    for n in unique:
        b = bases[n]
        if len(b) <= MAX_NAME and count[b] == 1:
            rendered[n] = b
        else:
            pending.append(n)
    used = set(rendered.values())
    # A hash may, once in billions, meet another rendering: try the next seed until free.
    for n in pending:
        attempt = 0
        r = _hashed(n, bases[n], attempt)
        while r in used:
            attempt += 1
            r = _hashed(n, bases[n], attempt)
        rendered[n] = r
        used.add(r)
    return NameMap(rendered)
