"""Generate the MEOS bundle's tools from the MEOS 1.3 prototypes.

Reads builder/meos.h of the pymeos-cffi 1.3.0 source distribution (with
cffi's C parser, which keeps parameter names) and policy.toml, plans each
function (plan.py: what it becomes, or why it is excluded), writes each
plan's C body (emit.py), describes each tool in plain words from its name
(describe.py, words.py), and writes:

  build/gen/meos_api.h    the prototypes, compilable as C
  build/gen/tools_gen.c   one tool body per exposed function and the table
  build/gen/manifest.json every exposed tool: name, schemas, category
  docs/functions.md       every function: exposed, or excluded and why

Usage: generate.py MEOS_H POLICY OUT_DIR DOCS_MD
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass

import describe as plain
import emit
from plan import Arg, Declaration, Excluded, Plan, Rules, parse_header, plan

FAMILY_TEXT = {
    "GF_TEMPORAL": "A temporal value (tbool, tint, tfloat, ttext, tgeompoint, tgeometry) in "
    "MEOS text, e.g. [1.5@2025-01-01 08:00:00+00, 2.5@2025-01-01 08:10:00+00] or "
    "[POINT(0 0)@2025-01-01, POINT(1 1)@2025-01-02]; text values in double quotes; "
    "HexWKB; or MF-JSON for moving points.",
    "GF_SET": "A set in MEOS text, e.g. {1, 2, 3}, {1.5, 2}, {2025-01-01, 2025-01-02} (dates), "
    '{2025-01-01 08:00:00+00} (timestamps), {"a", "b"}, {POINT(1 1)}; or HexWKB.',
    "GF_SPAN": "A span in MEOS text, e.g. [1, 5), [1.5, 2.5], [2025-01-01, 2025-01-05] (dates), "
    "[2025-01-01 08:00:00+00, 2025-01-01 09:00:00+00]; or HexWKB.",
    "GF_SPANSET": "A span set in MEOS text, e.g. {[1, 3), [5, 7)} or "
    "{[2025-01-01 08:00:00+00, 2025-01-01 09:00:00+00]}; or HexWKB.",
    "GF_TBOX": "A temporal box, e.g. TBOXFLOAT XT([1, 2],[2025-01-01 00:00:00+00, "
    "2025-01-02 00:00:00+00]), TBOXINT X([1, 5]) or TBOX T([...]); or HexWKB.",
    "GF_STBOX": "A spatiotemporal box, e.g. STBOX X((1,2),(3,4)), STBOX XT(((1,2),(3,4)),"
    "[2025-01-01 00:00:00+00, 2025-01-02 00:00:00+00]), SRID=4326;STBOX ...; or HexWKB.",
    "GF_GEOMETRY": "A geometry as WKT, EWKT (SRID=4326;POINT(1 2)) or HexEWKB.",
    "GF_GEOGRAPHY": "A geography as WKT, EWKT (SRID=4326;POINT(1 2)) or HexEWKB.",
    "GF_NPOINT": "A network point, NPoint(route, position): a route of the road network and "
    "a fraction of its length from 0 to 1, e.g. NPoint(1, 0.5).",
    "GF_NSEGMENT": "A network segment, NSegment(route, start, end), e.g. NSegment(1, 0.2, 0.6).",
}

NULLABLE_STRING = {"type": ["string", "null"]}

# A parameter's JSON Schema by how it is read (value, int and enum: their own).
PARAM_SCHEMAS = {
    "text": {"type": "string", "description": "Text."},
    "cstring": {"type": "string"},
    "interval": {"type": "string", "description": "An interval as MEOS prints it, e.g. "
                 "1 day 02:00:00, 3 mons, 00:10:00 or 90 seconds."},
    "timestamptz": {"type": "string", "description": "A timestamp, ISO 8601 or as MEOS prints "
                    "it, e.g. 2025-01-01 08:00:00+00 (UTC without an offset)."},
    "date": {"type": "string", "description": "A date, YYYY-MM-DD."},
    "double": {"type": "number"},
    "bool": {"type": "boolean"},
}
# One result value's JSON Schema by how it is written.
RESULT_SCHEMAS = {
    "value": NULLABLE_STRING, "text": NULLABLE_STRING, "interval": NULLABLE_STRING,
    "cstring": NULLABLE_STRING, "static_cstring": NULLABLE_STRING,
    "timestamptz": {"type": "string"}, "date": {"type": "string"},
    "double": {"type": ["number", "string"]}, "bool": {"type": "boolean"},
    "uint": {"type": "string"}, "int": {"type": "integer"},
}
# An aggregate's array element's JSON Schema by how it is read.
ELEMENT_SCHEMAS = {
    "text": {"type": "string"}, "int": {"type": "integer"}, "double": {"type": "number"},
    "date": {"type": "string", "description": "A date, YYYY-MM-DD."},
    "timestamptz": {"type": "string", "description": "A timestamp, ISO 8601."},
}


def param_schema(a: Arg) -> dict:
    """The JSON Schema of argument a."""
    conv, _, extra = a.kind.partition(":")
    if conv == "value":
        return {"type": "string", "description": FAMILY_TEXT[extra]}
    if conv == "int":
        assert a.range is not None
        return {"type": "integer", "minimum": a.range[2], "maximum": a.range[3]}
    if conv == "enum":
        return {"type": "string", "enum": a.values}
    return PARAM_SCHEMAS[conv]


def result_schema(kind: str) -> dict:
    """The JSON Schema of one result value written as kind."""
    return RESULT_SCHEMAS[kind.partition(":")[0]]


def properties(p: Plan) -> dict:
    """The properties of p's input schema."""
    g = p.aggregate
    if g is None:
        return {a.name: param_schema(a) for a in p.args}
    conv, _, family = g.element.kind.partition(":")
    item = {"type": "string", "description": FAMILY_TEXT[family]} if conv == "value" else \
        ELEMENT_SCHEMAS[conv]
    props = {"values": {"type": "array", "items": item, "maxItems": g.max_values,
                        "description": "The values to aggregate, at most "
                        f"{g.max_values:,} holding at most {g.max_instants:,} instants (a set's "
                        "values and a span set's spans count as instants; any other value as "
                        "one) and 64 MiB of text in one call."}}
    if g.window:
        props["interv"] = {"type": "string", "description": "The window: each value also "
                           "counts for this long after its time, as MEOS prints intervals, "
                           "e.g. 00:10:00 or 1 day."}
    return props


