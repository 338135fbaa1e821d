"""What each MEOS function becomes as a tool, decided apart from any output.

plan() is a pure function of a function's declaration and the policy: it
says which parameters are read from JSON and how (their conversions), what
the C function is called with, and how its answer is written (the result
mode), or raises Excluded saying why the function cannot be a tool. Nothing
here writes C or text: emit.py turns a plan into a tool body, generate.py
into the manifest. How each C type travels is one table, C_TYPES.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field

from cffi import cparser
from pycparser import c_ast, c_generator

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
ENUMS = ("interpType", "tempSubtype", "meosOper", "meosType")


@dataclass(frozen=True)
class Travel:
    """How values of one C type travel: the kind a parameter of it is read as
    (None: it cannot be one), the kind a result of it is written as (None: it
    cannot be one), and whether a parameter must be const (a pointer the
    function could otherwise change or free)."""

    reads: str | None
    writes: str | None
    const: bool = False
    # The reason a non-const parameter is refused, where it has one of its own.
    non_const: str = ""


# The table of C types. By value (depth 0): a scalar read from and written as
# JSON. By pointer (depth 1): values read from and written as strings. The
# kinds are the conversions of emit.py (READERS, WRITERS) and the manifest's.
BY_VALUE: dict[str, Travel] = {
    "TimestampTz": Travel("timestamptz", "timestamptz"),
    "DateADT": Travel("date", "date"),
    "double": Travel("double", "double"),
    "bool": Travel("bool", "bool"),
    "_Bool": Travel("bool", "bool"),
    **{t: Travel("int", "uint" if t.startswith("uint64") else "int") for t in INT_LIMITS},
    **{e: Travel("enum", "int") for e in ENUMS},
}
BY_POINTER: dict[str, Travel] = {
    **{b: Travel("value" if b in PARAM_FAMILIES else None, "value", const=True,
                 non_const="takes {p} as a non-const {b} *: it may change or free it")
       for b in VALUE_FAMILIES},
    "text": Travel("text", "text", const=True,
                   non_const="takes {p} as a non-const text *: it may change or free it"),
    "char": Travel("cstring", None, const=True),
    "Interval": Travel("interval", "interval", const=True),
}
C_TYPES = {0: BY_VALUE, 1: BY_POINTER}

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

# An aggregate's state, and the family of its answer.
AGG_RESULTS = {"SkipList": "GF_TEMPORAL", "Set": "GF_SET", "SpanSet": "GF_SPANSET",
               "Span": "GF_SPAN", "TBox": "GF_TBOX", "STBox": "GF_STBOX"}
# The scalar elements an aggregate reads from its array, by C type.
AGG_SCALARS = {"int", "int32", "int64", "double", "DateADT", "TimestampTz"}


class Excluded(Exception):
    """The function cannot be a tool; the message says why."""


@dataclass(frozen=True)
class CType:
    """A C type reduced to what the generator needs."""

    base: str
    depth: int
    const: bool

    def __str__(self) -> str:
        return ("const " if self.const else "") + self.base + " " + "*" * self.depth

    def deref(self) -> "CType":
        """The type one pointer down, without its const."""
        return CType(self.base, self.depth - 1, False)


def ctype(node: c_ast.Node) -> CType:
    """The CType of a declarator; Excluded for a type with no JSON form."""
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


@dataclass(frozen=True)
class Param:
    """A parameter as declared."""

    name: str
    ct: CType


@dataclass
class Arg:
    """A parameter the tool reads from its JSON arguments, and how."""

    name: str
    ct: CType
    # The conversion (emit.READERS): value:<family>, text, cstring, interval,
    # timestamptz, date, double, bool, int, enum:<C enum>.
    kind: str
    # value: the meosType codes its function takes (empty: any of its
    # family), and whether its points and geometries are geographies.
    types: list[str] = field(default_factory=list)
    geodetic: bool = False
    # int: the C bounds the decoder checks and the schema's.
    range: tuple[str, str, int, int] | None = None
    # enum: the C constants it may name.
    values: list[str] = field(default_factory=list)


@dataclass
class Bin:
    """One array of a split's bins: the parameter that receives it, the key
    of each piece's answer and how one bin is written."""

    param: str
    key: str
    ct: CType
    kind: str


@dataclass
class Bound:
    """How many pieces a bin, tile, box, split or sample call asks for, by
    the roles of its parameters; the call is refused past max."""

    max: int
    value: str | None
    family: str
    space: bool = False
    values: tuple[str, str] | None = None
    times: tuple[str, bool] | None = None
    counts: list[str] = field(default_factory=list)


