"""The C body of each generated tool, written from its plan (plan.py).

Nothing here decides: every conversion and result mode comes from the plan,
and each result mode has one emitter (EMITTERS). The body reads the
arguments (READERS), checks the bound of pieces, calls the function and
writes the answer (WRITERS).
"""

from __future__ import annotations

from plan import Aggregate, Arg, Bound, Plan

# The C expression writing one value of a kind, {x} the value; the
# family's for a value:<family> kind.
WRITERS = {
    "value": "ge_value(c, {x}, {family})",
    "text": "ge_text(c, {x})",
    "interval": "ge_interval(c, mc_keep(c, {x}))",
    "timestamptz": "ge_timestamptz(c, {x})",
    "date": "ge_date(c, {x})",
    "double": "ge_double({x})",
    "bool": "ge_bool({x})",
    "uint": "ge_uint({x})",
    "int": "ge_int({x})",
}

# The C lines reading a parameter of a kind into {v} from the argument
# named {n}; value, int and enum parameters have readers of their own.
READERS = {
    "text": ["const text *{v} = ga_text(c, args, \"{n}\", &err);", "if (!{v}) return err;"],
    "cstring": ["const char *{v} = ga_cstring(args, \"{n}\", &err);", "if (!{v}) return err;"],
    "interval": ["const Interval *{v} = ga_interval(c, args, \"{n}\", &err);",
                 "if (!{v}) return err;"],
    "timestamptz": ["TimestampTz {v};",
                    "if (ga_timestamptz(args, \"{n}\", &{v}, &err)) return err;"],
    "date": ["DateADT {v};", "if (ga_date(args, \"{n}\", &{v}, &err)) return err;"],
    "double": ["double {v};", "if (ga_double(args, \"{n}\", &{v}, &err)) return err;"],
    "bool": ["bool {v};", "if (ga_bool(args, \"{n}\", &{v}, &err)) return err;"],
}

# An aggregate's scalar elements, by kind: the C type of the array holding
# them and the decoder's call (0 when read).
AGG_READERS = {
    "int": ("int64_t", "ga_int(item, label, {lo}, {hi}, &v[i], &err)"),
    "double": ("double", "ga_double(item, label, &v[i], &err)"),
    "date": ("DateADT", "ga_date(item, label, &v[i], &err)"),
    "timestamptz": ("TimestampTz", "ga_timestamptz(item, label, &v[i], &err)"),
}


def write(kind: str, expr: str) -> str:
    """The C expression writing expr, a value of the kind."""
    conv, _, family = kind.partition(":")
    return WRITERS[conv].format(x=expr, family=family)


def quoted(s: str) -> str:
    """s as a C string literal (names only: no escapes needed)."""
    return '"' + s + '"'


def stars(depth: int) -> str:
    return "*" * depth


def read(a: Arg) -> list[str]:
    """The lines reading argument a into a_<name>."""
    v, n = "a_" + a.name, a.name
    conv, _, extra = a.kind.partition(":")
    lines = []
    if conv == "value":
        tlist = "NULL, 0"
        if a.types:
            lines.append(f"static const int t_{n}[] = {{{', '.join(a.types)}}};")
            tlist = f"t_{n}, {len(a.types)}"
        lines.append(f"const {a.ct.base} *{v} = ga_value(c, args, \"{n}\", {extra}, "
                     f"{str(a.geodetic).lower()}, {tlist}, &err);")
        lines.append(f"if (!{v}) return err;")
    elif conv == "int":
        assert a.range is not None
        lo, hi = a.range[0], a.range[1]
        lines.append(f"int64_t {v};")
        lines.append(f"if (ga_int(args, \"{n}\", {lo}, {hi}, &{v}, &err)) return err;")
    elif conv == "enum":
        lines.append(f"static const char *const n_{n}[] = {{"
                     + ", ".join(f'"{x}"' for x in a.values) + "};")
        lines.append(f"static const int v_{n}[] = {{" + ", ".join(a.values) + "};")
        lines.append(f"int {v};")
        lines.append(f"if (ga_enum(args, \"{n}\", n_{n}, v_{n}, {len(a.values)}, "
                     f"&{v}, &err)) return err;")
    else:
        lines += [line.format(v=v, n=n) for line in READERS[conv]]
    return ["    " + line for line in lines]


def call_arg(a: Arg) -> str:
    """How argument a is passed to the C function."""
    v = "a_" + a.name
    conv, _, enum = a.kind.partition(":")
    return f"({enum}){v}" if conv == "enum" else v


def bound(fn: str, b: Bound) -> list[str]:
    """C lines counting the pieces a call asks for and refusing it past b.max."""
    v = f"a_{b.value}, {b.family}" if b.value else "NULL, GF_SPAN"
    terms = []
    if b.space:
        terms.append(f"gb_space({v}, a_xsize, a_ysize, a_zsize)")
    elif b.values:
        size, origin = b.values
        terms.append(f"gb_values({v}, (double)a_{size}, (double)a_{origin})")
    if b.times:
        origin, dates = b.times
        terms.append(f"gb_times({v}, a_duration, (double)a_{origin}, {str(dates).lower()})")
    terms += [f"gb_count(a_{c}, {v})" for c in b.counts]
    return [f"    double pieces = {' * '.join(terms)};",
            f"    if (gb_check(\"{fn}\", pieces, {b.max}, &err)) return err;"]


