"""Generate the MEOS bundle's tools from the MEOS 1.3 prototypes.

Reads builder/meos.h of the pymeos-cffi 1.3.0 source distribution (with
cffi's C parser, which keeps parameter names) and policy.toml, describes each
tool in plain words from its name (describe.py, words.py), and writes:

  build/gen/meos_api.h    the prototypes, compilable as C
  build/gen/tools_gen.c   one tool body per exposed function and the table
  build/gen/manifest.json every exposed tool: name, schemas, category
  docs/functions.md       every function: exposed, or excluded and why

Usage: generate.py MEOS_H POLICY OUT_DIR DOCS_MD
"""

from __future__ import annotations

import json
import os
import re
import sys
import tomllib
from dataclasses import dataclass, field

from cffi import cparser
from pycparser import c_ast

import describe as plain

VALUE_FAMILIES = {
    "Temporal": "GF_TEMPORAL",
    "TInstant": "GF_TEMPORAL",
    "TSequence": "GF_TEMPORAL",
    "TSequenceSet": "GF_TEMPORAL",
    "Set": "GF_SET",
    "Span": "GF_SPAN",
    "SpanSet": "GF_SPANSET",
    "TBox": "GF_TBOX",
    "STBox": "GF_STBOX",
    "GSERIALIZED": "GF_GEOMETRY",
    "Npoint": "GF_NPOINT",
    "Nsegment": "GF_NSEGMENT",
}
# Parameters take the family's general type; subtypes only come out.
PARAM_FAMILIES = {"Temporal", "Set", "Span", "SpanSet", "TBox", "STBox", "GSERIALIZED", "Npoint",
                  "Nsegment"}

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

INT_LIMITS = {
    "int": ("INT32_MIN", "INT32_MAX", -(2**31), 2**31 - 1),
    "int32": ("INT32_MIN", "INT32_MAX", -(2**31), 2**31 - 1),
    "int32_t": ("INT32_MIN", "INT32_MAX", -(2**31), 2**31 - 1),
    "int16": ("INT16_MIN", "INT16_MAX", -(2**15), 2**15 - 1),
    "int8": ("INT8_MIN", "INT8_MAX", -128, 127),
    "uint8": ("0", "UINT8_MAX", 0, 255),
    "uint8_t": ("0", "UINT8_MAX", 0, 255),
    "uint16": ("0", "UINT16_MAX", 0, 65535),
    "uint16_t": ("0", "UINT16_MAX", 0, 65535),
    "uint32": ("0", "UINT32_MAX", 0, 2**32 - 1),
    "uint32_t": ("0", "UINT32_MAX", 0, 2**32 - 1),
    "int64": ("INT64_MIN", "INT64_MAX", -(2**63), 2**63 - 1),
    "int64_t": ("INT64_MIN", "INT64_MAX", -(2**63), 2**63 - 1),
    "uint64": ("0", "INT64_MAX", 0, 2**63 - 1),
    "uint64_t": ("0", "INT64_MAX", 0, 2**63 - 1),
}
UNSIGNED_64 = {"uint64", "uint64_t", "uint32", "uint32_t"}
ENUMS = ("interpType", "tempSubtype", "meosOper", "meosType")

# MEOS 1.3 does not check every argument's type: a tgeometry given to a
# tnumber function crashes it. The words of a function's name say which
# types each value parameter takes, in order; the decoder refuses others.
TSPATIAL = ["T_TGEOMPOINT", "T_TGEOGPOINT", "T_TGEOMETRY", "T_TGEOGRAPHY"]
TYPE_WORDS = {
    "Temporal": {
        "tbool": ["T_TBOOL"], "tint": ["T_TINT"], "tfloat": ["T_TFLOAT"], "ttext": ["T_TTEXT"],
        "tnumber": ["T_TINT", "T_TFLOAT"], "tgeompoint": ["T_TGEOMPOINT"],
        "tgeogpoint": ["T_TGEOGPOINT"], "tpoint": ["T_TGEOMPOINT", "T_TGEOGPOINT"],
        "tgeometry": ["T_TGEOMETRY"], "tgeography": ["T_TGEOGRAPHY"], "tgeo": TSPATIAL,
        "tspatial": TSPATIAL, "tnpoint": ["T_TNPOINT"], "temporal": None,
    },
    "Set": {
        "intset": ["T_INTSET"], "bigintset": ["T_BIGINTSET"], "floatset": ["T_FLOATSET"],
        "textset": ["T_TEXTSET"], "dateset": ["T_DATESET"], "tstzset": ["T_TSTZSET"],
        "geoset": ["T_GEOMSET", "T_GEOGSET"], "spatialset": ["T_GEOMSET", "T_GEOGSET"],
        "numset": ["T_INTSET", "T_BIGINTSET", "T_FLOATSET"], "npointset": ["T_NPOINTSET"],
        "set": None,
    },
    "Span": {
        "intspan": ["T_INTSPAN"], "bigintspan": ["T_BIGINTSPAN"], "floatspan": ["T_FLOATSPAN"],
        "datespan": ["T_DATESPAN"], "tstzspan": ["T_TSTZSPAN"],
        "numspan": ["T_INTSPAN", "T_BIGINTSPAN", "T_FLOATSPAN"], "span": None,
    },
    "SpanSet": {
        "intspanset": ["T_INTSPAN"], "bigintspanset": ["T_BIGINTSPAN"],
        "floatspanset": ["T_FLOATSPAN"], "datespanset": ["T_DATESPAN"],
        "tstzspanset": ["T_TSTZSPAN"],
        "numspanset": ["T_INTSPAN", "T_BIGINTSPAN", "T_FLOATSPAN"], "spanset": None,
    },
}