@dataclass
class Result:
    """How the C function's answer is taken and written.

    mode: value (the return value), cstring (a returned C string), out (a
    bool saying whether the last parameter was written), array (an array and
    an int *count), split (an array of pieces and arrays of their bins),
    aggregate (a transition function folded over an array, then its final
    function)."""

    mode: str
    # value, out: the value's type; array, split: one element's.
    ct: CType
    # The conversion of one value (emit.WRITERS), or cstring/static_cstring.
    kind: str
    # array: a contiguous array of values, whose elements are not freed alone.
    borrowed: bool = False
    bins: list[Bin] = field(default_factory=list)


@dataclass
class Aggregate:
    """An aggregate's fold: its state's C type, how each element of the
    array argument values is read, and whether it takes a window interval."""

    state: str
    element: Arg
    window: bool
    final: str
    max_values: int
    max_instants: int


@dataclass
class Plan:
    """What one function becomes: everything emit.py and the manifest need,
    decided from its declaration and the policy alone."""

    tool: str
    function: str
    section: str
    prototype: str
    category: str
    network: bool
    args: list[Arg]
    result: Result
    # The meosType codes each value parameter takes, as the manifest lists them.
    accepted: dict[str, list[str]] = field(default_factory=dict)
    # char * results with a size_t *size_out parameter the tool fills and drops.
    hidden_size: bool = False
    bound: Bound | None = None
    aggregate: Aggregate | None = None

    @property
    def mode(self) -> str:
        """The mode the manifest names (the differential test reads it)."""
        r = self.result
        if r.mode == "out":
            return "out:" + str(r.ct)
        if r.mode in ("array", "split", "aggregate"):
            return r.mode
        return "hidden_size" if self.hidden_size else "plain"


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
        """The rules of the policy file at path."""
        with open(path, "rb") as f:
            policy = tomllib.load(f)
        return cls(policy["sections"],
                   [(re.compile(r["match"]), r["reason"]) for r in policy["exclude"]],
                   set(policy["static"]["names"]), policy.get("limits", {}),
                   re.compile(policy["bounds"]["match"]), policy["bounds"]["max"],
                   re.compile(policy["aggregates"]["match"]), policy["aggregates"]["final"],
                   policy["aggregates"]["max_values"], policy["aggregates"]["max_instants"],
                   policy["categories"],
                   policy["network"]["section"], enums)

    def final_of(self, fn: str, state: str) -> str | None:
        """An aggregate's final function, by its transition function or its state."""
        return self.finals.get(fn, self.finals.get(state))


Declaration = tuple[str, str, c_ast.Decl]


def parse_header(path: str) -> tuple[list[Declaration], dict[str, list[str]]]:
    """The functions of a header (name, the source header its marker names,
    declaration) in order, and its enums' constants."""
    with open(path, encoding="utf-8") as f:
        src = f.read()
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
    """The declaration as one line of C."""
    return c_generator.CGenerator().visit(decl).replace("\n", " ") + ";"


def signature(decl: c_ast.Decl) -> tuple[CType, list[Param]]:
    """The return type and parameters of a function declaration."""
    fd = decl.type
    ret = ctype(fd.type)
    params = []
    for p in (fd.args.params if fd.args else []):
        if isinstance(p, c_ast.EllipsisParam):
            raise Excluded("variadic")
        params.append(Param(p.name or "", ctype(p.type)))
    return ret, params


def is_geodetic(name: str) -> bool:
    """Whether a function's spatial arguments are geographies: the part of
    its name before _to_ (a conversion's source) says geog."""
    return "geog" in name.split("_to_")[0]


def family_of(name: str, base: str) -> str:
    """The serialized family of a value of C type base in function name."""
    fam = VALUE_FAMILIES[base]
    if fam == "GF_GEOMETRY" and is_geodetic(name):
        return "GF_GEOGRAPHY"
    return fam


def accepted_types(name: str, params: list[Param]) -> dict[str, list[str]]:
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


def base_types(words: list[str], params: list[Param]) -> dict[str, list[str]]:
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


def category(name: str, cats: dict[str, str]) -> str:
    """The first category whose pattern the name matches, else other."""
    for cat, pattern in cats.items():
        if re.search(pattern, name):
            return cat
    return "other"


