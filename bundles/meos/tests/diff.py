"""Differential test of the generated tools: the node against MEOS itself.

For each generated tool (build/gen/manifest.json), arguments are drawn from a
corpus of valid values per MEOS type (and a few invalid ones); the tool is
called through the node (toolnode serve, the bundle behind it) and the same
function is called through pymeos-cffi 1.3.0 directly (tests/diff_ref.py).
The two answers must agree: the same value, or both errors.

    diff.py --node PATH [--every N] [--combos K] [--report FILE] [--fuzz CALLS]

--every N takes every Nth tool (the bounded slice of make test); --fuzz
also sends CALLS mutated arguments, which must all come back as tool
errors or answers, never as a dead bundle. Exits 1 on any disagreement.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import select
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BUNDLE_DIR = os.path.normpath(os.path.join(HERE, ".."))
MANIFEST = os.path.join(BUNDLE_DIR, "build", "gen", "manifest.json")

# Seconds the reference may take over one call before it is stopped.
REFERENCE_TIMEOUT = 20

T0 = "2025-01-01 08:00:00+00"
T1 = "2025-01-01 08:10:00+00"
T2 = "2025-01-01 08:20:00+00"
T3 = "2025-01-01 09:00:00+00"

# type: (family, parser, two values, words in a function name that take it)
CORPUS = {
    "tbool": ("GF_TEMPORAL", "tbool_in", [f"[t@{T0}, f@{T1}]", f"{{t@{T0}, t@{T2}}}"],
              ["tbool", "temporal", "tand", "tor", "tnot"]),
    "tint": ("GF_TEMPORAL", "tint_in", [f"[1@{T0}, 2@{T1}]", f"{{1@{T0}, 3@{T2}}}"],
             ["tint", "tnumber", "temporal"]),
    "tfloat": ("GF_TEMPORAL", "tfloat_in",
               [f"[1.5@{T0}, 3.5@{T1}]", f"{{[1@{T0}, 2.5@{T1}], [3@{T2}, 3@{T3}]}}"],
               ["tfloat", "tnumber", "temporal"]),
    "ttext": ("GF_TEMPORAL", "ttext_in", [f'["a"@{T0}, "b"@{T1}]', f'"abc"@{T1}'],
              ["ttext", "temporal"]),
    "tgeompoint": ("GF_TEMPORAL", "tgeompoint_in",
                   [f"[POINT(0 0)@{T0}, POINT(3 4)@{T1}]", f"[POINT(1 1)@{T0}, POINT(1 5)@{T2}]"],
                   ["tgeompoint", "tpoint", "tgeo", "tspatial", "temporal"]),
    "tgeometry": ("GF_TEMPORAL", "tgeometry_in",
                  [f"{{POLYGON((0 0,2 0,2 2,0 0))@{T0}, POINT(1 1)@{T1}}}",
                   f"Interp=Step;[LINESTRING(0 0,1 1)@{T0}, LINESTRING(1 1,2 2)@{T2}]"],
                  ["tgeometry", "tgeo", "tspatial", "temporal"]),
    "intset": ("GF_SET", "intset_in", ["{1, 2, 3}", "{3, 5}"], ["intset", "int", "numset", "set"]),
    "bigintset": ("GF_SET", "bigintset_in", ["{1, 5000000000}", "{5000000000}"],
                  ["bigintset", "bigint", "numset", "set"]),
    "floatset": ("GF_SET", "floatset_in", ["{1.5, 2.5}", "{2.5, 4}"],
                 ["floatset", "float", "numset", "set"]),
    "dateset": ("GF_SET", "dateset_in", ["{2025-01-01, 2025-01-03}", "{2025-01-03}"],
                ["dateset", "date", "set"]),
    "tstzset": ("GF_SET", "tstzset_in", [f"{{{T0}, {T3}}}", f"{{{T3}}}"], ["tstzset", "timestamptz", "set"]),
    "textset": ("GF_SET", "textset_in", ['{"a", "b"}', '{"b", "c"}'], ["textset", "set"]),
    "geomset": ("GF_SET", "geomset_in", ["{POINT(1 1), POINT(2 2)}", "{POINT(2 2)}"],
                ["geomset", "geoset", "spatialset", "set"]),
    "intspan": ("GF_SPAN", "intspan_in", ["[1, 5)", "[3, 8)"], ["intspan", "int", "numspan", "span"]),
    "bigintspan": ("GF_SPAN", "bigintspan_in", ["[1, 5000000000)", "[4000000000, 6000000000)"],
                   ["bigintspan", "bigint", "numspan", "span"]),
    "floatspan": ("GF_SPAN", "floatspan_in", ["[1.5, 2.5]", "[2, 3.5]"],
                  ["floatspan", "float", "numspan", "span"]),
    "datespan": ("GF_SPAN", "datespan_in", ["[2025-01-01, 2025-01-05)", "[2025-01-03, 2025-01-08)"],
                 ["datespan", "date", "span"]),
    "tstzspan": ("GF_SPAN", "tstzspan_in", [f"[{T0}, {T1}]", f"[{T1}, {T3}]"],
                 ["tstzspan", "timestamptz", "span"]),
    "intspanset": ("GF_SPANSET", "intspanset_in", ["{[1, 3), [5, 7)}", "{[2, 6)}"],
                   ["intspanset", "int", "numspanset", "spanset"]),
    "bigintspanset": ("GF_SPANSET", "bigintspanset_in", ["{[1, 3), [5000000000, 5000000007)}",
                                                          "{[2, 5000000006)}"],
                      ["bigintspanset", "bigint", "numspanset", "spanset"]),
    "floatspanset": ("GF_SPANSET", "floatspanset_in", ["{[1.5, 2.5], [3, 4.5]}", "{[2, 3.5]}"],
                     ["floatspanset", "float", "numspanset", "spanset"]),
    "datespanset": ("GF_SPANSET", "datespanset_in",
                    ["{[2025-01-01, 2025-01-03), [2025-01-05, 2025-01-07)}",
                     "{[2025-01-02, 2025-01-06)}"], ["datespanset", "date", "spanset"]),
    "tstzspanset": ("GF_SPANSET", "tstzspanset_in", [f"{{[{T0}, {T1}], [{T2}, {T3}]}}",
                                                      f"{{[{T1}, {T2}]}}"],
                    ["tstzspanset", "timestamptz", "spanset"]),
    "tboxfloat": ("GF_TBOX", "tbox_in", [f"TBOXFLOAT XT([1, 2],[{T0}, {T3}])",
                                         f"TBOXFLOAT XT([1.5, 4],[{T1}, {T3}])"],
                  ["tbox", "tnumber", "float"]),
    "tboxint": ("GF_TBOX", "tbox_in", [f"TBOXINT XT([1, 3),[{T0}, {T1}])", "TBOXINT X([2, 6))"],
                ["tbox", "tnumber", "int"]),
    "stbox": ("GF_STBOX", "stbox_in", [f"STBOX XT(((0,0),(3,4)),[{T0}, {T1}])",
                                       "STBOX X((1,1),(5,5))"],
              ["stbox", "tspatial", "tgeo", "tpoint"]),
    "geometry": ("GF_GEOMETRY", "geom_in", ["POINT(1 1)", "POLYGON((0 0,4 0,4 4,0 4,0 0))"],
                 ["geo", "geom", "point"]),
    "geography": ("GF_GEOGRAPHY", "geog_in", ["POINT(1 1)", "LINESTRING(0 0,1 1)"], ["geog"]),
    "tgeogpoint": ("GF_TEMPORAL", "tgeogpoint_in",
                   [f"[POINT(0 0)@{T0}, POINT(0.003 0.004)@{T1}]",
                    f"[POINT(0.001 0.001)@{T0}, POINT(0.001 0.005)@{T2}]"],
                   ["tgeogpoint", "tpoint", "tgeo", "tspatial", "temporal"]),
    "tgeography": ("GF_TEMPORAL", "tgeography_in",
                   [f"{{POLYGON((0 0,2 0,2 2,0 0))@{T0}, POINT(1 1)@{T1}}}",
                    f"Interp=Step;[LINESTRING(0 0,1 1)@{T0}, LINESTRING(1 1,2 2)@{T2}]"],
                   ["tgeography", "tgeo", "tspatial", "temporal"]),
    "geogset": ("GF_SET", "geogset_in", ["{POINT(1 1), POINT(2 2)}", "{POINT(2 2)}"],
                ["geogset", "geoset", "spatialset", "set"]),
    # Network points, on the routes of tests/data/ways.csv.
    "tnpoint": ("GF_TEMPORAL", "tnpoint_in",
                [f"[NPoint(1,0.2)@{T0}, NPoint(1,0.8)@{T1}]",
                 f"{{NPoint(3,0.25)@{T0}, NPoint(3,0.5)@{T2}}}"], ["tnpoint", "temporal"]),
    "npointset": ("GF_SET", "npointset_in", ['{"NPoint(1,0.2)", "NPoint(3,0.5)"}',
                                             '{"NPoint(2,0.5)"}'], ["npointset", "npoint", "set"]),
    "npoint": ("GF_NPOINT", "npoint_in", ["NPoint(1,0.5)", "NPoint(3,0.25)"], ["npoint"]),
    "nsegment": ("GF_NSEGMENT", "nsegment_in", ["NSegment(1,0.2,0.6)", "NSegment(3,0.25,0.75)"],
                 ["nsegment"]),
}
# The road network of the network-point tools, named to the bundle (through the node) and
# to the reference (through build/ways_preload.so) in MEOS_WAYS.
WAYS = os.path.join(HERE, "data", "ways.csv")
WAYS_PRELOAD = os.path.join(BUNDLE_DIR, "build", "ways_preload.so")
GEODETIC = {"tgeogpoint", "tgeography", "geogset", "geography"}


def geodetic(tool_name: str) -> bool:
    """The generator's rule: the part of the name before _to_ says geog."""
    return "geog" in tool_name.split("_to_")[0]