# A base type named in a function's name beside a scalar of that C type says
# what its sets, spans and span sets hold: contains_span_float takes a float span.
BASE_WORDS = {
    "int": (("int", "int32"), "INT"), "bigint": (("int64",), "BIGINT"),
    "float": (("double",), "FLOAT"), "date": (("DateADT",), "DATE"),
    "timestamptz": (("TimestampTz",), "TSTZ"), "npoint": (("Npoint",), "NPOINT"),
}


def accepted_types(name: str, params: list) -> dict:
    """The meosType names each value parameter takes, from the function's name;
    a parameter the name says nothing definite about is absent (any type of its family)."""
    # A conversion's source comes before _to_; a constructor's after _from_.
    words = name.split("_to_")[0].split("_from_")[-1].split("_")
    out = base_types(words, params)
    for base, table in TYPE_WORDS.items():
        mine = [p.name for p in params if p.ct.depth == 1 and p.ct.base == base]
        said = [table[w] for w in words if w in table]
        if not mine or not said:
            continue
        if len(said) == 1:
            said = said * len(mine)
        if len(said) != len(mine):
            continue
        for pname, types in zip(mine, said):
            if types:
                out[pname] = types
    return out


def base_types(words: list[str], params: list) -> dict:
    """Sets, spans and span sets beside a base value the name names: of that base type."""
    bases = [w for w in words if w in BASE_WORDS]
    if len(bases) != 1:
        return {}
    ctypes, code = BASE_WORDS[bases[0]]
    if not any(p.ct.depth == (p.ct.base == "Npoint") and p.ct.base in ctypes for p in params):
        return {}
    suffix = {"Set": "SET", "Span": "SPAN", "SpanSet": "SPAN"}
    return {p.name: [f"T_{code}{suffix[p.ct.base]}"] for p in params
            if p.ct.depth == 1 and p.ct.base in suffix}


class Excluded(Exception):
    """The function cannot be a tool; the message says why."""


@dataclass
class CType:
    """A C type reduced to what the generator needs."""

    base: str
    depth: int
    const: bool

    def __str__(self) -> str:
        return ("const " if self.const else "") + self.base + " " + "*" * self.depth


def ctype(node: c_ast.Node) -> CType:
    depth = 0
    const = False
    while isinstance(node, c_ast.PtrDecl):
        depth += 1
        node = node.type
    if isinstance(node, c_ast.TypeDecl):
        const = "const" in node.quals
        t = node.type
        if isinstance(t, c_ast.IdentifierType):
            return CType(" ".join(t.names), depth, const)
        if isinstance(t, (c_ast.Struct, c_ast.Enum)):
            return CType(t.name or "?", depth, const)
    raise Excluded(f"a parameter of a type with no JSON form ({type(node).__name__})")


@dataclass
class Param:
    name: str
    ct: CType


@dataclass
class Tool:
    name: str
    section: str
    proto: str
    ret: CType
    params: list[Param]
    body: list[str] = field(default_factory=list)
    props: dict = field(default_factory=dict)
    result_schema: dict = field(default_factory=dict)
    category: str = ""
    description: str = ""
    # For the differential test: how each argument and the result travel.
    kinds: list = field(default_factory=list)
    result_kind: str = ""
    mode: str = "plain"
    accepted: dict = field(default_factory=dict)
    # A split's bin arrays: [param, answer key, kind, C element type].
    outs: list = field(default_factory=list)
    # The C function a tool calls (its name, but for aggregates), and an
    # aggregate's final function.
    function: str = ""
    final: str = ""
    # Offered only when the bundle is given a road network.
    network: bool = False
    # What it computes in a few words, and the tool that does the same with
    # its arguments the other way round ("" for none).
    title: str = ""
    variant_of: str = ""


def parse_header(path: str) -> tuple[list[tuple[str, str, c_ast.Decl]], dict[str, list[str]]]:
    src = open(path, encoding="utf-8").read()
    section: dict[str, str] = {}
    cur = "meos.h"
    for line in src.split("\n"):
        m = re.match(r"//-+ (\S+) -+", line)
        if m:
            cur = m.group(1)
        m = re.match(r"\s*extern\s[^(]*?\b(\w+)\s*\(", line)
        if m:
            section.setdefault(m.group(1), cur)
    ast, _, _ = cparser.Parser()._parse(src)
    funcs = []
    enums: dict[str, list[str]] = {}
    for e in ast.ext:
        if isinstance(e, c_ast.Decl) and isinstance(e.type, c_ast.FuncDecl):
            funcs.append((e.name, section.get(e.name, "?"), e))
        if isinstance(e, c_ast.Typedef) and isinstance(e.type.type, c_ast.Enum):
            enums[e.name] = [v.name for v in e.type.type.values.enumerators]
    return funcs, enums


def prototype(decl: c_ast.Decl) -> str:
    from pycparser import c_generator

    return c_generator.CGenerator().visit(decl).replace("\n", " ") + ";"


def is_geodetic(name: str) -> bool:
    """Whether a function's spatial arguments are geographies: the part of
    its name before _to_ (a conversion's source) says geog."""
    return "geog" in name.split("_to_")[0]


