"""The model APIs' rules for function names and parameter schemas, written from their
documentation (OpenAI function calling and Structured Outputs' supported schemas, Anthropic
tool use, Gemini's FunctionDeclaration and Schema), to check what the library makes.

Each checker returns the list of rules a definition breaks; [] means the API takes it.
"""

from __future__ import annotations

import re
from typing import Any

# OpenAI: "Must be a-z, A-Z, 0-9, or contain underscores and dashes, with a maximum length of 64."
OPENAI_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}\Z")
# Anthropic: name must match ^[a-zA-Z0-9_-]{1,64}$.
ANTHROPIC_NAME = OPENAI_NAME
# Gemini: "Must start with a letter or an underscore. Must be a-z, A-Z, 0-9, or contain
# underscores, dots and dashes, with a maximum length of 64."
GEMINI_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_.\-]{0,63}\Z")
# Gemini parameters: "Parameter names must start with a letter or an underscore and must only
# contain chars a-z, A-Z, 0-9, or underscores with a maximum length of 64."
GEMINI_PARAMETER = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]{0,63}\Z")
# Anthropic: property keys should match ^[a-zA-Z0-9_.-]{1,64}$.
ANTHROPIC_PROPERTY = re.compile(r"[a-zA-Z0-9_.\-]{1,64}\Z")

