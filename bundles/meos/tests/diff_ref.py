"""The reference side of the differential test: MEOS 1.3 called directly.

A worker process: reads one JSON call per line on stdin, calls the MEOS
function through pymeos-cffi 1.3.0's compiled bindings (the same libmeos,
reached without the bundle), and writes one JSON answer per line:
{"result": ...} or {"error": "..."}. It runs apart from the test so that a
function that kills it costs only that call.
"""

from __future__ import annotations

import json
import math
import os
import sys
from typing import Any

import pymeos_cffi
from pymeos_cffi.functions import _ffi, _lib

DIGITS = 15
SPATIAL_TEMPORALS = {_lib.T_TGEOMPOINT, _lib.T_TGEOGPOINT, _lib.T_TGEOMETRY, _lib.T_TGEOGRAPHY}
SPATIAL_SETS = {_lib.T_GEOMSET, _lib.T_GEOGSET}

errors: list[str] = []


@_ffi.callback("void(int, int, const char *)")
def on_error(level: int, code: int, message: Any) -> None:
    if level >= 21 and not errors:
        errors.append(_ffi.string(message).decode("utf-8", "replace"))


def c_string(p: Any) -> str | None:
    """The C string's text. The reference is a short-lived process: what
    MEOS allocated is left to its exit rather than freed here."""
    if p == _ffi.NULL:
        return None
    return _ffi.string(p).decode("utf-8", "replace")


def encode_value(v: Any, family: str) -> str | None:
    if v == _ffi.NULL:
        return None
    if family == "GF_TEMPORAL":
        t = _ffi.cast("Temporal *", v)
        s = _lib.tspatial_as_ewkt(t, DIGITS) if t.temptype in SPATIAL_TEMPORALS else \
            _lib.temporal_out(t, DIGITS)
    elif family == "GF_SET":
        s = _lib.spatialset_as_ewkt(v, DIGITS) if v.settype in SPATIAL_SETS else \
            _lib.set_out(v, DIGITS)
    elif family == "GF_SPAN":
        s = _lib.span_out(v, DIGITS)
    elif family == "GF_SPANSET":
        s = _lib.spanset_out(v, DIGITS)
    elif family == "GF_TBOX":
        s = _lib.tbox_out(v, DIGITS)
    elif family == "GF_STBOX":
        s = _lib.stbox_out(v, DIGITS)
    elif family == "GF_NPOINT":
        s = _lib.npoint_out(v, DIGITS)
    elif family == "GF_NSEGMENT":
        s = _lib.nsegment_out(v, DIGITS)
    else:
        s = _lib.geo_as_ewkt(v, DIGITS)
    return c_string(s)


def encode(v: Any, kind: str) -> Any:
    if kind.startswith("value:"):
        return encode_value(v, kind[6:])
    if kind == "text":
        return None if v == _ffi.NULL else c_string(_lib.text2cstring(v))
    if kind in ("cstring", "static_cstring"):
        return c_string(v)
    if kind == "interval":
        return None if v == _ffi.NULL else c_string(_lib.interval_out(v))
    if kind == "timestamptz":
        return c_string(_lib.timestamptz_out(v))
    if kind == "date":
        return c_string(_lib.date_out(v))
    if kind == "double":
        if math.isfinite(v):
            return v
        return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
    if kind == "bool":
        return bool(v)
    if kind == "uint":
        return str(v)
    return int(v)


def decode(value: Any, kind: str, parser: str | None) -> Any:
    if kind.startswith("value:"):
        if parser in ("geom_in", "geog_in"):
            return getattr(_lib, parser)(value.encode(), -1)
        return getattr(_lib, parser)(value.encode())
    if kind == "text":
        return _lib.cstring2text(value.encode())
    if kind == "cstring":
        return _ffi.new("char[]", value.encode())
    if kind == "interval":
        return _lib.interval_in(value.encode(), -1)
    if kind == "timestamptz":
        return _lib.timestamptz_in(value.encode(), -1)
    if kind == "date":
        return _lib.date_in(value.encode())
    if kind.startswith("enum:"):
        return getattr(_lib, value)
    return value


def aggregate(tool: dict, args: dict, parsers: dict) -> dict:
    """The transition function over every element, then the final function."""
    kind = tool["params"][0][1][len("array:"):]
    elements = [decode(v, kind, parsers.get("values")) for v in args["values"]]
    window = [decode(args["interv"], "interval", None)] if "interv" in args else []
    if errors:
        return {"error": "reference could not read its input: " + errors[0]}
    transfn = getattr(_lib, tool["function"])
    state = _ffi.NULL
    for e in elements:
        state = transfn(state, e, *window)
        if errors:
            return {"error": errors[0]}
    if tool["final"] and state != _ffi.NULL:
        state = getattr(_lib, tool["final"])(state)
    if errors:
        return {"error": errors[0]}
    return {"result": None if state == _ffi.NULL else encode(state, tool["result"])}


def call(tool: dict, args: dict, parsers: dict) -> dict:
    errors.clear()
    if tool["mode"] == "aggregate":
        return aggregate(tool, args, parsers)
    c_args = [decode(args[name], kind, parsers.get(name)) for name, kind in tool["params"]]
    if errors:
        return {"error": "reference could not read its input: " + errors[0]}
    fn = getattr(_lib, tool["function"])
    mode = tool["mode"]
    kind = tool["result"]
    if mode in ("array", "split"):
        # A counted array; a split's bins come in arrays of their own before the count.
        outs = [_ffi.new(ctype.strip() + " **") for _, _, _, ctype in tool["outs"]]
        count = _ffi.new("int *")
        r = fn(*c_args, *outs, count)
        if errors:
            return {"error": errors[0]}
        if r == _ffi.NULL:
            return {"result": None}
        items = []
        for i in range(count[0]):
            # Contiguous arrays of boxes and spans hold values, not pointers.
            elem = encode(r + i if _ffi.typeof(r).item.kind == "struct" else r[i], kind)
            if mode == "split":
                elem = {key: encode(out[0][i], okind)
                        for out, (_, key, okind, _) in zip(outs, tool["outs"])} | {"value": elem}
            items.append(elem)
        return {"result": items}
    if mode.startswith("out:"):
        out = _ffi.new(mode[4:].strip() + " *")
        found = fn(*c_args, out)
        if errors:
            return {"error": errors[0]}
        return {"result": encode(out[0], kind) if found else None}
    if mode == "hidden_size":
        r = fn(*c_args, _ffi.new("size_t *"))
    else:
        r = fn(*c_args)
    if errors:
        return {"error": errors[0]}
    if isinstance(r, _ffi.CData) and _ffi.typeof(r).kind == "pointer" and r == _ffi.NULL:
        return {"result": None}
    return {"result": encode(r, kind)}


def main() -> None:
    pymeos_cffi.meos_initialize("UTC")
    _lib.meos_initialize_error_handler(on_error)
    ways = os.environ.get("MEOS_WAYS")
    if ways:
        # As the bundle does (src/ways.c): one route in MEOS's cache, so that
        # get_srid_ways answers the network's SRID from the first call.
        with open(ways, encoding="ascii") as f:
            _lib.route_exists(int(f.readline().split(",")[0]))
    for line in sys.stdin:
        req = json.loads(line)
        try:
            answer = call(req["tool"], req["args"], req["parsers"])
        except Exception as e:  # a binding the reference cannot drive
            answer = {"skip": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