def family_of(name: str, base: str) -> str:
    fam = VALUE_FAMILIES[base]
    if fam == "GF_GEOMETRY" and is_geodetic(name):
        return "GF_GEOGRAPHY"
    return fam


def geodetic(name: str) -> str:
    return "true" if is_geodetic(name) else "false"


NULLABLE_STRING = {"type": ["string", "null"]}


def value_result(t: Tool, ct: CType, expr: str) -> tuple[str, dict]:
    """The C expression encoding one value of type ct, and its JSON Schema."""
    enc, schema, kind = encode(t, ct, expr)
    t.result_kind = kind
    return enc, schema


def encode(t: Tool, ct: CType, expr: str) -> tuple[str, dict, str]:
    b, d = ct.base, ct.depth
    if d == 1 and b in VALUE_FAMILIES:
        fam = family_of(t.name, b)
        return f"ge_value(c, {expr}, {fam})", NULLABLE_STRING, "value:" + fam
    if d == 1 and b == "text":
        return f"ge_text(c, {expr})", NULLABLE_STRING, "text"
    if d == 1 and b == "Interval":
        return f"ge_interval(c, mc_keep(c, {expr}))", NULLABLE_STRING, "interval"
    if d == 0 and b == "TimestampTz":
        return f"ge_timestamptz(c, {expr})", {"type": "string"}, "timestamptz"
    if d == 0 and b == "DateADT":
        return f"ge_date(c, {expr})", {"type": "string"}, "date"
    if d == 0 and b == "double":
        return f"ge_double({expr})", {"type": ["number", "string"]}, "double"
    if d == 0 and b in ("bool", "_Bool"):
        return f"ge_bool({expr})", {"type": "boolean"}, "bool"
    if d == 0 and b in UNSIGNED_64 and b.startswith("uint64"):
        return f"ge_uint({expr})", {"type": "string"}, "uint"
    if d == 0 and (b in INT_LIMITS or b in ENUMS):
        return f"ge_int({expr})", {"type": "integer"}, "int"
    raise Excluded(f"a result of type {ct} has no JSON form")