# Values the decoders must refuse, each family.
INVALID = {
    "GF_TEMPORAL": ["[1@2025-13-01]", "[1@2025-01-01, 2@2024-01-01]", "{1.5"],
    "GF_SET": ["{1, abc}", "{2025-02-30}"],
    "GF_SPAN": ["[1, 2", "[1.5, abc]"],
    "GF_SPANSET": ["{[1, 2}", "{[x, 2]}"],
    "GF_TBOX": ["TBOXFLOAT XT([1, 2],[nope, 2025-01-01])"],
    "GF_STBOX": ["STBOX X((1,1),(5))"],
    "GF_GEOMETRY": ["1234", "POINT(1"],
    "GF_GEOGRAPHY": ["POINT(1"],
    "GF_NPOINT": ["NPoint(1, 2)", "NPoint(x"],
    "GF_NSEGMENT": ["NSegment(1, 0.5)"],
}
SCALARS = {
    "int": [1, 2],
    "double": [1.5, 0.5],
    "bool": [True, False],
    "timestamptz": [T1, "2025-01-01 08:05:00+00"],
    "date": ["2025-01-02", "2025-01-04"],
    "interval": ["1 day", "00:10:00"],
    "text": ["a", "b"],
    "cstring": ["linear", "NDR"],
}
CSTRINGS = {"interp_str": ["linear", "step"], "endian": ["NDR", "XDR"], "srs": ["EPSG:4326"]}


