"""Input schemas as each model API takes them.

MCP tools carry JSON Schema (2020-12 by default), which the model APIs take only in part:

- every API: ``$ref`` is inlined (a reference back into itself becomes ``{}``, any value)
  and ``$defs``, ``$schema``, ``$id`` and ``$comment`` go; the root is an object, and what
  constrains it across properties (``anyOf``, ``oneOf``, ``allOf``, ``not``, ``if``) is left
  out there: the node checks arguments against the whole schema anyway;
- OpenAI: the root is an object with ``properties``; in strict mode every object also has
  ``additionalProperties: false`` and lists every property in ``required``, a property that
  was optional may be ``null`` instead, and only the keywords OpenAI documents for Structured
  Outputs stay; a schema strict mode cannot hold (a free-form object, an array without
  ``items``, ``allOf``, past OpenAI's limits) is sent with ``strict: false``;
- Gemini: ``parameters`` holds an OpenAPI 3.0 subset (one upper-case ``type``, ``nullable``,
  string ``enum``s, ``anyOf``, no ``additionalProperties``); a schema that subset cannot hold
  (a free-form object or value, property names outside ``[A-Za-z_][A-Za-z0-9_]{0,63}``) goes
  whole in ``parametersJsonSchema`` instead, and a tool without parameters has neither.

The vectors in ``testdata/app/vectors.json`` hold this module and the Go package to the same
output.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

__all__ = [
    "MAX_ALL_BYTES",
    "MAX_TOOL_BYTES",
    "SchemaError",
    "drop_strict_nulls",
    "gemini_parameters",
    "inline_refs",
    "openai_parameters",
    "openai_strict_parameters",
    "anthropic_input_schema",
]

Schema = dict[str, Any]

# Bounds what one hostile schema can make the library build.
_MAX_NODES = 100_000
_MAX_DEPTH = 64

#: Bytes of compact JSON one tool's schema may take once its references are inlined. A
#: value named by ``$ref`` is repeated wherever it is named, so a small schema can name a
#: large one thousands of times; counting bytes, not nodes, bounds what that builds.
MAX_TOOL_BYTES = 1 << 20
#: Bytes of compact JSON the inlined schemas of every tool of one listing may take together.
MAX_ALL_BYTES = 16 << 20

_DROPPED = ("$defs", "definitions", "$schema", "$id", "$comment", "$anchor", "$dynamicAnchor", "$vocabulary")


class SchemaError(ValueError):
    """A schema no model API format can be made from (too large, too deep)."""


def _pointer(root: Any, ref: str) -> Any:
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        return None
    node = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def _scalar_size(v: Any) -> int:
    if isinstance(v, str):
        return len(v.encode()) + 2  # escapes aside
    if v is None or v is True:
        return 4
    if v is False:
        return 5
    return len(repr(v))


def json_size(value: Any, limit: int) -> int:
    """The size of ``value`` as compact JSON (escapes aside), counted no further than past
    ``limit``: the work is bounded by the limit, not by the value."""
    size = 0
    stack = [value]
    while stack and size <= limit:
        v = stack.pop()
        if isinstance(v, dict):
            size += 2 + max(len(v) - 1, 0)
            for k, item in v.items():
                size += _scalar_size(str(k)) + 1
                stack.append(item)
        elif isinstance(v, list):
            size += 2 + max(len(v) - 1, 0)
            stack.extend(v)
        else:
            size += _scalar_size(v)
    return size


def inline_refs(schema: Any, *, max_bytes: int = MAX_TOOL_BYTES) -> Schema:
    """The schema with every local ``$ref`` replaced by what it names.

    Raises SchemaError when the result would take more than ``max_bytes`` of JSON, nest
    deeper than 64 or hold more than 100,000 schemas."""
    return inline_sized(schema, max_bytes=max_bytes)[0]


def inline_sized(schema: Any, *, max_bytes: int = MAX_TOOL_BYTES) -> tuple[Schema, int]:
    """:func:`inline_refs`, and the bytes of compact JSON its result takes."""
    if not isinstance(schema, dict):
        return {"type": "object", "properties": {}}, 33
    budget = [_MAX_NODES]
    room = [max_bytes]

    def spend(n: int) -> None:
        room[0] -= n
        if room[0] < 0:
            raise SchemaError(f"schema expands past {max_bytes} bytes once its references are inlined")

    def walk(node: Any, stack: tuple[str, ...], depth: int) -> Any:
        budget[0] -= 1
        if budget[0] < 0:
            raise SchemaError(f"schema expands past {_MAX_NODES} nodes once its references are inlined")
        if depth > _MAX_DEPTH:
            raise SchemaError(f"schema nests deeper than {_MAX_DEPTH}")
        if isinstance(node, list):
            spend(2 + max(len(node) - 1, 0))
            return [walk(v, stack, depth + 1) for v in node]
        if not isinstance(node, dict):
            spend(_scalar_size(node))
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            siblings = {k: v for k, v in node.items() if k != "$ref" and k not in _DROPPED}
            target = _pointer(schema, ref)
            if target is None or ref in stack or not isinstance(target, dict):
                # Unresolvable or recursive: any value, with what the reference's siblings say.
                return walk(siblings, stack, depth + 1)
            merged = {k: v for k, v in target.items() if k not in _DROPPED}
            merged.update(siblings)
            return walk(merged, stack + (ref,), depth + 1)
        out: dict[str, Any] = {}
        spend(1)
        for k, v in node.items():
            if k in _DROPPED:
                continue
            spend(_scalar_size(k) + 2)
            if k in ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas"):
                if isinstance(v, dict):
                    spend(1)
                    out[k] = {}
                    for pk, pv in v.items():
                        spend(_scalar_size(pk) + 2)
                        out[k][pk] = walk(pv, stack, depth + 1)
                else:
                    spend(json_size(v, room[0]))
                    out[k] = v
            elif k in ("enum", "const", "default", "examples", "example", "required"):
                # Measured before it is copied: the copy is made only once it fits.
                spend(json_size(v, room[0]))
                out[k] = copy.deepcopy(v)
            else:
                out[k] = walk(v, stack, depth + 1)
        return out

    inlined: Schema = walk(schema, (), 0)
    return inlined, max_bytes - room[0]


# Constraints across properties at the top, which no API here takes there; the node still
# checks every call's arguments against the tool's whole schema.
_ROOT_DROPPED = ("oneOf", "anyOf", "allOf", "not", "if", "then", "else", "enum", "const")


def _object_root(schema: Schema) -> Schema:
    out = {k: v for k, v in schema.items() if k not in _ROOT_DROPPED}
    out["type"] = "object"
    if not isinstance(out.get("properties"), dict):
        out["properties"] = {}
    return out


def openai_parameters(inlined: Schema) -> Schema:
    """Parameters for an OpenAI function without strict mode."""
    return _object_root(inlined)


def anthropic_input_schema(inlined: Schema) -> Schema:
    """An Anthropic tool's ``input_schema``."""
    return _object_root(inlined)