# Structured Outputs' supported keywords (strings: pattern, format; numbers: multipleOf,
# maximum, exclusiveMaximum, minimum, exclusiveMinimum; arrays: minItems, maxItems; objects:
# properties, required, additionalProperties; anyOf; enum; const; $ref/$defs) plus the
# annotations description and title.
STRICT_KEYWORDS = {
    "type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf",
    "description", "title", "pattern", "format", "multipleOf", "maximum", "exclusiveMaximum",
    "minimum", "exclusiveMinimum", "minItems", "maxItems", "$ref", "$defs",
}
STRICT_FORMATS = {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
JSON_TYPES = {"string", "number", "integer", "boolean", "object", "array", "null"}

# Gemini's Schema object (an OpenAPI 3.0 subset): its documented fields.
GEMINI_FIELDS = {
    "type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems", "properties",
    "required", "minProperties", "maxProperties", "minLength", "maxLength", "pattern", "example", "anyOf",
    "propertyOrdering", "default", "items", "minimum", "maximum",
}
GEMINI_TYPES = {"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"}


def _types(s: dict[str, Any]) -> list[str]:
    t = s.get("type")
    return [t] if isinstance(t, str) else list(t) if isinstance(t, list) else []


def _json_schema(s: Any, where: str, problems: list[str], property_rule: re.Pattern[str] | None) -> None:
    if not isinstance(s, dict):
        if s is not True:
            problems.append(f"{where}: a schema must be an object")
        return
    if "$ref" in s or "$defs" in s:
        problems.append(f"{where}: $ref/$defs left in")
    for t in _types(s):
        if t not in JSON_TYPES:
            problems.append(f"{where}: unknown type {t!r}")
    props = s.get("properties")
    if isinstance(props, dict):
        for k, v in props.items():
            if property_rule is not None and not property_rule.match(k):
                problems.append(f"{where}: property name {k!r}")
            _json_schema(v, f"{where}.{k}", problems, property_rule)
    for key in ("items", "additionalProperties", "not"):
        if isinstance(s.get(key), dict):
            _json_schema(s[key], f"{where}[{key}]", problems, property_rule)
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        for i, b in enumerate(s.get(key) or []):
            _json_schema(b, f"{where}.{key}[{i}]", problems, property_rule)


def _root_object(s: Any, problems: list[str]) -> None:
    if not isinstance(s, dict) or s.get("type") != "object":
        problems.append('the root must be {"type": "object"}')
        return
    for key in ("anyOf", "oneOf", "allOf", "enum", "not"):
        if key in s:
            problems.append(f"{key} at the root")


def check_openai_function(fn: dict[str, Any]) -> list[str]:
    """A function of Chat Completions (``tool["function"]``) or a Responses function tool."""
    problems: list[str] = []
    if not OPENAI_NAME.match(fn.get("name", "")):
        problems.append(f"name {fn.get('name')!r}")
    params = fn.get("parameters")
    _root_object(params, problems)
    if isinstance(params, dict) and not isinstance(params.get("properties"), dict):
        problems.append("object schema missing properties")
    _json_schema(params, "parameters", problems, None)
    if fn.get("strict"):
        _strict(params, "parameters", problems, depth=0, counts={"props": 0, "enum": 0})
    return problems


def _strict(s: Any, where: str, problems: list[str], depth: int, counts: dict[str, int]) -> None:
    if not isinstance(s, dict) or not s:
        problems.append(f"{where}: strict mode needs a typed schema")
        return
    for k in s:
        if k not in STRICT_KEYWORDS:
            problems.append(f"{where}: {k} is not supported in strict mode")
    if "format" in s and s["format"] not in STRICT_FORMATS:
        problems.append(f"{where}: format {s['format']!r}")
    counts["enum"] += len(s.get("enum") or [])
    types = _types(s)
    if "object" in types:
        if depth > 10:
            problems.append(f"{where}: more than 10 levels of nesting")
        if s.get("additionalProperties") is not False:
            problems.append(f"{where}: additionalProperties must be false")
        props = s.get("properties") or {}
        counts["props"] += len(props)
        if sorted(s.get("required") or []) != sorted(props):
            problems.append(f"{where}: every property must be required")
        for k, v in props.items():
            _strict(v, f"{where}.{k}", problems, depth + 1, counts)
    if "array" in types:
        if "items" not in s:
            problems.append(f"{where}: an array needs items")
        else:
            _strict(s["items"], f"{where}[items]", problems, depth + 1, counts)
    for i, b in enumerate(s.get("anyOf") or []):
        _strict(b, f"{where}.anyOf[{i}]", problems, depth, counts)
    if depth == 0 and (counts["props"] > 5000 or counts["enum"] > 1000):
        problems.append("past strict mode's limits (5000 properties, 1000 enum values)")


def check_openai(tool: dict[str, Any]) -> list[str]:
    if tool.get("type") != "function" or not isinstance(tool.get("function"), dict):
        return ['a Chat Completions tool is {"type": "function", "function": {...}}']
    return check_openai_function(tool["function"])


def check_openai_responses(tool: dict[str, Any]) -> list[str]:
    if tool.get("type") != "function" or "function" in tool or not isinstance(tool.get("strict"), bool):
        return ['a Responses function tool is {"type": "function", "name", "parameters", "strict"}']
    return check_openai_function(tool)


def check_anthropic(tool: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    if not ANTHROPIC_NAME.match(tool.get("name", "")):
        problems.append(f"name {tool.get('name')!r}")
    schema = tool.get("input_schema")
    _root_object(schema, problems)
    _json_schema(schema, "input_schema", problems, ANTHROPIC_PROPERTY)
    return problems


def _gemini_schema(s: Any, where: str, problems: list[str]) -> None:
    if not isinstance(s, dict):
        problems.append(f"{where}: a Schema must be an object")
        return
    for k in s:
        if k not in GEMINI_FIELDS:
            problems.append(f"{where}: {k} is not a field of Gemini's Schema")
    t = s.get("type")
    if t is None and "anyOf" not in s:
        problems.append(f"{where}: no type")
    if t is not None and t not in GEMINI_TYPES:
        problems.append(f"{where}: type {t!r}")
    if "enum" in s and not all(isinstance(v, str) for v in s["enum"]):
        problems.append(f"{where}: enum values must be strings")
    if t == "OBJECT":
        props = s.get("properties")
        if not props:
            problems.append(f"{where}: properties should be non-empty for OBJECT type")
        for k, v in (props or {}).items():
            if not GEMINI_PARAMETER.match(k):
                problems.append(f"{where}: parameter name {k!r}")
            _gemini_schema(v, f"{where}.{k}", problems)
        for r in s.get("required") or []:
            if r not in (props or {}):
                problems.append(f"{where}: required {r!r} is not a property")
    if t == "ARRAY":
        if "items" not in s:
            problems.append(f"{where}: ARRAY needs items")
        else:
            _gemini_schema(s["items"], f"{where}[items]", problems)
    for i, b in enumerate(s.get("anyOf") or []):
        _gemini_schema(b, f"{where}.anyOf[{i}]", problems)


def check_gemini(decl: dict[str, Any]) -> list[str]:
    """One FunctionDeclaration."""
    problems: list[str] = []
    if not GEMINI_NAME.match(decl.get("name", "")):
        problems.append(f"name {decl.get('name')!r}")
    if "parameters" in decl and "parametersJsonSchema" in decl:
        problems.append("parameters and parametersJsonSchema are mutually exclusive")
    if "parameters" in decl:
        _gemini_schema(decl["parameters"], "parameters", problems)
        if decl["parameters"].get("type") != "OBJECT":
            problems.append("parameters must be an OBJECT")
    if "parametersJsonSchema" in decl:
        # "The schema must describe an object where the properties are the parameters."
        _root_object(decl["parametersJsonSchema"], problems)
        _json_schema(decl["parametersJsonSchema"], "parametersJsonSchema", problems, None)
    return problems


def check(fmt: str, tools: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Every rule the tools of a request in format ``fmt`` break, by function name."""
    out: dict[str, list[str]] = {}
    if fmt == "gemini":
        if len(tools) != 1 or set(tools[0]) != {"functionDeclarations"}:
            return {"": ["gemini tools are one Tool holding functionDeclarations"]}
        for d in tools[0]["functionDeclarations"]:
            if p := check_gemini(d):
                out[d.get("name", "")] = p
        return out
    checker = {"openai": check_openai, "openai-responses": check_openai_responses, "anthropic": check_anthropic}[fmt]
    for t in tools:
        name = t.get("function", t).get("name", "")
        if p := checker(t):
            out[name] = p
    return out