def body(p: Plan) -> list[str]:
    """The lines of p's tool body, between its braces' first two lines and its end."""
    lines: list[str] = []
    for a in p.args:
        lines += read(a)
    args = [call_arg(a) for a in p.args]
    if p.bound is not None:
        lines += bound(p.function, p.bound)
    if p.hidden_size:
        lines.append("    size_t hidden_size;")
        args.append("&hidden_size")
    return lines + EMITTERS[p.result.mode](p, args)


def emit_value(p: Plan, args: list[str]) -> list[str]:
    """A returned value: a pointer is kept by the encoder, NULL is no answer."""
    ret, q = p.result.ct, quoted(p.function)
    enc = write(p.result.kind, "r")
    if ret.depth == 1:
        return [f"    {ret.base} *r = {p.function}({', '.join(args)});",
                f"    json_t *fail = gr_check({q});",
                "    if (fail) { free(r); return fail; }",
                f"    return r ? gr_result({q}, {enc}) : gr_none({q});"]
    return [f"    {ret.base} r = {p.function}({', '.join(args)});",
            f"    json_t *fail = gr_check({q});",
            "    if (fail) return fail;",
            f"    return gr_result({q}, {enc});"]


def emit_cstring(p: Plan, args: list[str]) -> list[str]:
    """A returned C string; a static one is neither freed nor kept."""
    q = quoted(p.function)
    static = p.result.kind == "static_cstring"
    return [f"    char *r = {'(char *)' if static else ''}{p.function}({', '.join(args)});",
            f"    json_t *fail = gr_check({q});",
            "    if (fail) return fail;" if static else "    if (fail) { free(r); return fail; }",
            f"    return r ? gr_result({q}, ge_cstring(c, r, {str(not static).lower()})) "
            f": gr_none({q});"]


def emit_out(p: Plan, args: list[str]) -> list[str]:
    """A bool saying whether the function wrote its last parameter."""
    ct, q = p.result.ct, quoted(p.function)
    decl = f"{ct.base} {stars(ct.depth)}out"
    if ct.depth:
        decl += " = NULL"
    elif ct.base not in ("bool", "_Bool"):
        decl += " = 0"
    lines = [f"    {decl};",
             f"    bool found = {p.function}({', '.join(args + ['&out'])});",
             f"    json_t *fail = gr_check({q});",
             "    if (fail || !found) {"]
    if ct.depth:
        lines.append("        if (found) free(out);")
    return lines + [f"        return fail ? fail : gr_none({q});", "    }",
                    f"    return gr_result({q}, {write(p.result.kind, 'out')});"]


def emit_array(p: Plan, args: list[str]) -> list[str]:
    """An array of count values, each written."""
    r, q = p.result, quoted(p.function)
    ret = f"{r.ct.base} {stars(r.ct.depth + 1)}r"
    if r.borrowed:
        # A contiguous array: its elements are not separately freed.
        enc = f"ge_value_borrowed(&r[i], {r.kind.partition(':')[2]})"
    else:
        enc = write(r.kind, "r[i]")
    return ["    int count = 0;",
            f"    {ret} = {p.function}({', '.join(args + ['&count'])});",
            f"    json_t *fail = gr_check({q});",
            "    if (fail) { free(r); return fail; }",
            f"    if (!r) return gr_none({q});",
            "    mc_keep(c, r);",
            "    json_t *list = json_array();",
            "    for (int i = 0; i < count; i++)",
            f"        json_array_append_new(list, {enc});",
            f"    return gr_result({q}, list);"]


def emit_split(p: Plan, args: list[str]) -> list[str]:
    """A split: an array of pieces and, for each dimension, the array of the
    bins they fall in. Answered as [{"<dimension>_bin": ..., "value": piece}]."""
    r, q = p.result, quoted(p.function)
    lines = [f"    {b.ct.base} {stars(b.ct.depth + 1)}o_{b.param} = NULL;" for b in r.bins]
    args = args + [f"&o_{b.param}" for b in r.bins] + ["&count"]
    lines.append("    int count = 0;")
    lines.append(f"    {r.ct.base} {stars(r.ct.depth + 1)}r = {p.function}({', '.join(args)});")
    lines += [f"    mc_keep(c, o_{b.param});" for b in r.bins]
    lines += [f"    json_t *fail = gr_check({q});",
              "    if (fail) { free(r); return fail; }",
              f"    if (!r) return gr_none({q});",
              "    mc_keep(c, r);",
              "    json_t *list = json_array();",
              "    for (int i = 0; i < count; i++) {",
              "        json_t *piece = json_object();"]
    lines += [f"        json_object_set_new(piece, \"{b.key}\", "
              f"{write(b.kind, f'o_{b.param}[i]')});" for b in r.bins]
    return lines + [f"        json_object_set_new(piece, \"value\", {write(r.kind, 'r[i]')});",
                    "        json_array_append_new(list, piece);",
                    "    }",
                    f"    return gr_result({q}, list);"]