# ---- OpenAI strict mode ----------------------------------------------------------------

_STRICT_KEEP = frozenset(
    {
        "type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf",
        "description", "title", "pattern", "format", "multipleOf", "maximum", "exclusiveMaximum",
        "minimum", "exclusiveMinimum", "minItems", "maxItems",
    }
)
_STRICT_FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"})
_STRICT_MAX_PROPERTIES = 5000
_STRICT_MAX_NESTING = 10
_STRICT_MAX_ENUM = 1000


class _NotStrict(Exception):
    pass


def _nullable(s: Schema) -> Schema:
    t = s.get("type")
    if isinstance(t, str):
        if t == "null":
            return s
        out = dict(s, type=[t, "null"])
    elif isinstance(t, list):
        out = dict(s) if "null" in t else dict(s, type=[*t, "null"])
    elif "anyOf" in s:
        branches = s["anyOf"]
        if any(b.get("type") == "null" for b in branches):
            return s
        return dict(s, anyOf=[*branches, {"type": "null"}])
    else:
        return {"anyOf": [s, {"type": "null"}]}
    if "enum" in out and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]
    return out


def openai_strict_parameters(inlined: Schema) -> Schema | None:
    """Parameters for an OpenAI function in strict mode, or None when strict mode cannot hold them."""
    counts = {"properties": 0, "enum": 0}

    def walk(s: Any, depth: int) -> Schema:
        if not isinstance(s, dict) or not s:
            raise _NotStrict("any value")
        if "allOf" in s or "prefixItems" in s or "patternProperties" in s:
            raise _NotStrict("unsupported keyword")
        out: Schema = {k: v for k, v in s.items() if k in _STRICT_KEEP}
        if "oneOf" in s and "anyOf" not in s:
            out["anyOf"] = s["oneOf"]
        if "format" in out and out["format"] not in _STRICT_FORMATS:
            del out["format"]
        if "enum" in out:
            counts["enum"] += len(out["enum"]) if isinstance(out["enum"], list) else 0
        if "anyOf" in out:
            if not isinstance(out["anyOf"], list):
                raise _NotStrict("anyOf")
            out["anyOf"] = [walk(b, depth) for b in out["anyOf"]]
        if "type" not in out and "anyOf" not in out and "enum" not in out and "const" not in out:
            raise _NotStrict("untyped")
        types = out.get("type")
        types = [types] if isinstance(types, str) else (types or [])
        if "object" in types:
            if depth >= _STRICT_MAX_NESTING:
                raise _NotStrict("too deep")
            props = s.get("properties")
            if not isinstance(props, dict) or s.get("additionalProperties") not in (None, False):
                raise _NotStrict("free-form object")
            props = props or {}
            required = set(s.get("required") or [])
            counts["properties"] += len(props)
            new_props = {}
            for name, p in props.items():
                converted = walk(p, depth + 1)
                new_props[name] = converted if name in required else _nullable(converted)
            out["properties"] = new_props
            out["required"] = sorted(new_props)
            out["additionalProperties"] = False
        else:
            out.pop("properties", None)
            out.pop("required", None)
            out.pop("additionalProperties", None)
        if "array" in types:
            if "items" not in s:
                raise _NotStrict("array without items")
            out["items"] = walk(s["items"], depth + 1)
        else:
            out.pop("items", None)
        return out

    root = _object_root(inlined)
    try:
        out = walk(root, 0)
    except _NotStrict:
        return None
    if counts["properties"] > _STRICT_MAX_PROPERTIES or counts["enum"] > _STRICT_MAX_ENUM:
        return None
    return out