def ranked_types(tool_name: str, family: str) -> list[str]:
    """Types of the family, those whose words the function's name uses first."""
    name = tool_name.lower()
    tokens = set(name.split("_"))
    scored = []
    for tname, (fam, _, _, words) in CORPUS.items():
        if fam != family or (tname in GEODETIC) != geodetic(tool_name):
            continue
        # A word that is a whole part of the name ranks above one found inside a part
        # (intset inside npointset).
        whole = max((len(words) - i for i, w in enumerate(words) if w in tokens), default=0)
        inside = max((len(words) - i for i, w in enumerate(words) if w in name), default=0)
        scored.append((-whole, -inside, tname))
    return [t for *_, t in sorted(scored)]


def combos(tool: dict, k: int) -> list[tuple[dict, dict]]:
    """Up to k (arguments, reference parsers) pairs for a tool."""
    out = []
    for i in range(k):
        args, parsers = {}, {}
        seen_family: dict[str, int] = {}
        for pname, kind in tool["params"]:
            if kind.startswith("array:"):
                # An aggregate's values: copies of one corpus value, so that they can be
                # aggregated together, or none at all.
                one, _ = combos({"name": tool["name"], "params": [["v", kind[6:]]]},
                                i + 1)[i] if kind[6:] != "text" else ({"v": "a"}, {})
                if "v" not in one:
                    return []
                args[pname] = [[one["v"]] * 2, [one["v"]], [one["v"]] * 3, []][i % 4]
                if "v" in _ and args[pname]:
                    parsers[pname] = _["v"]
                continue
            if kind.startswith("value:"):
                fam = kind[6:]
                types = ranked_types(tool["name"], fam)
                if not types:
                    return []
                # The types this parameter takes first, so that two parameters of one
                # family (a number span and a time span) each get one of theirs.
                taken = tool.get("accepted", {}).get(pname, [])
                types.sort(key=lambda t: meos_type(CORPUS[t][1]) not in taken)
                tname = types[i % len(types)]
                nth = seen_family.get(fam, 0)
                seen_family[fam] = nth + 1
                values = CORPUS[tname][2]
                args[pname] = values[(nth + i // len(types)) % len(values)]
                parsers[pname] = CORPUS[tname][1]
            elif kind.startswith("enum:"):
                enum = {"enum:interpType": ["LINEAR", "STEP", "DISCRETE"]}.get(kind, [])
                if not enum:
                    return []
                args[pname] = enum[i % len(enum)]
            elif kind == "cstring":
                values = CSTRINGS.get(pname, SCALARS["cstring"])
                args[pname] = values[i % len(values)]
            else:
                values = SCALARS.get(kind)
                if values is None:
                    return []
                args[pname] = values[i % len(values)]
        out.append((args, parsers))
    return out


def meos_type(parser: str) -> str:
    """The meosType constant of what a corpus parser reads (of the spans, for span sets)."""
    name = parser[: -len("_in")].upper()
    if name.endswith("SPANSET"):
        name = name[: -len("SET")]
    return "T_" + name


# The bundle's rule (policy.toml [decode], read_type in src/gen_args.c): text
# is read as a type it widens to when the function takes that and not its own.
WIDENINGS = {
    "tint_in": ["tfloat_in"], "tgeompoint_in": ["tgeometry_in"],
    "tgeogpoint_in": ["tgeography_in"],
    "intset_in": ["bigintset_in", "floatset_in"], "bigintset_in": ["floatset_in"],
    "dateset_in": ["tstzset_in"],
    "intspan_in": ["bigintspan_in", "floatspan_in"], "bigintspan_in": ["floatspan_in"],
    "datespan_in": ["tstzspan_in"],
    "intspanset_in": ["bigintspanset_in", "floatspanset_in"],
    "bigintspanset_in": ["floatspanset_in"], "datespanset_in": ["tstzspanset_in"],
}


def read_as(tool: dict, parsers: dict) -> dict | None:
    """The parsers the bundle reads each value argument with, or None when one is
    of a type the tool does not take (the bundle refuses it before MEOS)."""
    out = dict(parsers)
    for pname, types in tool.get("accepted", {}).items():
        parser = parsers.get(pname)
        if not parser or parser in ("tbox_in", "stbox_in", "geom_in", "geog_in") or \
                meos_type(parser) in types:
            continue
        wider = [w for w in WIDENINGS.get(parser, []) if meos_type(w) in types]
        if not wider:
            return None
        out[pname] = wider[0]
    return out


def same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        if isinstance(a, (int, float)) and isinstance(b, (int, float)):
            return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
        return False
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


class Node:
    """toolnode serve over stdio, with only the MEOS bundle."""

    def __init__(self, node: str, log) -> None:
        self.dir = tempfile.mkdtemp(prefix="meos-diff-")
        os.symlink(BUNDLE_DIR, os.path.join(self.dir, "meos"))
        self.proc = subprocess.Popen(
            [node, "serve", "--bundles", self.dir, "--names", "canonical", "--view", "full", "--stdio",
             "--page-size", "0"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True,
            encoding="utf-8", env=dict(os.environ, MEOS_WAYS=WAYS))
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "meos-diff", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg: dict) -> None:
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the node closed its stdout")
            msg = json.loads(line)
            if msg.get("id") == self.next_id:
                return msg

    def call(self, tool: str, args: dict) -> dict:
        """{"result": value} or {"error": text}."""
        msg = self.request("tools/call", {"name": "meos." + tool, "arguments": args})
        if "error" in msg:
            return {"error": "JSON-RPC: " + msg["error"].get("message", "")}
        res = msg["result"]
        if res.get("isError"):
            return {"error": res["content"][0]["text"]}
        return {"result": res["structuredContent"]["result"]}

    def close(self) -> int:
        self.proc.stdin.close()
        code = self.proc.wait(timeout=60)
        os.unlink(os.path.join(self.dir, "meos"))
        os.rmdir(self.dir)
        return code


class Reference:
    """tests/diff_ref.py in a process of its own, restarted when it dies."""

    def __init__(self) -> None:
        self.proc = None
        self.deaths = 0

    def call(self, tool: dict, args: dict, parsers: dict) -> dict:
        if self.proc is None:
            self.proc = subprocess.Popen(
                [sys.executable, os.path.join(HERE, "diff_ref.py")], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                env=dict(os.environ, MEOS_WAYS=WAYS, LD_PRELOAD=WAYS_PRELOAD))
        self.proc.stdin.write(json.dumps({"tool": tool, "args": args, "parsers": parsers}) + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], REFERENCE_TIMEOUT)
        if not ready:
            self.proc.kill()
            self.proc.wait()
            self.proc = None
            return {"skip": f"the reference took over {REFERENCE_TIMEOUT} s"}
        line = self.proc.stdout.readline()
        if not line:
            code = self.proc.wait()
            self.proc = None
            self.deaths += 1
            return {"died": f"the reference process died (exit code {code})"}
        return json.loads(line)

    def close(self) -> None:
        if self.proc:
            self.proc.stdin.close()
            self.proc.wait()


# The bundle's refusal of a bin, tile or split call past its bound (src/gen_bounds.c).
BOUND_REFUSAL = "over the bound of"


def names_problem(error: str) -> bool:
    """Whether a tool error says which argument is wrong, or what MEOS said."""
    return ("argument" in error or " failed: " in error or "MEOS stopped" in error
            or error.startswith("JSON-RPC:"))


def dead_bundle(error: str) -> bool:
    """Whether the node answered for a bundle that died during the call."""
    return "bundle gone" in error or "exited (signal" in error


def mutate(value, rng: random.Random):
    if not isinstance(value, str) or not value:
        return rng.choice(["", "x", -1, 0, 1e308, "{", None])
    s = list(value)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(4)
        pos = rng.randrange(len(s) + 1)
        if op == 0 and s:
            del s[min(pos, len(s) - 1)]
        elif op == 1:
            s.insert(pos, rng.choice("{}[]()@,;:-+.0123456789eE\"' xTZ"))
        elif op == 2 and s:
            s[min(pos, len(s) - 1)] = rng.choice("{}[]()@,;0129aZ ")
        else:
            s = s[:pos]
    return "".join(s)


def write_note(path: str, stats: dict, disagree: list, fuzz: dict, ref_died: list,
               unexercised: list) -> None:
    lines = [
        "# Differential test of the generated tools",
        "",
        "Written by `make -C bundles/meos diff` (tests/diff.py): every generated tool called "
        "through the node and, with the same arguments, the same function called through "
        "pymeos-cffi 1.3.0 directly. Agreement is the same value or both errors.",
        "",
        f"- tools generated: {stats['generated']}",
        f"- tools exercised (at least one call the reference could make): {stats['exercised']}",
        f"- tools agreeing on every call: {stats['agreeing']}, of which "
        f"{stats['agreeing_on_a_value']} on at least one value (the others on errors only: "
        "the corpus holds no value they accept)",
        f"- tools disagreeing: {stats['disagreeing']}",
        f"- calls: {stats['calls']} ({stats['agree_value']} equal values, "
        f"{stats['agree_error']} MEOS errors on both sides, {stats['refused']} invalid values "
        "or values of a type the function does not take, refused by the bundle before MEOS "
        f"and not sent to the reference, {stats['bounded']} bin, tile or split requests over "
        f"the bound, refused likewise, {stats['reference_skipped']} the reference could "
        "not make)",
        f"- bundle restarts seen by the node: {stats['bundle_restarts']}",
        f"- fuzz calls: {fuzz['calls']} ({fuzz['answers']} answers, {fuzz['tool_errors']} "
        f"tool errors, {len(fuzz['other'])} other)",
        "",
        "Tools not exercised: every call the corpus made was refused before MEOS, so the "
        "reference was never asked: " + (", ".join(f"`{n}`" for n in unexercised) or "none") + ".",
        "",
        "## Disagreements",
        "",
    ]
    if not disagree:
        lines.append("None.")
    for d in disagree:
        why = d.get("why") or "different answers"
        lines.append(f"- `{d['tool']}` {json.dumps(d['args'])}: node {json.dumps(d['node'])}, "
                     f"reference {json.dumps(d.get('reference'))} ({why})")
    lines += ["", "## Calls that killed the reference process", ""]
    lines += [f"- `{d['tool']}` {json.dumps(d['args'])}: the node answered "
              f"{json.dumps(d['node'])}" for d in ref_died] or ["None."]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--node", required=True)
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--match", help="only the tools whose name this regular expression finds")
    ap.add_argument("--combos", type=int, default=4)
    ap.add_argument("--report")
    ap.add_argument("--fuzz", type=int, default=0)
    ap.add_argument("--seed", type=int, default=15, help="of the fuzz mutations")
    ap.add_argument("--note", help="write the figures and every disagreement as Markdown")
    opts = ap.parse_args()

    with open(MANIFEST, encoding="utf-8") as f:
        tools = json.load(f)
    if opts.match:
        tools = [t for t in tools if re.search(opts.match, t["name"])]
    picked = tools[:: opts.every]
    log = tempfile.TemporaryFile(mode="w+")
    node = Node(opts.node, log)
    listed = node.request("tools/list", {})["result"]["tools"]
    listed_names = {t["name"] for t in listed}
    missing = [t["name"] for t in tools if "meos." + t["name"] not in listed_names]
    ref = Reference()
    stats = {"generated": len(tools), "picked": len(picked), "calls": 0, "agree_value": 0,
             "agree_error": 0, "refused": 0, "bounded": 0, "reference_skipped": 0}
    disagree, exercised, agreeing, valued, ref_died = [], set(), set(), set(), []
    start = time.monotonic()
    for tool in picked:
        tool_ok = True
        cases = combos(tool, opts.combos)
        for pname, kind in tool["params"]:
            fam = kind.split("value:")[-1]
            if cases and "value:" in kind:
                bad_args = dict(cases[0][0])
                bad = INVALID[fam][len(tool["name"]) % len(INVALID[fam])]
                bad_args[pname] = [cases[0][0][pname][0], bad] if \
                    kind.startswith("array:") and cases[0][0][pname] else bad
                cases.append((bad_args, {"invalid": pname}))
        for args, parsers in cases:
            invalid = parsers.get("invalid")
            got = node.call(tool["name"], args)
            stats["calls"] += 1
            if got.get("error", "").startswith("JSON-RPC:") or dead_bundle(got.get("error", "")):
                tool_ok = False
                disagree.append({"tool": tool["name"], "args": args, "node": got,
                                 "why": "the call did not come back as a tool answer"})
                continue
            if BOUND_REFUSAL in got.get("error", ""):
                # Asks for more pieces than the bound: MEOS is not called (it would
                # run for minutes and exhaust memory), nor is the reference.
                stats["bounded"] += 1
                continue
            read = None if invalid else read_as(tool, parsers)
            if read is None:
                # Values the function does not take are refused before MEOS, which
                # may crash on them: the reference is not asked.
                want = {"error": "(invalid input)"}
            else:
                want = ref.call(tool, args, read)
            if "died" in want:
                ref_died.append({"tool": tool["name"], "args": args, "node": got})
            if "skip" in want or "died" in want:
                stats["reference_skipped"] += 1
                if "died" in want and "error" not in got:
                    disagree.append({"tool": tool["name"], "args": args, "node": got,
                                     "reference": want})
                    tool_ok = False
                continue
            if "error" in got and want.get("error") == "(invalid input)":
                stats["refused"] += 1
                continue
            exercised.add(tool["name"])
            if "error" in got and "error" in want:
                stats["agree_error"] += 1
            elif "result" in got and "result" in want and same(got["result"], want["result"]):
                stats["agree_value"] += 1
                valued.add(tool["name"])
            else:
                tool_ok = False
                disagree.append({"tool": tool["name"], "args": args, "node": got,
                                 "reference": want})
        if tool_ok and tool["name"] in exercised:
            agreeing.add(tool["name"])

    fuzz = {"calls": 0, "answers": 0, "tool_errors": 0, "other": []}
    rng = random.Random(opts.seed)
    for n in range(opts.fuzz):
        tool = picked[n % len(picked)]
        cases = combos(tool, 1)
        if not cases:
            continue
        args = {k: mutate(v, rng) if rng.random() < 0.7 else v for k, v in cases[0][0].items()}
        got = node.call(tool["name"], args)
        fuzz["calls"] += 1
        if "result" in got:
            fuzz["answers"] += 1
        elif dead_bundle(got["error"]) or (got["error"].startswith("JSON-RPC:") and
                                           "invalid" not in got["error"].lower()):
            fuzz["other"].append({"tool": tool["name"], "args": args, "error": got["error"]})
        elif not names_problem(got["error"]):
            fuzz["other"].append({"tool": tool["name"], "args": args, "error": got["error"]})
        else:
            fuzz["tool_errors"] += 1

    code = node.close()
    log.seek(0)
    node_log = log.read()
    restarts = [line for line in node_log.splitlines()
                if "restart" in line.lower() or "exited" in line.lower()]
    stats.update({"exercised": len(exercised), "agreeing": len(agreeing),
                  "agreeing_on_a_value": len(valued),
                  "disagreeing": len({d["tool"] for d in disagree}),
                  "reference_deaths": ref.deaths, "seconds": round(time.monotonic() - start, 1),
                  "node_exit": code, "bundle_restarts": len(restarts),
                  "not_listed": missing})
    ref.close()
    report = {"stats": stats, "disagree": disagree, "fuzz": fuzz, "restarts": restarts,
              "node_log": node_log.splitlines()[-200:],
              "reference_died": ref_died}
    if opts.report:
        with open(opts.report, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
    if opts.note:
        unexercised = sorted(t["name"] for t in picked if t["name"] not in exercised)
        write_note(opts.note, stats, disagree, fuzz, ref_died, unexercised)
    print(json.dumps(stats))
    if opts.fuzz:
        print(json.dumps({k: v if k != "other" else len(v) for k, v in fuzz.items()}))
    for d in disagree[:20]:
        print("DISAGREE", json.dumps(d)[:400])
    ok = not disagree and not restarts and not missing and not fuzz["other"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