def plan(name: str, section: str, decl: c_ast.Decl, rules: Rules) -> Plan:
    """What a function becomes; Excluded says why it becomes no tool."""
    reason = rules.sections.get(section)
    if reason is None:
        reason = next((r for rx, r in rules.excludes if rx.search(name)), None)
    if reason is not None:
        raise Excluded(reason)
    ret, params = signature(decl)
    network = section == rules.network
    if rules.aggregates.search(name):
        return plan_aggregate(name, section, prototype(decl), params, rules, network)
    p = Plan(name, name, section, prototype(decl), category(name, rules.categories), network,
             [], Result("value", ret, ""))
    bounded = rules.bounds.search(name) is not None
    plan_call(p, ret, params, rules, rules.max_pieces if bounded else None)
    return p


def plan_call(p: Plan, ret: CType, params: list[Param], rules: Rules,
              bound: int | None) -> None:
    """Fills p's arguments and result from the C signature; Excluded for a
    parameter or result with no JSON form. The checks run in the order the
    table of reasons (docs/functions.md) was written with."""
    if ret.base == "void" and ret.depth == 0:
        raise Excluded("returns nothing: it changes its arguments or global state")
    params = list(params)
    if len(params) == 1 and params[0].ct.base == "void" and params[0].ct.depth == 0:
        params = []
    count = bins = None
    if params and params[-1].name == "count" and params[-1].ct == CType("int", 1, False):
        count = params.pop()
        # The bins a split's pieces fall in, one array per dimension, beside its result.
        bins = []
        while params and params[-1].name.endswith("bins") and params[-1].ct.depth >= 2:
            bins.insert(0, params.pop())
    if params and params[-1].name in ("size_out", "size") and params[-1].ct.depth == 1 and \
            params[-1].ct.base == "size_t" and ret.base == "char":
        params.pop()
        p.hidden_size = True
    out = None
    if ret.base in ("bool", "_Bool") and ret.depth == 0 and params and \
            not params[-1].ct.const and params[-1].ct.depth >= 1 and count is None:
        out = params.pop()
    p.accepted = accepted_types(p.function, params)
    p.args = [plan_arg(p.function, q, p.accepted, rules) for q in params]
    if bound is not None:
        p.bound = plan_bound(p.function, params, bound)
    if count is not None:
        p.result = plan_array(p.function, ret, bins or [])
    elif out is not None:
        ct = out.ct.deref()
        p.result = Result("out", ct, writes(p.function, ct))
    else:
        p.result = plan_return(p.function, ret, rules.static_names)


def plan_arg(fn: str, param: Param, accepted: dict[str, list[str]], rules: Rules) -> Arg:
    """How parameter param of function fn is read from JSON."""
    ct, pn = param.ct, param.name
    travel = C_TYPES.get(ct.depth, {}).get(ct.base)
    if ct.depth == 1 and ct.base in VALUE_FAMILIES and travel and travel.reads is None:
        raise Excluded(f"takes a {ct.base} (an internal subtype) as {pn}")
    if travel is None or travel.reads is None or (travel.const and not ct.const):
        if travel and travel.non_const:
            raise Excluded(travel.non_const.format(p=pn, b=ct.base))
        raise Excluded(f"parameter {pn} of type {ct} has no JSON form")
    if travel.reads == "value":
        return Arg(pn, ct, "value:" + family_of(fn, ct.base), accepted.get(pn) or [],
                   is_geodetic(fn))
    if travel.reads == "int":
        lo, hi, jlo, jhi = INT_LIMITS[ct.base]
        if pn in rules.limits:
            jlo, jhi = rules.limits[pn]
            lo, hi = str(jlo), str(jhi)
        return Arg(pn, ct, "int", range=(lo, hi, jlo, jhi))
    if travel.reads == "enum":
        values = [v for v in rules.enums.get(ct.base, [])
                  if not v.startswith("NO_") and v != "T_UNKNOWN"]
        return Arg(pn, ct, "enum:" + ct.base, values=values)
    return Arg(pn, ct, travel.reads)


def writes(fn: str, ct: CType) -> str:
    """How one result value of type ct of function fn is written; Excluded
    when it has no JSON form."""
    travel = C_TYPES.get(ct.depth, {}).get(ct.base)
    if travel is None or travel.writes is None:
        raise Excluded(f"a result of type {ct} has no JSON form")
    if travel.writes == "value":
        return "value:" + family_of(fn, ct.base)
    return travel.writes


def plan_array(fn: str, ret: CType, bins: list[Param]) -> Result:
    """An array answer with its int *count, and for a split its bins."""
    if ret.depth == 0:
        raise Excluded("an int *count without an array result")
    elem = ret.deref()
    if bins:
        planned = [Bin(b.name, b.name[:-1], b.ct.deref().deref(),
                       writes(fn, b.ct.deref().deref())) for b in bins]
        return Result("split", elem, writes(fn, elem), bins=planned)
    if elem.depth == 0 and elem.base in VALUE_FAMILIES:
        return Result("array", elem, "value:" + family_of(fn, elem.base), borrowed=True)
    return Result("array", elem, writes(fn, elem))