def drop_strict_nulls(arguments: Any, inlined: Schema) -> Any:
    """Arguments from a strict-mode call with the nulls that stand for an omitted property left out.

    Strict mode makes every property required, an optional one nullable; the tool's own
    schema may not take null there, so such a null means "not given".
    """

    def takes_null(s: Any) -> bool:
        if not isinstance(s, dict):
            return True
        t = s.get("type")
        if t == "null" or (isinstance(t, list) and "null" in t):
            return True
        return any(takes_null(b) for b in s.get("anyOf", []) + s.get("oneOf", []) if isinstance(b, dict))

    def walk(value: Any, s: Any) -> Any:
        if not isinstance(s, dict):
            return value
        if isinstance(value, dict) and isinstance(s.get("properties"), dict):
            props = s["properties"]
            required = set(s.get("required") or [])
            out = {}
            for k, v in value.items():
                p = props.get(k)
                if v is None and p is not None and k not in required and not takes_null(p):
                    continue
                out[k] = walk(v, p)
            return out
        if isinstance(value, list) and isinstance(s.get("items"), dict):
            return [walk(v, s["items"]) for v in value]
        return value

    return walk(arguments, inlined)


# ---- Gemini -----------------------------------------------------------------------------

_GEMINI_TYPES = {"string": "STRING", "number": "NUMBER", "integer": "INTEGER", "boolean": "BOOLEAN",
                 "array": "ARRAY", "object": "OBJECT"}
_GEMINI_FORMATS = {"NUMBER": {"float", "double"}, "INTEGER": {"int32", "int64"}, "STRING": {"enum", "date-time"}}
_GEMINI_COPY = ("title", "description", "minimum", "maximum", "minItems", "maxItems", "minLength", "maxLength",
                "pattern", "minProperties", "maxProperties", "default")
GEMINI_PROPERTY = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}\Z")


class _NotSubset(Exception):
    pass


def _describe(s: Schema, note: str) -> None:
    s["description"] = f"{s['description']} ({note})" if s.get("description") else note