def build(t: Tool, static_names: set[str], enums: dict[str, list[str]],
          limits: dict[str, list[int]], bound: int | None) -> None:
    body = t.body
    name = t.name
    params = list(t.params)
    ret = t.ret
    if ret.base == "void" and ret.depth == 0:
        raise Excluded("returns nothing: it changes its arguments or global state")
    if len(params) == 1 and params[0].ct.base == "void" and params[0].ct.depth == 0:
        params = []
    out_param: Param | None = None
    count_param: Param | None = None
    hidden: list[str] = []
    bins: list[Param] = []
    if params and params[-1].name == "count" and params[-1].ct == CType("int", 1, False):
        count_param = params.pop()
        # The bins a split's pieces fall in, one array per dimension, beside its result.
        while params and params[-1].name.endswith("bins") and params[-1].ct.depth >= 2:
            bins.insert(0, params.pop())
    if params and params[-1].name in ("size_out", "size") and params[-1].ct.depth == 1 and \
            params[-1].ct.base == "size_t" and ret.base == "char":
        hidden.append(params.pop().name)
    if ret.base in ("bool", "_Bool") and ret.depth == 0 and params and \
            not params[-1].ct.const and params[-1].ct.depth >= 1 and count_param is None:
        out_param = params.pop()
    args: list[str] = []
    accepted = accepted_types(name, params)
    t.accepted = accepted
    for p in params:
        ct = p.ct
        pn = p.name
        var = "a_" + pn
        if ct.depth == 1 and ct.base in VALUE_FAMILIES:
            if ct.base not in PARAM_FAMILIES:
                raise Excluded(f"takes a {ct.base} (an internal subtype) as {pn}")
            if not ct.const:
                raise Excluded(f"takes {pn} as a non-const {ct.base} *: it may change or free it")
            fam = family_of(name, ct.base)
            types = accepted.get(pn)
            tlist = "NULL, 0"
            if types:
                body.append(f"    static const int t_{pn}[] = {{{', '.join(types)}}};")
                tlist = f"t_{pn}, {len(types)}"
            body.append(f"    const {ct.base} *{var} = ga_value(c, args, \"{pn}\", {fam}, "
                        f"{geodetic(name)}, {tlist}, &err);")
            body.append(f"    if (!{var}) return err;")
            t.props[pn] = {"type": "string", "description": FAMILY_TEXT[fam]}
        elif ct.depth == 1 and ct.base == "text":
            if not ct.const:
                raise Excluded(f"takes {pn} as a non-const text *: it may change or free it")
            body.append(f"    const text *{var} = ga_text(c, args, \"{pn}\", &err);")
            body.append(f"    if (!{var}) return err;")
            t.props[pn] = {"type": "string", "description": "Text."}
        elif ct.depth == 1 and ct.base == "char" and ct.const:
            body.append(f"    const char *{var} = ga_cstring(args, \"{pn}\", &err);")
            body.append(f"    if (!{var}) return err;")
            t.props[pn] = {"type": "string"}
        elif ct.depth == 1 and ct.base == "Interval" and ct.const:
            body.append(f"    const Interval *{var} = ga_interval(c, args, \"{pn}\", &err);")
            body.append(f"    if (!{var}) return err;")
            t.props[pn] = {"type": "string", "description": "An interval as MEOS prints "
                           "it, e.g. 1 day 02:00:00, 3 mons, 00:10:00 or 90 seconds."}
        elif ct.depth == 0 and ct.base == "TimestampTz":
            body.append(f"    TimestampTz {var};")
            body.append(f"    if (ga_timestamptz(args, \"{pn}\", &{var}, &err)) return err;")
            t.props[pn] = {"type": "string", "description": "A timestamp, ISO 8601 or as "
                           "MEOS prints it, e.g. 2025-01-01 08:00:00+00 (UTC without an "
                           "offset)."}
        elif ct.depth == 0 and ct.base == "DateADT":
            body.append(f"    DateADT {var};")
            body.append(f"    if (ga_date(args, \"{pn}\", &{var}, &err)) return err;")
            t.props[pn] = {"type": "string", "description": "A date, YYYY-MM-DD."}
        elif ct.depth == 0 and ct.base == "double":
            body.append(f"    double {var};")
            body.append(f"    if (ga_double(args, \"{pn}\", &{var}, &err)) return err;")
            t.props[pn] = {"type": "number"}
        elif ct.depth == 0 and ct.base in ("bool", "_Bool"):
            body.append(f"    bool {var};")
            body.append(f"    if (ga_bool(args, \"{pn}\", &{var}, &err)) return err;")
            t.props[pn] = {"type": "boolean"}
        elif ct.depth == 0 and ct.base in INT_LIMITS:
            lo, hi, jlo, jhi = INT_LIMITS[ct.base]
            if pn in limits:
                jlo, jhi = limits[pn]
                lo, hi = str(jlo), str(jhi)
            body.append(f"    int64_t {var};")
            body.append(f"    if (ga_int(args, \"{pn}\", {lo}, {hi}, &{var}, &err)) return err;")
            t.props[pn] = {"type": "integer", "minimum": jlo, "maximum": jhi}
        elif ct.depth == 0 and ct.base in ENUMS:
            values = enums.get(ct.base, [])
            values = [v for v in values if not v.startswith("NO_") and v != "T_UNKNOWN"]
            body.append(f"    static const char *const n_{pn}[] = {{"
                        + ", ".join(f'"{v}"' for v in values) + "};")
            body.append(f"    static const int v_{pn}[] = {{" + ", ".join(values) + "};")
            body.append(f"    int {var};")
            body.append(f"    if (ga_enum(args, \"{pn}\", n_{pn}, v_{pn}, {len(values)}, "
                        f"&{var}, &err)) return err;")
            t.props[pn] = {"type": "string", "enum": values}
        else:
            raise Excluded(f"parameter {pn} of type {ct} has no JSON form")
        args.append(var if not (ct.depth == 0 and ct.base in ENUMS) else f"({ct.base}){var}")
    q = '"' + name + '"'
    t.kinds = [[p.name, kind_of(name, p.ct)] for p in params]
    if bound is not None:
        body += bound_check(name, params, bound)
    if hidden:
        t.mode = "hidden_size"
        body.append("    size_t hidden_size;")
        args.append("&hidden_size")
    if count_param is not None:
        if ret.depth == 0:
            raise Excluded("an int *count without an array result")
        elem = CType(ret.base, ret.depth - 1, False)
        if bins:
            split_body(t, elem, bins, args)
            return
        body.append("    int count = 0;")
        args.append("&count")
        body.append(f"    {ret.base} {'*' * ret.depth}r = {name}({', '.join(args)});")
        body.append(f"    json_t *fail = gr_check({q});")
        body.append("    if (fail) { free(r); return fail; }")
        body.append(f"    if (!r) return gr_none({q});")
        body.append("    mc_keep(c, r);")
        if elem.depth == 1 and elem.base in VALUE_FAMILIES:
            enc, schema = value_result(t, elem, "r[i]")
        elif elem.depth == 0 and elem.base in VALUE_FAMILIES:
            fam = family_of(name, elem.base)
            # A contiguous array: its elements are not separately freed.
            enc, schema = f"ge_value_borrowed(&r[i], {fam})", NULLABLE_STRING
            t.result_kind = "value:" + fam
        else:
            enc, schema = value_result(t, elem, "r[i]")
        body.append("    json_t *list = json_array();")
        body.append("    for (int i = 0; i < count; i++)")
        body.append(f"        json_array_append_new(list, {enc});")
        body.append(f"    return gr_result({q}, list);")
        t.result_schema = {"type": ["array", "null"], "items": schema}
        t.mode = "array"
        return
    if out_param is not None:
        oct_ = CType(out_param.ct.base, out_param.ct.depth - 1, False)
        enc, schema = value_result(t, oct_, "out")
        decl = f"{oct_.base} {'*' * oct_.depth}out"
        body.append(f"    {decl}{' = NULL' if oct_.depth else ''};")
        if oct_.depth == 0 and oct_.base not in ("bool", "_Bool"):
            body[-1] = f"    {decl} = 0;"
        args.append("&out")
        t.mode = "out:" + str(oct_)
        body.append(f"    bool found = {name}({', '.join(args)});")
        body.append(f"    json_t *fail = gr_check({q});")
        body.append("    if (fail || !found) {")
        if oct_.depth:
            body.append("        if (found) free(out);")
        body.append(f"        return fail ? fail : gr_none({q});")
        body.append("    }")
        body.append(f"    return gr_result({q}, {enc});")
        t.result_schema = {"type": schema["type"] if isinstance(schema["type"], list)
                           else [schema["type"], "null"]}
        if isinstance(schema.get("type"), list) and "null" not in schema["type"]:
            t.result_schema = {"type": schema["type"] + ["null"]}
        return
    call = f"{name}({', '.join(args)})"
    if ret.depth == 1 and ret.base == "char":
        # Static names (const char *, or listed in the policy) are not freed.
        static = ret.const or name in static_names
        t.result_kind = "static_cstring" if static else "cstring"
        body.append(f"    char *r = {'(char *)' if static else ''}{call};")
        body.append(f"    json_t *fail = gr_check({q});")
        body.append("    if (fail) return fail;" if static else
                    "    if (fail) { free(r); return fail; }")
        body.append(f"    return r ? gr_result({q}, ge_cstring(c, r, {str(not static).lower()})) "
                    f": gr_none({q});")
        t.result_schema = NULLABLE_STRING
        return
    if ret.depth == 1 and ret.const:
        raise Excluded(f"returns a const {ret.base} *: a pointer it keeps, not a copy")
    if ret.depth <= 1:
        enc, schema = value_result(t, ret, "r")
        pointer = ret.depth == 1
        body.append(f"    {ret.base} {'*' * ret.depth}r = {call};")
        body.append(f"    json_t *fail = gr_check({q});")
        body.append("    if (fail) { free(r); return fail; }" if pointer else "    if (fail) return fail;")
        body.append(f"    return r ? gr_result({q}, {enc}) : gr_none({q});" if pointer
                    else f"    return gr_result({q}, {enc});")
        t.result_schema = schema
        return
    raise Excluded(f"a result of type {ret} has no JSON form")