def answer_schema(p: Plan) -> dict:
    """The JSON Schema of p's structuredContent.result."""
    r = p.result
    one = result_schema(r.kind)
    if r.mode == "array":
        return {"type": ["array", "null"], "items": one}
    if r.mode == "split":
        props = {b.key: result_schema(b.kind) for b in r.bins}
        props["value"] = one
        return {"type": ["array", "null"], "items": {
            "type": "object", "properties": props, "required": list(props)}}
    if r.mode == "out":
        t = one["type"]
        if not isinstance(t, list):
            return {"type": [t, "null"]}
        return {"type": t + ["null"] if "null" not in t else t}
    return one


def param_kinds(p: Plan) -> list[list[str]]:
    """How each argument travels, for the differential test."""
    g = p.aggregate
    if g is None:
        return [[a.name, a.kind] for a in p.args]
    kinds = [["values", "array:" + g.element.kind]]
    if g.window:
        kinds.append(["interv", "interval"])
    return kinds


def input_schema(p: Plan) -> dict:
    """The JSON Schema of p's arguments."""
    props = properties(p)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
            "properties": props, "required": list(props), "additionalProperties": False}


def output_schema(p: Plan) -> dict:
    """The JSON Schema of p's structuredContent."""
    return {"type": "object", "properties": {"result": answer_schema(p)},
            "required": ["result"]}


@dataclass
class Tool:
    """A planned function with its words: description, title, the tool it mirrors."""

    plan: Plan
    description: str
    title: str = ""
    variant_of: str = ""

    @property
    def name(self) -> str:
        return self.plan.tool