def _merge_all_of(s: Schema) -> Schema:
    out = {k: v for k, v in s.items() if k != "allOf"}
    for part in s["allOf"]:
        if not isinstance(part, dict):
            continue
        for k, v in part.items():
            if k == "properties" and isinstance(v, dict):
                out["properties"] = {**out.get("properties", {}), **v}
            elif k == "required" and isinstance(v, list):
                out["required"] = [*out.get("required", []), *(r for r in v if r not in out.get("required", []))]
            else:
                out.setdefault(k, v)
    return out


def _gemini(s: Any, depth: int) -> Schema:
    if not isinstance(s, dict) or not s:
        raise _NotSubset("any value")
    if "allOf" in s and isinstance(s["allOf"], list):
        s = _merge_all_of(s)
    out: Schema = {}
    for k in _GEMINI_COPY:
        if k in s:
            out[k] = copy.deepcopy(s[k])
    if isinstance(s.get("examples"), list) and s["examples"]:
        out["example"] = copy.deepcopy(s["examples"][0])
    elif "example" in s:
        out["example"] = copy.deepcopy(s["example"])
    t = s.get("type")
    types = [t] if isinstance(t, str) else [x for x in t if isinstance(x, str)] if isinstance(t, list) else []
    nullable = "null" in types or s.get("nullable") is True
    types = [x for x in types if x != "null"]
    branches = s.get("anyOf") if isinstance(s.get("anyOf"), list) else s.get("oneOf")
    if len(types) > 1:
        rest = {k: v for k, v in s.items() if k not in ("type", "anyOf", "oneOf")}
        out = {"anyOf": [_gemini(dict(rest, type=x), depth + 1) for x in types]}
        if nullable:
            out["nullable"] = True
        return out
    if isinstance(branches, list):
        kept = []
        for b in branches:
            if isinstance(b, dict) and b.get("type") == "null" and len(b) == 1:
                nullable = True
            else:
                kept.append(_gemini(b, depth + 1))
        if len(kept) == 1 and not types:
            merged = dict(kept[0])
            for k, v in out.items():
                merged.setdefault(k, v)
            out = merged
        elif kept:
            out["anyOf"] = kept
    if types:
        out["type"] = _GEMINI_TYPES.get(types[0], "STRING")
    values = s.get("enum")
    if "const" in s:
        values = [s["const"]]
    if isinstance(values, list):
        nonnull = [v for v in values if v is not None]
        if None in values:
            nullable = True
        if nonnull and all(isinstance(v, str) for v in nonnull):
            out["enum"] = nonnull
            out.setdefault("type", "STRING")
        elif nonnull:
            _describe(out, "one of: " + ", ".join(json.dumps(v) for v in nonnull))
    fmt = s.get("format")
    if isinstance(fmt, str) and fmt in _GEMINI_FORMATS.get(out.get("type", ""), ()):
        out["format"] = fmt
    if nullable:
        out["nullable"] = True
    if out.get("type") == "OBJECT" or (not types and isinstance(s.get("properties"), dict)):
        props = s.get("properties")
        if not isinstance(props, dict) or not props:
            raise _NotSubset("free-form object")
        for name in props:
            if not GEMINI_PROPERTY.match(name):
                raise _NotSubset(f"property name {name!r}")
        out["type"] = "OBJECT"
        out["properties"] = {k: _gemini(v, depth + 1) for k, v in props.items()}
        required = [r for r in s.get("required") or [] if r in props]
        if required:
            out["required"] = required
    if out.get("type") == "ARRAY":
        items = s.get("items")
        if not isinstance(items, dict) and isinstance(s.get("prefixItems"), list):
            items = {"anyOf": s["prefixItems"]}
        out["items"] = _gemini(items, depth + 1)
    if "type" not in out and "anyOf" not in out:
        raise _NotSubset("any value")
    return out


def gemini_parameters(inlined: Schema) -> tuple[str, Schema | None]:
    """A Gemini function's parameters: ("parameters", the OpenAPI subset), ("parametersJsonSchema",
    the JSON Schema) when the subset cannot hold it, or ("parameters", None) for a tool without
    any (Gemini refuses an object without properties)."""
    root = _object_root(inlined)
    props = root.get("properties")
    extra = root.get("additionalProperties")
    if not props:
        if extra in (None, False):
            return "parameters", None
        return "parametersJsonSchema", root
    try:
        return "parameters", _gemini(root, 0)
    except _NotSubset:
        return "parametersJsonSchema", root