def bound_check(name: str, params: list[Param], bound: int) -> list[str]:
    """C lines counting the pieces a bin, tile, box, split or sample call asks
    for, from the roles of its parameters, and refusing the call past bound."""
    by_name = {p.name: p for p in params}
    value = next((p for p in params if p.ct.depth == 1 and p.ct.base in PARAM_FAMILIES), None)
    v = f"a_{value.name}, {family_of(name, value.ct.base)}" if value else "NULL, GF_SPAN"
    numeric = ("int", "int32", "int64", "double")
    origin = next((p.name for p in params if p.name in ("vorigin", "xorigin", "origin")
                   and p.ct.depth == 0 and p.ct.base in numeric), None)
    torigin = next((p for p in params if p.name in ("torigin", "origin")
                    and p.ct.base in ("TimestampTz", "DateADT")), None)
    terms = []
    if "ysize" in by_name:
        terms.append(f"gb_space({v}, a_xsize, a_ysize, a_zsize)")
    else:
        size = next((p for p in ("vsize", "xsize", "size") if p in by_name), None)
        if size and origin:
            terms.append(f"gb_values({v}, (double)a_{size}, (double)a_{origin})")
    if "duration" in by_name and torigin:
        dates = "true" if torigin.ct.base == "DateADT" else "false"
        terms.append(f"gb_times({v}, a_duration, (double)a_{torigin.name}, {dates})")
    counts = [p.name for p in params if p.name.endswith("_count") and p.ct.base in numeric]
    terms += [f"gb_count(a_{c}, {v})" for c in counts]
    if not terms:
        raise ValueError(f"policy.toml [bounds] names {name}, whose parameters have no size, "
                         "duration or count to bound it by")
    return [f"    double pieces = {' * '.join(terms)};",
            f"    if (gb_check(\"{name}\", pieces, {bound}, &err)) return err;"]


def split_body(t: Tool, elem: CType, bins: list[Param], args: list[str]) -> None:
    """A split: an array of pieces and, for each dimension, the array of the
    bins they fall in. Answered as [{"<dimension>_bin": ..., "value": piece}]."""
    name, body = t.name, t.body
    q = '"' + name + '"'
    outs = []
    for b in bins:
        bt = CType(b.ct.base, b.ct.depth - 1, False)
        body.append(f"    {bt.base} {'*' * bt.depth}o_{b.name} = NULL;")
        args.append(f"&o_{b.name}")
        key = b.name[:-1]
        enc, schema, kind = encode(t, CType(bt.base, bt.depth - 1, False), f"o_{b.name}[i]")
        outs.append((b.name, key, enc, schema, kind, str(CType(bt.base, bt.depth - 1, False))))
    body.append("    int count = 0;")
    args.append("&count")
    body.append(f"    {elem.base} {'*' * (elem.depth + 1)}r = {name}({', '.join(args)});")
    for o in outs:
        body.append(f"    mc_keep(c, o_{o[0]});")
    body.append(f"    json_t *fail = gr_check({q});")
    body.append("    if (fail) { free(r); return fail; }")
    body.append(f"    if (!r) return gr_none({q});")
    body.append("    mc_keep(c, r);")
    enc, schema, kind = encode(t, elem, "r[i]")
    body.append("    json_t *list = json_array();")
    body.append("    for (int i = 0; i < count; i++) {")
    body.append("        json_t *piece = json_object();")
    for _, key, oenc, _, _, _ in outs:
        body.append(f"        json_object_set_new(piece, \"{key}\", {oenc});")
    body.append(f"        json_object_set_new(piece, \"value\", {enc});")
    body.append("        json_array_append_new(list, piece);")
    body.append("    }")
    body.append(f"    return gr_result({q}, list);")
    props = {key: oschema for _, key, _, oschema, _, _ in outs}
    props["value"] = schema
    t.result_schema = {"type": ["array", "null"], "items": {
        "type": "object", "properties": props, "required": list(props)}}
    t.result_kind = kind
    t.mode = "split"
    t.outs = [[o[0], o[1], o[4], o[5]] for o in outs]