# What each aggregate computes, by the operation its transition function names.
AGG_OPERATIONS = {
    "extent": "the extent: the bounding {result} of all the values",
    "union": "the union of all the values, as one {result}",
    "tcount": "the temporal count: at each instant, how many of the values are defined "
              "(e.g. how many vehicles were moving)",
    "tmin": "the temporal minimum: at each instant, the least of the values defined then",
    "tmax": "the temporal maximum: at each instant, the greatest of the values defined then",
    "tsum": "the temporal sum: at each instant, the sum of the values defined then",
    "tavg": "the temporal average: at each instant, the average of the values defined then "
            "(e.g. the average speed of a fleet over time)",
    "tand": "the temporal and: at each instant, true where every value defined then is true",
    "tor": "the temporal or: at each instant, true where some value defined then is true",
    "tcentroid": "the temporal centroid: at each instant, the centroid of the positions of the "
                 "moving points defined then",
    "wmin": "the window minimum: each value also counts for interv after its time; at each "
            "instant, the least of the values counting then",
    "wmax": "the window maximum: each value also counts for interv after its time; at each "
            "instant, the greatest of the values counting then",
    "wsum": "the window sum: each value also counts for interv after its time; at each "
            "instant, the sum of the values counting then",
    "wavg": "the window average: each value also counts for interv after its time; at each "
            "instant, the average of the values counting then",
}
RESULT_WORDS = {"SkipList": "temporal value", "Set": "set", "SpanSet": "span set",
                "Span": "span", "TBox": "temporal box", "STBox": "spatiotemporal box"}


def describe_aggregate(p: Plan) -> str:
    """An aggregate tool's description: what it computes, then where it comes from."""
    assert p.aggregate is not None
    words = p.function[: -len("_transfn")].split("_")
    op, of = words[-1], " ".join(words[:-1])
    what = AGG_OPERATIONS[op].format(result=RESULT_WORDS[p.aggregate.state])
    steps = f"{p.function} then {p.aggregate.final}" if p.aggregate.final else p.function
    return (f"{plain.describe_aggregate(p.tool)} "
            f"Aggregate of {of} values, all given at once in the array values: {what}. "
            f"Generated from the MEOS 1.3 aggregate functions {steps} (aggregates); the "
            "answer is structuredContent.result, null for no values.")


def describe(p: Plan) -> str:
    """The tool's description: what it is in plain words, then where it comes from."""
    if p.aggregate is not None:
        return describe_aggregate(p)
    return (f"{plain.describe(p.tool, p.category)} Generated from the MEOS 1.3 C function "
            f"{p.tool} ({p.category}); the answer is structuredContent.result, null if MEOS "
            "answers nothing.")


def c_string(s: str) -> str:
    return json.dumps(s, ensure_ascii=True)


ANNOTATIONS = json.dumps({"readOnlyHint": True, "destructiveHint": False,
                          "idempotentHint": True, "openWorldHint": False})


def main() -> int:
    meos_h, policy_path, out_dir, docs_md = sys.argv[1:5]
    funcs, enums = parse_header(meos_h)
    rules = Rules.load(policy_path, enums)
    os.makedirs(out_dir, exist_ok=True)
    write_header(meos_h, os.path.join(out_dir, "meos_api.h"))
    tools, table = plan_all(funcs, rules)
    write_c(tools, os.path.join(out_dir, "tools_gen.c"))
    write_manifest(tools, os.path.join(out_dir, "manifest.json"))
    write_docs(table, docs_md)
    print(f"generate.py: {len(funcs)} declarations, {len(table)} functions, "
          f"{len(tools)} tools", file=sys.stderr)
    return 0


def plan_all(funcs: list[Declaration], rules: Rules) -> tuple[list[Tool], list[tuple[str, str, str]]]:
    """The tools of the header's functions, described, and the table of every
    function (name, header, what it became) for docs/functions.md."""
    tools: list[Tool] = []
    table: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    for name, section, decl in funcs:
        if name in seen:
            continue
        seen.add(name)
        try:
            p = plan(name, section, decl, rules)
        except Excluded as e:
            table.append((name, section, "excluded: " + str(e)))
            continue
        tools.append(Tool(p, describe(p)))
        where = f"`meos.{p.tool}` " if p.tool != name else ""
        network = "; with a road network" if p.network else ""
        table.append((name, section, f"tool {where}({p.category}{network})"))
    # A final function is a step of the aggregate tools, not a tool of its own.
    finals: dict[str, list[str]] = {}
    for t in tools:
        if t.plan.aggregate and t.plan.aggregate.final:
            finals.setdefault(t.plan.aggregate.final, []).append(f"`meos.{t.name}`")
    table = [(n, sec, f"the final step of {', '.join(finals[n])}" if n in finals else st)
             for n, sec, st in table]
    names = {t.name for t in tools}
    for t in tools:
        t.title = plain.title(t.name)
        t.variant_of = plain.variant_of(t.name, names)
    return tools, table