def agg_element(e: Arg) -> tuple[str, str, str, str]:
    """How an aggregate reads its elements: the C type of their array, the
    decoder's expression, whether it failed, and one element as passed on."""
    conv, _, family = e.kind.partition(":")
    if conv == "value":
        tlist = f"t_values, {len(e.types)}" if e.types else "NULL, 0"
        return (f"const {e.ct.base} *",
                f"(v[i] = ga_value(c, item, label, {family}, {str(e.geodetic).lower()}, "
                f"{tlist}, &err))", "!v[i]",
                f"({'const ' if e.ct.const else ''}{e.ct.base} *)v[i]")
    if conv == "text":
        return "const text *", "(v[i] = ga_text(c, item, label, &err))", "!v[i]", "v[i]"
    array_type, decode = AGG_READERS[conv]
    lo, hi = e.range[:2] if e.range else ("", "")
    return array_type, decode.format(lo=lo, hi=hi), "rc", "v[i]"


def agg_read(g: Aggregate) -> list[str]:
    """The lines reading an aggregate's array argument into v, checked."""
    skiplist = "true" if g.state == "SkipList" else "false"
    conv, _, family = g.element.kind.partition(":")
    array_type, decode, failed, _ = agg_element(g.element)
    lines = ["    size_t n;",
             f"    json_t *values = ga_array(args, \"values\", {g.max_values}, &n, &err);",
             "    if (!values) return err;"]
    if g.window:
        lines += ["    const Interval *a_interv = ga_interval(c, args, \"interv\", &err);",
                  "    if (!a_interv || ga_window(a_interv, \"interv\", &err)) return err;"]
    if g.element.types:
        lines.append(f"    static const int t_values[] = {{{', '.join(g.element.types)}}};")
    lines += [f"    {array_type}*v = mc_keep(c, calloc(n + 1, sizeof *v));",
              "    if (!v) return mc_fail(\"out of memory\");",
              # A cancelled call stops between elements: the fold can take minutes.
              "    for (size_t i = 0; i < n; i++) {",
              "        if (mc_cancelled(c)) return mc_gave_up();",
              "        char label[48];",
              "        json_t *item = ga_item(values, i, \"values\", label, sizeof label);",
              f"        int rc = {decode} ? 0 : -1;" if failed != "rc" else
              f"        int rc = {decode};",
              "        json_decref(item);",
              "        if (rc) return err;",
              "    }"]
    if conv == "value":
        lines += [f"    if (ga_instants((const void *const *)v, n, {family}, {g.max_instants}, "
                  "\"values\", &err)) return err;",
                  f"    if (ga_agg_check((const void *const *)v, n, {family}, {skiplist}, "
                  "\"values\", &err)) return err;"]
    return lines


def emit_aggregate(p: Plan, args: list[str]) -> list[str]:
    """The fold of an aggregate over its array argument, then its final function."""
    g = p.aggregate
    assert g is not None and not args
    fn, q = p.function, quoted(p.tool)
    skiplist = "true" if g.state == "SkipList" else "false"
    conv, _, family = g.element.kind.partition(":")
    arg = agg_element(g.element)[3]
    lines = agg_read(g)
    if g.state == "SkipList":
        lines.append("    if (ga_skiplist_ready(&err)) return err;")
    if g.state == "SpanSet" and conv == "value":
        # MEOS 1.3 rebuilds a span set state past 64 spans requiring order.
        lines.append(f"    ga_sort((const void **)v, n, {family});")
    lines += [f"    {g.state} *state = NULL;",
              "    for (size_t i = 0; i < n; i++) {",
              f"        if (mc_cancelled(c)) return ga_gave_up(state, {skiplist});",
              f"        {g.state} *next = {fn}(state, {arg}{', a_interv' if g.window else ''});",
              f"        if (mc_failed()) return ga_agg_fail(\"{fn}\", i, state, {skiplist});",
              "        state = next;",
              "    }"]
    result_family = p.result.kind.partition(":")[2]
    if g.final:
        rtype = {"GF_TEMPORAL": "Temporal", "GF_SET": "Set", "GF_SPANSET": "SpanSet"}[result_family]
        taken = "ga_skiplist(state)" if g.state == "SkipList" else "state"
        lines.append(f"    {rtype} *r = state ? {g.final}({taken}) : NULL;")
    else:
        lines.append(f"    {g.state} *r = state;")
    return lines + [f"    json_t *fail = gr_check({q});",
                    "    if (fail) { free(r); return fail; }",
                    f"    return r ? gr_result({q}, ge_value(c, r, {result_family})) : "
                    f"gr_none({q});"]


EMITTERS = {
    "value": emit_value,
    "cstring": emit_cstring,
    "out": emit_out,
    "array": emit_array,
    "split": emit_split,
    "aggregate": emit_aggregate,
}