# How an aggregate's scalar element is read from the JSON array, by its C
# type: the type of the array holding them, the decoder's call (0 when read)
# and the element's kind in the manifest.
AGG_ELEMENTS = {
    "int": ("int64_t", "ga_int(item, label, INT32_MIN, INT32_MAX, &v[i], &err)", "int"),
    "int32": ("int64_t", "ga_int(item, label, INT32_MIN, INT32_MAX, &v[i], &err)", "int"),
    "int64": ("int64_t", "ga_int(item, label, INT64_MIN, INT64_MAX, &v[i], &err)", "int"),
    "double": ("double", "ga_double(item, label, &v[i], &err)", "double"),
    "DateADT": ("DateADT", "ga_date(item, label, &v[i], &err)", "date"),
    "TimestampTz": ("TimestampTz", "ga_timestamptz(item, label, &v[i], &err)", "timestamptz"),
}
AGG_RESULTS = {"SkipList": "GF_TEMPORAL", "Set": "GF_SET", "SpanSet": "GF_SPANSET",
               "Span": "GF_SPAN", "TBox": "GF_TBOX", "STBox": "GF_STBOX"}


def build_aggregate(t: Tool, final: str | None, max_values: int, max_instants: int) -> None:
    """An aggregate tool: the transition function t.function folded over the
    elements of the array argument values, then its final function."""
    fn, body = t.function, t.body
    params = t.params
    state, elem = params[0], params[1]
    window = params[2:]
    if state.ct.base not in AGG_RESULTS or len(window) > 1 or \
            (window and window[0].ct.base != "Interval"):
        raise Excluded("a transition function of a shape the aggregate tools do not take")
    q = '"' + t.name + '"'
    skiplist = "true" if state.ct.base == "SkipList" else "false"
    ect = elem.ct
    body.append("    size_t n;")
    body.append(f"    json_t *values = ga_array(args, \"values\", {max_values}, &n, &err);")
    body.append("    if (!values) return err;")
    if window:
        body.append("    const Interval *a_interv = ga_interval(c, args, \"interv\", &err);")
        body.append("    if (!a_interv || ga_window(a_interv, \"interv\", &err)) return err;")
    family = None
    if ect.depth == 1 and ect.base in PARAM_FAMILIES:
        family = family_of(fn, ect.base)
        types = accepted_types(fn, [Param(elem.name, CType(ect.base, 1, True))]).get(elem.name)
        tlist = "NULL, 0"
        if types:
            body.append(f"    static const int t_values[] = {{{', '.join(types)}}};")
            tlist = f"t_values, {len(types)}"
            t.accepted = {"values": types}
        array_type = f"const {ect.base} *"
        decode = f"(v[i] = ga_value(c, item, label, {family}, {geodetic(fn)}, {tlist}, &err))"
        failed = "!v[i]"
        kind = "value:" + family
        item_schema = {"type": "string", "description": FAMILY_TEXT[family]}
        arg = f"({'const ' if ect.const else ''}{ect.base} *)v[i]"
    elif ect.depth == 1 and ect.base == "text":
        array_type, decode, failed = "const text *", "(v[i] = ga_text(c, item, label, &err))", "!v[i]"
        kind, item_schema, arg = "text", {"type": "string"}, "v[i]"
    elif ect.depth == 0 and ect.base in AGG_ELEMENTS:
        array_type, decode, kind = AGG_ELEMENTS[ect.base]
        failed, arg = "rc", "v[i]"
        item_schema = {"int": {"type": "integer"}, "double": {"type": "number"},
                       "date": {"type": "string", "description": "A date, YYYY-MM-DD."},
                       "timestamptz": {"type": "string", "description": "A timestamp, ISO 8601."},
                       }[kind]
    else:
        raise Excluded(f"an aggregate over {ect}, which has no JSON form")
    body.append(f"    {array_type}*v = mc_keep(c, calloc(n + 1, sizeof *v));")
    body.append("    if (!v) return mc_fail(\"out of memory\");")
    # A cancelled call stops between elements: the fold can take minutes.
    body.append("    for (size_t i = 0; i < n; i++) {")
    body.append("        if (mc_cancelled(c)) return mc_gave_up();")
    body.append("        char label[48];")
    body.append("        json_t *item = ga_item(values, i, \"values\", label, sizeof label);")
    body.append(f"        int rc = {decode} ? 0 : -1;" if failed != "rc" else f"        int rc = {decode};")
    body.append("        json_decref(item);")
    body.append("        if (rc) return err;")
    body.append("    }")
    if family:
        body.append(f"    if (ga_instants((const void *const *)v, n, {family}, {max_instants}, "
                    "\"values\", &err)) return err;")
        body.append(f"    if (ga_agg_check((const void *const *)v, n, {family}, {skiplist}, "
                    "\"values\", &err)) return err;")
    sb = state.ct.base
    if sb == "SkipList":
        body.append("    if (ga_skiplist_ready(&err)) return err;")
    if sb == "SpanSet" and family:
        # MEOS 1.3 rebuilds a span set state past 64 spans requiring order.
        body.append(f"    ga_sort((const void **)v, n, {family});")
    body.append(f"    {sb} *state = NULL;")
    body.append("    for (size_t i = 0; i < n; i++) {")
    body.append(f"        if (mc_cancelled(c)) return ga_gave_up(state, {skiplist});")
    body.append(f"        {sb} *next = {fn}(state, {arg}{', a_interv' if window else ''});")
    body.append(f"        if (mc_failed()) return ga_agg_fail(\"{fn}\", i, state, {skiplist});")
    body.append("        state = next;")
    body.append("    }")
    result_family = AGG_RESULTS[sb]
    if final:
        rtype = {"GF_TEMPORAL": "Temporal", "GF_SET": "Set", "GF_SPANSET": "SpanSet"}[result_family]
        taken = "ga_skiplist(state)" if sb == "SkipList" else "state"
        body.append(f"    {rtype} *r = state ? {final}({taken}) : NULL;")
    else:
        body.append(f"    {sb} *r = state;")
    body.append(f"    json_t *fail = gr_check({q});")
    body.append("    if (fail) { free(r); return fail; }")
    body.append(f"    return r ? gr_result({q}, ge_value(c, r, {result_family})) : gr_none({q});")
    t.props = {"values": {"type": "array", "items": item_schema, "maxItems": max_values,
                          "description": "The values to aggregate, at most "
                          f"{max_values:,} holding at most {max_instants:,} instants (a set's "
                          "values and a span set's spans count as instants; any other value as "
                          "one) and 64 MiB of text in one call."}}
    if window:
        t.props["interv"] = {"type": "string", "description": "The window: each value also "
                             "counts for this long after its time, as MEOS prints intervals, "
                             "e.g. 00:10:00 or 1 day."}
    t.result_schema = NULLABLE_STRING
    t.result_kind = "value:" + result_family
    t.kinds = [["values", "array:" + kind]] + [["interv", "interval"] for _ in window]
    t.mode = "aggregate"
    t.final = final or ""