def write_header(meos_h: str, path: str) -> None:
    """The prototypes as a C header."""
    with open(meos_h, encoding="utf-8") as f:
        header = f.read()
    # The header ends with cffi's declaration of pymeos's Python callback.
    header = "\n".join(line for line in header.split("\n") if 'extern "Python"' not in line)
    with open(path, "w", encoding="utf-8") as f:
        f.write("/* Generated by gen/generate.py from pymeos-cffi 1.3.0 builder/meos.h. */\n"
                "#ifndef MEOS_API_H\n#define MEOS_API_H\n#include <stdbool.h>\n"
                "#include <stddef.h>\n#include <stdint.h>\n" + header + "\n#endif\n")


def write_manifest(tools: list[Tool], path: str) -> None:
    """Every tool as the node and the tests read it."""
    manifest = []
    for t in tools:
        p = t.plan
        manifest.append({
            "name": p.tool, "category": p.category, "description": t.description,
            "inputSchema": input_schema(p), "outputSchema": output_schema(p),
            "prototype": p.prototype, "function": p.function,
            "final": p.aggregate.final if p.aggregate else "", "params": param_kinds(p),
            "accepted": p.accepted, "result": p.result.kind, "mode": p.mode,
            "outs": [[b.param, b.key, b.kind, str(b.ct)] for b in p.result.bins],
            "network": p.network, "title": t.title, "variant_of": t.variant_of})
    with open(path, "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1)


def write_c(tools: list[Tool], path: str) -> None:
    out = ["/* Generated by gen/generate.py from the MEOS 1.3 prototypes and policy.toml;",
           " * do not edit. One body per tool; src/gen_args.c reads and writes values. */",
           '#include "gen.h"', "", "#include <stdlib.h>", ""]
    for t in tools:
        out.append(f"/* {t.plan.prototype} */")
        out.append(f"static json_t *g_{t.name}(call_t *c, json_t *args)")
        out.append("{")
        out.append("    json_t *err = NULL;")
        out.append("    (void)c; (void)args; (void)err;")
        out += emit.body(t.plan)
        out.append("}")
        out.append("")
    out.append("const gen_tool_t gen_tools[] = {")
    for t in tools:
        p = t.plan
        out.append(f"    {{{c_string(t.name)}, {c_string(p.function)}, {c_string(p.category)},")
        out.append(f"     {c_string(t.title)},")
        out.append(f"     {c_string(t.description)},")
        out.append(f"     {c_string(json.dumps(input_schema(p), separators=(',', ':')))},")
        out.append(f"     {c_string(json.dumps(output_schema(p), separators=(',', ':')))},")
        out.append(f"     {c_string(t.variant_of)},")
        out.append(f"     g_{t.name}, {'true' if p.network else 'false'}}},")
    out.append("};")
    out.append("const size_t gen_tools_count = sizeof gen_tools / sizeof gen_tools[0];")
    out.append(f"const char gen_annotations[] = {c_string(ANNOTATIONS)};")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


def write_docs(table: list[tuple[str, str, str]], path: str) -> None:
    tools = sum(1 for _, _, s in table if s.startswith("tool"))
    steps = sum(1 for _, _, s in table if s.startswith("the final step"))
    lines = ["# MEOS 1.3 functions as tools", "",
             "Generated by `gen/generate.py` from pymeos-cffi 1.3.0 `builder/meos.h` and "
             "`policy.toml`; do not edit. Each tool is `meos.<function>` through the node; an "
             "aggregate's transition function gives the tool named in its row, which takes "
             "every value at once.", "",
             f"{len(table)} functions: {tools} tools, {steps} final steps of aggregate tools, "
             f"{len(table) - tools - steps} excluded.", "",
             "| function | header | status |", "|---|---|---|"]
    for name, section, status in sorted(table, key=lambda r: (r[1], r[0])):
        lines.append(f"| `{name}` | {section} | {status.replace('|', '/')} |")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
