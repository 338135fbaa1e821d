"""Tool definitions in each model API's format.

``tools`` of a request, as the API's documentation writes it: OpenAI Chat Completions
(``openai``), OpenAI Responses (``openai-responses``), Anthropic Messages (``anthropic``) and
Gemini (``gemini``, one Tool holding every function declaration).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ._names import NameMap, map_names
from ._schema import (
    Schema,
    MAX_ALL_BYTES,
    MAX_TOOL_BYTES,
    SchemaError,
    anthropic_input_schema,
    gemini_parameters,
    inline_sized,
    openai_parameters,
    openai_strict_parameters,
)

__all__ = ["FORMATS", "Definitions", "check_format", "definitions", "usable"]

FORMATS = ("openai", "openai-responses", "anthropic", "gemini")


def check_format(fmt: str) -> str:
    """Return ``fmt`` when it names a model API format; else raise ValueError naming them."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    return fmt


@dataclass(frozen=True)
class Definitions:
    """Tool definitions for one API, and what it takes to map its calls back."""

    format: str
    tools: list[dict[str, Any]]
    names: NameMap
    schemas: dict[str, Schema]  # tool name -> its schema with references inlined
    strict: frozenset[str]  # tools sent in strict mode
    left_out: dict[str, str] = field(default_factory=dict)  # tool name -> why it is not given


def _description(tool: dict[str, Any]) -> str:
    d = tool.get("description") or tool.get("title") or ""
    return d if isinstance(d, str) else ""


def _one(fmt: str, name: str, description: str, schema: Schema, strict: bool) -> tuple[dict[str, Any], bool]:
    if fmt in ("openai", "openai-responses"):
        params = openai_strict_parameters(schema) if strict else None
        is_strict = params is not None
        if params is None:
            params = openai_parameters(schema)
        fn: dict[str, Any] = {"name": name}
        if description:
            fn["description"] = description
        fn["parameters"] = params
        if fmt == "openai":
            if strict:
                fn["strict"] = is_strict
            return {"type": "function", "function": fn}, is_strict
        return {"type": "function", **fn, "strict": is_strict}, is_strict
    if fmt == "anthropic":
        out: dict[str, Any] = {"name": name}
        if description:
            out["description"] = description
        out["input_schema"] = anthropic_input_schema(schema)
        return out, False
    key, params = gemini_parameters(schema)
    decl: dict[str, Any] = {"name": name}
    if description:
        decl["description"] = description
    if params is not None:
        decl[key] = params
    return decl, False


def usable(
    tools: Sequence[dict[str, Any]], *, max_tool_bytes: int = MAX_TOOL_BYTES, max_all_bytes: int = MAX_ALL_BYTES
) -> tuple[dict[str, Schema], dict[str, str]]:
    """The inlined schema of each tool that can be given, by name, and why each other one
    cannot: its schema is unusable (see :class:`SchemaError`) or takes more than
    ``max_tool_bytes`` once inlined, or the tools before it, by name, took ``max_all_bytes``.
    Neither bound lets a listing make the library build more than it allows."""
    schemas: dict[str, Schema] = {}
    left_out: dict[str, str] = {}
    total = 0
    for t in sorted(tools, key=lambda t: t["name"]):
        name = t["name"]
        try:
            schema, size = inline_sized(t.get("inputSchema"), max_bytes=max_tool_bytes)
        except SchemaError as e:
            left_out[name] = f"tool {name} left out: {e}"
            continue
        if total + size > max_all_bytes:
            left_out[name] = (f"tool {name} left out: its schema takes {size} bytes once inlined, and the "
                              f"tools before it by name {total} of the {max_all_bytes} allowed in all")
            continue
        schemas[name] = schema
        total += size
    return schemas, left_out


def definitions(tools: Sequence[dict[str, Any]], fmt: str, *, strict: bool = False) -> Definitions:
    """Definitions of MCP tools (``tools/list`` entries, as JSON objects) for one API.

    A tool whose schema cannot be given (see :func:`usable`) is left out, and named with
    the reason in ``left_out``.
    """
    check_format(fmt)
    schemas, left_out = usable(tools)
    tools = [t for t in tools if t["name"] in schemas]
    names = map_names(t["name"] for t in tools)
    out: list[dict[str, Any]] = []
    strict_tools: set[str] = set()
    for t in sorted(tools, key=lambda t: t["name"]):
        schema = schemas[t["name"]]
        d, is_strict = _one(fmt, names.provider_name(t["name"]), _description(t), schema, strict)
        if is_strict:
            strict_tools.add(t["name"])
        out.append(d)
    if fmt == "gemini":
        out = [{"functionDeclarations": out}]
    return Definitions(fmt, out, names, schemas, frozenset(strict_tools), left_out)