def kind_of(name: str, ct: CType) -> str:
    if ct.depth == 1 and ct.base in VALUE_FAMILIES:
        return "value:" + family_of(name, ct.base)
    if ct.depth == 1:
        return {"text": "text", "char": "cstring", "Interval": "interval"}[ct.base]
    if ct.base in ENUMS:
        return "enum:" + ct.base
    if ct.base in INT_LIMITS:
        return "int"
    return {"_Bool": "bool"}.get(ct.base, ct.base.lower().replace("timestamptz", "timestamptz")
                                  .replace("dateadt", "date"))


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


def describe_aggregate(t: Tool) -> str:
    words = t.function[: -len("_transfn")].split("_")
    op, of = words[-1], " ".join(words[:-1])
    what = AGG_OPERATIONS[op].format(result=RESULT_WORDS[t.params[0].ct.base])
    steps = f"{t.function} then {t.final}" if t.final else t.function
    return (f"{plain.describe_aggregate(t.name)} "
            f"Aggregate of {of} values, all given at once in the array values: {what}. "
            f"Generated from the MEOS 1.3 aggregate functions {steps} (aggregates); the "
            "answer is structuredContent.result, null for no values.")


def category(name: str, cats: dict[str, str]) -> str:
    for cat, pattern in cats.items():
        if re.search(pattern, name):
            return cat
    return "other"


def describe(t: Tool) -> str:
    """The tool's description: what it is in plain words, then where it comes from."""
    return (f"{plain.describe(t.name, t.category)} Generated from the MEOS 1.3 C function "
            f"{t.name} ({t.category}); the answer is structuredContent.result, null if MEOS "
            "answers nothing.")


def c_string(s: str) -> str:
    return json.dumps(s, ensure_ascii=True)


ANNOTATIONS = json.dumps({"readOnlyHint": True, "destructiveHint": False,
                          "idempotentHint": True, "openWorldHint": False})


@dataclass
class Rules:
    """policy.toml, compiled, with the enums of the header."""

    sections: dict[str, str]
    excludes: list[tuple[re.Pattern, str]]
    static_names: set[str]
    limits: dict[str, list[int]]
    bounds: re.Pattern
    max_pieces: int
    aggregates: re.Pattern
    finals: dict[str, str]
    max_values: int
    max_instants: int
    categories: dict[str, str]
    network: str
    enums: dict[str, list[str]]

    @classmethod
    def load(cls, path: str, enums: dict[str, list[str]]) -> "Rules":
        policy = tomllib.load(open(path, "rb"))
        return cls(policy["sections"],
                   [(re.compile(r["match"]), r["reason"]) for r in policy["exclude"]],
                   set(policy["static"]["names"]), policy.get("limits", {}),
                   re.compile(policy["bounds"]["match"]), policy["bounds"]["max"],
                   re.compile(policy["aggregates"]["match"]), policy["aggregates"]["final"],
                   policy["aggregates"]["max_values"], policy["aggregates"]["max_instants"],
                   policy["categories"],
                   policy["network"]["section"], enums)

    def final_of(self, fn: str, state: str) -> str | None:
        return self.finals.get(fn, self.finals.get(state))


def signature(decl: c_ast.Decl) -> tuple[CType, list[Param]]:
    fd = decl.type
    ret = ctype(fd.type)
    params = []
    for p in (fd.args.params if fd.args else []):
        if isinstance(p, c_ast.EllipsisParam):
            raise Excluded("variadic")
        params.append(Param(p.name or "", ctype(p.type)))
    return ret, params