def plan_return(fn: str, ret: CType, static_names: set[str]) -> Result:
    """A value the function returns."""
    if ret.depth == 1 and ret.base == "char":
        # Static names (const char *, or listed in the policy) are not freed.
        static = ret.const or fn in static_names
        return Result("cstring", ret, "static_cstring" if static else "cstring")
    if ret.depth == 1 and ret.const:
        raise Excluded(f"returns a const {ret.base} *: a pointer it keeps, not a copy")
    return Result("value", ret, writes(fn, ret))


def plan_bound(fn: str, params: list[Param], bound: int) -> Bound:
    """The pieces a bounded call asks for, from the roles of its parameters."""
    by_name = {p.name: p for p in params}
    value = next((p for p in params if p.ct.depth == 1 and p.ct.base in PARAM_FAMILIES), None)
    b = Bound(bound, value.name if value else None,
              family_of(fn, value.ct.base) if value else "GF_SPAN")
    numeric = ("int", "int32", "int64", "double")
    origin = next((p.name for p in params if p.name in ("vorigin", "xorigin", "origin")
                   and p.ct.depth == 0 and p.ct.base in numeric), None)
    torigin = next((p for p in params if p.name in ("torigin", "origin")
                    and p.ct.base in ("TimestampTz", "DateADT")), None)
    if "ysize" in by_name:
        b.space = True
    else:
        size = next((p for p in ("vsize", "xsize", "size") if p in by_name), None)
        if size and origin:
            b.values = (size, origin)
    if "duration" in by_name and torigin:
        b.times = (torigin.name, torigin.ct.base == "DateADT")
    b.counts = [p.name for p in params if p.name.endswith("_count") and p.ct.base in numeric]
    if not (b.space or b.values or b.times or b.counts):
        raise ValueError(f"policy.toml [bounds] names {fn}, whose parameters have no size, "
                         "duration or count to bound it by")
    return b


def plan_aggregate(fn: str, section: str, proto: str, params: list[Param], rules: Rules,
                   network: bool) -> Plan:
    """An aggregate tool: the transition function fn folded over the elements
    of the array argument values, then its final function."""
    final = rules.final_of(fn, params[0].ct.base if params else "")
    state, elem = params[0], params[1]
    window = params[2:]
    if state.ct.base not in AGG_RESULTS or len(window) > 1 or \
            (window and window[0].ct.base != "Interval"):
        raise Excluded("a transition function of a shape the aggregate tools do not take")
    ect = elem.ct
    accepted: dict[str, list[str]] = {}
    if ect.depth == 1 and ect.base in PARAM_FAMILIES:
        types = accepted_types(fn, [Param(elem.name, CType(ect.base, 1, True))]).get(elem.name)
        if types:
            accepted = {"values": types}
        element = Arg("values", ect, "value:" + family_of(fn, ect.base), types or [],
                      is_geodetic(fn))
    elif ect.depth == 1 and ect.base == "text":
        element = Arg("values", ect, "text")
    elif ect.depth == 0 and ect.base in AGG_SCALARS:
        element = Arg("values", ect, BY_VALUE[ect.base].reads or "")
        if element.kind == "int":
            element.range = INT_LIMITS[ect.base]
    else:
        raise Excluded(f"an aggregate over {ect}, which has no JSON form")
    agg = Aggregate(state.ct.base, element, bool(window), final or "", rules.max_values,
                    rules.max_instants)
    return Plan(fn[: -len("_transfn")] + "_agg", fn, section, proto, "aggregates", network,
                [], Result("aggregate", CType(state.ct.base, 1, False),
                           "value:" + AGG_RESULTS[state.ct.base]),
                accepted=accepted, aggregate=agg)


def plan_json(p: Plan) -> dict:
    """p as plain JSON, C types spelled as C and empty fields left out: what
    the snapshot tests (tests/test_plans.py) compare."""
    def plain(v: object) -> object:
        if isinstance(v, CType):
            return str(v).strip()
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        if isinstance(v, dict):
            return {k: plain(x) for k, x in v.items() if x not in (None, "", [], {}, False)}
        if hasattr(v, "__dataclass_fields__"):
            return plain({k: getattr(v, k) for k in v.__dataclass_fields__})
        return v
    out = plain(p)
    assert isinstance(out, dict)
    out["mode"] = p.mode
    return out