def decide(name: str, section: str, decl: c_ast.Decl, rules: Rules) -> Tool:
    """The tool a function becomes; Excluded says why it becomes none."""
    reason = rules.sections.get(section)
    if reason is None:
        reason = next((r for rx, r in rules.excludes if rx.search(name)), None)
    if reason is not None:
        raise Excluded(reason)
    ret, params = signature(decl)
    if rules.aggregates.search(name):
        t = Tool(name[: -len("_transfn")] + "_agg", section, prototype(decl), ret, params)
        t.function = name
        t.network = section == rules.network
        t.category = "aggregates"
        build_aggregate(t, rules.final_of(name, params[0].ct.base if params else ""),
                        rules.max_values, rules.max_instants)
        t.description = describe_aggregate(t)
        return t
    t = Tool(name, section, prototype(decl), ret, params)
    t.function = name
    t.network = section == rules.network
    t.category = category(name, rules.categories)
    bounded = rules.bounds.search(name) is not None
    build(t, rules.static_names, rules.enums, rules.limits,
          rules.max_pieces if bounded else None)
    t.description = describe(t)
    return t


def main() -> int:
    meos_h, policy_path, out_dir, docs_md = sys.argv[1:5]
    funcs, enums = parse_header(meos_h)
    rules = Rules.load(policy_path, enums)
    os.makedirs(out_dir, exist_ok=True)

    with open(meos_h, encoding="utf-8") as f:
        header = f.read()
    # The header ends with cffi's declaration of pymeos's Python callback.
    header = "\n".join(line for line in header.split("\n") if 'extern "Python"' not in line)
    with open(os.path.join(out_dir, "meos_api.h"), "w", encoding="utf-8") as f:
        f.write("/* Generated by gen/generate.py from pymeos-cffi 1.3.0 builder/meos.h. */\n"
                "#ifndef MEOS_API_H\n#define MEOS_API_H\n#include <stdbool.h>\n"
                "#include <stddef.h>\n#include <stdint.h>\n" + header + "\n#endif\n")

    tools: list[Tool] = []
    table: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    for name, section, decl in funcs:
        if name in seen:
            continue
        seen.add(name)
        try:
            t = decide(name, section, decl, rules)
        except Excluded as e:
            table.append((name, section, "excluded: " + str(e)))
            continue
        tools.append(t)
        where = f"`meos.{t.name}` " if t.name != name else ""
        network = "; with a road network" if t.network else ""
        table.append((name, section, f"tool {where}({t.category}{network})"))
    # A final function is a step of the aggregate tools, not a tool of its own.
    finals: dict[str, list[str]] = {}
    for t in tools:
        if t.final:
            finals.setdefault(t.final, []).append(f"`meos.{t.name}`")
    table = [(n, sec, f"the final step of {', '.join(finals[n])}" if n in finals else st)
             for n, sec, st in table]

    names = {t.name for t in tools}
    for t in tools:
        t.title = plain.title(t.name)
        t.variant_of = plain.variant_of(t.name, names)
    write_c(tools, os.path.join(out_dir, "tools_gen.c"))
    manifest = [{"name": t.name, "category": t.category, "description": t.description,
                 "inputSchema": input_schema(t), "outputSchema": output_schema(t),
                 "prototype": t.proto, "function": t.function, "final": t.final,
                 "params": t.kinds, "accepted": t.accepted, "result": t.result_kind,
                 "mode": t.mode, "outs": t.outs, "network": t.network, "title": t.title,
                 "variant_of": t.variant_of} for t in tools]
    with open(os.path.join(out_dir, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1)
    write_docs(table, docs_md)
    print(f"generate.py: {len(funcs)} declarations, {len(seen)} functions, "
          f"{len(tools)} tools", file=sys.stderr)
    return 0


def input_schema(t: Tool) -> dict:
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
            "properties": t.props, "required": list(t.props), "additionalProperties": False}


def output_schema(t: Tool) -> dict:
    return {"type": "object", "properties": {"result": t.result_schema},
            "required": ["result"]}


def write_c(tools: list[Tool], path: str) -> None:
    out = ["/* Generated by gen/generate.py from the MEOS 1.3 prototypes and policy.toml;",
           " * do not edit. One body per tool; src/gen_args.c reads and writes values. */",
           '#include "gen.h"', "", "#include <stdlib.h>", ""]
    for t in tools:
        out.append(f"/* {t.proto} */")
        out.append(f"static json_t *g_{t.name}(call_t *c, json_t *args)")
        out.append("{")
        out.append("    json_t *err = NULL;")
        out.append("    (void)c; (void)args; (void)err;")
        out += t.body
        out.append("}")
        out.append("")
    out.append("const gen_tool_t gen_tools[] = {")
    for t in tools:
        out.append(f"    {{{c_string(t.name)}, {c_string(t.function)}, {c_string(t.category)},")
        out.append(f"     {c_string(t.title)},")
        out.append(f"     {c_string(t.description)},")
        out.append(f"     {c_string(json.dumps(input_schema(t), separators=(',', ':')))},")
        out.append(f"     {c_string(json.dumps(output_schema(t), separators=(',', ':')))},")
        out.append(f"     {c_string(t.variant_of)},")
        out.append(f"     g_{t.name}, {'true' if t.network else 'false'}}},")
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
